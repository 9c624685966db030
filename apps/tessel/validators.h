// Option checks shared by subcommands: CLI11's PositiveNumber prints its range up to DBL_MAX (300 digits); these
// say what is expected.
#pragma once

#include <CLI/CLI.hpp>

#include <exception>
#include <optional>
#include <string>

#include "engine/sweep/spec.h"
#include "models/core/error.h"

namespace tessel {

inline const CLI::Validator k_positive_count(
    [](std::string& v) -> std::string {
        try {
            size_t used = 0;
            const long long n = std::stoll(v, &used);
            if (used == v.size() && n >= 1 && n <= 1000000) return {};
        } catch (const std::exception&) {
        }
        return "expected a whole number from 1 to 1000000, got '" + v + "'";
    },
    "INT>=1");
inline const CLI::Validator k_nonnegative_count(
    [](std::string& v) -> std::string {
        try {
            size_t used = 0;
            const long long n = std::stoll(v, &used);
            if (used == v.size() && n >= 0 && n <= 1000000) return {};
        } catch (const std::exception&) {
        }
        return "expected a whole number from 0 to 1000000, got '" + v + "'";
    },
    "INT>=0");
inline const CLI::Validator k_positive_seconds(
    [](std::string& v) -> std::string {
        try {
            size_t used = 0;
            const double x = std::stod(v, &used);
            if (used == v.size() && x > 0 && x <= 86400) return {};
        } catch (const std::exception&) {
        }
        return "expected seconds above 0 and at most 86400, got '" + v + "'";
    },
    "SECONDS");

inline const CLI::Validator k_positive_amount(
    [](std::string& v) -> std::string {
        try {
            size_t used = 0;
            const double x = std::stod(v, &used);
            if (used == v.size() && x > 0 && x <= 1e30) return {};  // NaN and infinity fail both comparisons
        } catch (const std::exception&) {
        }
        return "expected a number above 0 and at most 1e30, got '" + v + "'";
    },
    "NUMBER>0");

/// A --timeout value ("30s", "10min") in seconds, or none when not given; a bad one is an input_error naming it.
inline std::optional<double> timeout_option(const std::string& text) {
    if (text.empty()) return std::nullopt;
    try {
        return sweep::parse_duration(text);
    } catch (const input_error& e) {
        throw input_error("--timeout: " + e.message());
    }
}

}  // namespace tessel
