#include "models/core/checked.h"

#include <cstdio>
#include <limits>

namespace tessel {

namespace {

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return buf;
}

std::string shape_text(const std::vector<std::int64_t>& s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
}

}  // namespace

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& what, const source_location& where) {
    if (a < 0 || b < 0)
        fail(what + ": " + std::to_string(a) + " x " + std::to_string(b) + " has a negative factor", where);
    if (a != 0 && b > k_max_count / a)
        fail(what + ": " + std::to_string(a) + " x " + std::to_string(b) + " is more than 2^53 (" +
                 std::to_string(k_max_count) + "), the largest count tessel handles exactly",
             where);
    return a * b;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, const std::string& what, const source_location& where) {
    if (a < 0 || b < 0)
        fail(what + ": " + std::to_string(a) + " + " + std::to_string(b) + " has a negative term", where);
    if (a > k_max_count - b)
        fail(what + ": " + std::to_string(a) + " + " + std::to_string(b) + " is more than 2^53 (" +
                 std::to_string(k_max_count) + "), the largest count tessel handles exactly",
             where);
    return a + b;
}

std::int64_t checked_elements(const std::vector<std::int64_t>& shape, const std::string& what,
                              const source_location& where) {
    std::int64_t n = 1;
    for (auto d : shape)
        if (d < 0) fail(what + ": shape " + shape_text(shape) + " has a negative dimension", where);
    for (auto d : shape) {
        if (d == 0) return 0;
        if (n > k_max_count / d)
            fail(what + ": shape " + shape_text(shape) + " has more than 2^53 (" + std::to_string(k_max_count) +
                     ") elements, more than tessel can count exactly",
                 where);
        n *= d;
    }
    return n;
}

std::int64_t checked_count(double v, const std::string& what, const source_location& where) {
    if (std::isnan(v)) fail(what + ": expected a whole number, got NaN", where);
    if (v < 0) fail(what + ": must not be negative, got " + num(v), where);
    if (v > static_cast<double>(k_max_count))
        fail(what + ": " + num(v) + " is more than 2^53 (" + std::to_string(k_max_count) +
                 "), the largest count tessel handles exactly",
             where);
    if (v != std::floor(v)) fail(what + ": expected a whole number, got " + num(v), where);
    return static_cast<std::int64_t>(v);
}

int checked_int(double v, const std::string& what, const source_location& where) {
    if (std::isnan(v)) fail(what + ": expected a whole number, got NaN", where);
    constexpr double lim = std::numeric_limits<int>::max();
    if (v > lim || v < -lim)
        fail(what + ": " + num(v) + " is out of range (at most " + num(lim) + " in magnitude)", where);
    if (v != std::floor(v)) fail(what + ": expected a whole number, got " + num(v), where);
    return static_cast<int>(v);
}

}  // namespace tessel
