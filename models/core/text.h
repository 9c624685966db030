// Small text helpers shared by the writers of statistics, traces and reports.
#pragma once

#include <string>
#include <vector>

namespace tessel {

/// Splits a hierarchical name at dots outside brackets: "chip.tile[1,2].pe" -> {chip, tile[1,2], pe}.
std::vector<std::string> split_path(const std::string& path);

/// The group a unit belongs to in reports: its indices starred ("tile[3,2].pe" -> "tile[*].pe").
std::string group_name(const std::string& path);

/// Escapes a string for use inside JSON double quotes (quotes and backslashes escaped, control characters as \uXXXX).
std::string json_escape(const std::string& s);

}  // namespace tessel
