#include "models/core/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "models/core/error.h"

namespace tessel {

void time_unrepresentable(double seconds) {
    throw input_error("simulated time " + format_time(seconds) +
                      " exceeds what tessel can represent (about 5.1 hours at femtosecond resolution)");
}

void time_overflow(tick start, tick dur) {
    throw input_error(
        "simulated time runs past what tessel can represent (about 5.1 hours at femtosecond resolution): a "
        "resource busy from " +
        format_time(ticks_to_seconds(start)) + " for another " + format_time(ticks_to_seconds(dur)) +
        "; a bandwidth or rate is far too small, or an amount far too large");
}

double ticks_to_seconds(tick t) { return static_cast<double>(t) / ticks_per_second; }

const char* dimension_name(dimension d) {
    switch (d) {
        case dimension::scalar:
            return "number";
        case dimension::time:
            return "time";
        case dimension::cycles:
            return "cycle count";
        case dimension::frequency:
            return "frequency";
        case dimension::size:
            return "size";
        case dimension::bandwidth:
            return "bandwidth";
        case dimension::size_per_cycle:
            return "bandwidth per cycle";
        case dimension::energy:
            return "energy";
        case dimension::power:
            return "power";
        case dimension::energy_per_size:
            return "energy per size";
    }
    return "?";
}

namespace {

struct unit_def {
    const char* name;
    double factor;
    dimension dim;
};

// Sizes: decimal (KB = 1000 B) and binary (KiB = 1024 B) bytes; lowercase b is bits.
const std::vector<unit_def>& size_units() {
    static const std::vector<unit_def> u = {
        {"B", 1, dimension::size},
        {"KB", 1e3, dimension::size},
        {"kB", 1e3, dimension::size},
        {"MB", 1e6, dimension::size},
        {"GB", 1e9, dimension::size},
        {"TB", 1e12, dimension::size},
        {"PB", 1e15, dimension::size},
        {"KiB", 1024.0, dimension::size},
        {"MiB", 1048576.0, dimension::size},
        {"GiB", 1073741824.0, dimension::size},
        {"TiB", 1099511627776.0, dimension::size},
        {"PiB", 1125899906842624.0, dimension::size},
        {"b", 0.125, dimension::size},
        {"Kb", 125, dimension::size},
        {"kb", 125, dimension::size},
        {"Mb", 1.25e5, dimension::size},
        {"Gb", 1.25e8, dimension::size},
        {"Tb", 1.25e11, dimension::size},
        {"Pb", 1.25e14, dimension::size},
    };
    return u;
}

const std::vector<unit_def>& other_units() {
    static const std::vector<unit_def> u = {
        {"s", 1, dimension::time},
        {"ms", 1e-3, dimension::time},
        {"us", 1e-6, dimension::time},
        {"\xC2\xB5s", 1e-6, dimension::time},
        {"ns", 1e-9, dimension::time},
        {"ps", 1e-12, dimension::time},
        {"fs", 1e-15, dimension::time},
        {"cycle", 1, dimension::cycles},
        {"cycles", 1, dimension::cycles},
        {"Hz", 1, dimension::frequency},
        {"kHz", 1e3, dimension::frequency},
        {"MHz", 1e6, dimension::frequency},
        {"GHz", 1e9, dimension::frequency},
        {"THz", 1e12, dimension::frequency},
        {"J", 1, dimension::energy},
        {"mJ", 1e-3, dimension::energy},
        {"uJ", 1e-6, dimension::energy},
        {"\xC2\xB5J", 1e-6, dimension::energy},
        {"nJ", 1e-9, dimension::energy},
        {"pJ", 1e-12, dimension::energy},
        {"fJ", 1e-15, dimension::energy},
        {"W", 1, dimension::power},
        {"mW", 1e-3, dimension::power},
        {"kW", 1e3, dimension::power},
        {"MW", 1e6, dimension::power},
        // Dimensionless counts with SI prefixes ("4.1G" multiply-accumulates).
        {"k", 1e3, dimension::scalar},
        {"K", 1e3, dimension::scalar},
        {"M", 1e6, dimension::scalar},
        {"G", 1e9, dimension::scalar},
        {"T", 1e12, dimension::scalar},
        {"P", 1e15, dimension::scalar},
    };
    return u;
}

bool equal_nocase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

const unit_def* find_unit(const std::vector<unit_def>& table, std::string_view name) {
    for (const auto& u : table)
        if (name == u.name) return &u;
    return nullptr;
}

std::string suggestion(std::string_view bad) {
    for (const auto* table : {&size_units(), &other_units()})
        for (const auto& u : *table)
            if (equal_nocase(bad, u.name)) return std::string(" (did you mean '") + u.name + "'?)";
    // Bandwidth spelled with a case slip: "gb/S", "TB/S".
    const auto slash = bad.find('/');
    if (slash != std::string_view::npos) {
        const std::string_view num = bad.substr(0, slash), den = bad.substr(slash + 1);
        for (const auto& u : size_units())
            if (equal_nocase(num, u.name) && (equal_nocase(den, "s") || equal_nocase(den, "cycle")))
                return std::string(" (did you mean '") + u.name + "/" + (equal_nocase(den, "s") ? "s" : "cycle") +
                       "'?)";
    }
    return {};
}

[[noreturn]] void bad_unit(std::string_view text, std::string_view unit) {
    throw input_error(
        "unknown unit '" + std::string(unit) + "' in '" + std::string(text) + "'" + suggestion(unit) +
        "; expected a number with a unit such as 1.1GHz, 48KiB, 3.35TB/s, 32B/cycle, 30ns, 2cycles, 0.5pJ, "
        "12pJ/B or 40W");
}

}  // namespace

quantity parse_quantity(std::string_view text, const std::string& what, const source_location& where) {
    try {
        return parse_quantity(text);
    } catch (const input_error& e) {
        throw input_error(what + ": " + e.message(), where);
    }
}

quantity parse_quantity(std::string_view text) {
    std::string s(text);
    // Trim.
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t begin = 0;
    while (begin < s.size() && std::isspace(static_cast<unsigned char>(s[begin]))) ++begin;
    s = s.substr(begin);
    if (s.empty()) throw input_error("empty value where a number was expected");

    const char* start = s.c_str();
    char* end = nullptr;
    const double value = std::strtod(start, &end);
    if (end == start || !std::isfinite(value)) {
        throw input_error("'" + std::string(text) + "' is not a number" +
                          " (expected a number with an optional unit, e.g. 1.1GHz, 48KiB, 30ns)");
    }
    std::string unit(end);
    size_t u0 = 0;
    while (u0 < unit.size() && unit[u0] == ' ') ++u0;
    unit = unit.substr(u0);
    if (unit.empty()) return {value, dimension::scalar};

    if (const unit_def* u = find_unit(other_units(), unit)) return {value * u->factor, u->dim};
    if (const unit_def* u = find_unit(size_units(), unit)) return {value * u->factor, u->dim};

    // Bandwidth: <size>/s, <size>/cycle, <bits>ps ("Gbps").
    const auto slash = unit.find('/');
    if (slash != std::string::npos) {
        const std::string num = unit.substr(0, slash), den = unit.substr(slash + 1);
        // Energy per size: "12pJ/B", "3.9pJ/bit".
        if (const unit_def* e = find_unit(other_units(), num); e && e->dim == dimension::energy) {
            const unit_def* per = den == "bit" ? find_unit(size_units(), "b") : find_unit(size_units(), den);
            if (!per) bad_unit(text, unit);
            return {value * e->factor / per->factor, dimension::energy_per_size};
        }
        const unit_def* u = find_unit(size_units(), num);
        if (!u) bad_unit(text, unit);
        if (den == "s") return {value * u->factor, dimension::bandwidth};
        if (den == "cycle" || den == "clk") return {value * u->factor, dimension::size_per_cycle};
        bad_unit(text, unit);
    }
    // Bits per second: "Gbps", "512Gbps".
    if (unit.size() > 2 && unit.compare(unit.size() - 2, 2, "ps") == 0) {
        const std::string bits = unit.substr(0, unit.size() - 2);
        const unit_def* u = find_unit(size_units(), bits);
        if (u && bits.back() == 'b') return {value * u->factor, dimension::bandwidth};
    }
    bad_unit(text, unit);
}

std::string format_number(double v, int significant) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", significant, v);
    return buf;
}

namespace {
std::string scaled(double v, const std::vector<std::pair<double, const char*>>& steps, const char* sep = " ") {
    // steps in descending factor order; picks the largest factor not exceeding |v|.
    const double a = std::fabs(v);
    for (const auto& [factor, name] : steps)
        if (a >= factor * 0.9995) return format_number(v / factor) + sep + name;
    return format_number(v / steps.back().first) + sep + steps.back().second;
}

std::string decimal_bytes(double bytes) {
    return scaled(bytes, {{1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}, {1, "B"}});
}
}  // namespace

std::string format_time(double seconds) {
    if (seconds == 0) return "0 s";
    return scaled(seconds, {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}, {1e-12, "ps"}, {1e-15, "fs"}});
}

std::string format_bytes(double bytes) {
    if (bytes == 0) return "0 B";
    const double a = std::fabs(bytes);
    // Binary prefixes when the value is an exact binary multiple, decimal otherwise.
    const std::vector<std::pair<double, const char*>> binary = {
        {1125899906842624.0, "PiB"}, {1099511627776.0, "TiB"}, {1073741824.0, "GiB"},
        {1048576.0, "MiB"},          {1024.0, "KiB"},          {1, "B"}};
    // The largest binary unit that fits; used when the value is a whole number of it, else decimal units.
    for (const auto& [factor, name] : binary)
        if (a >= factor && factor > 1) {
            if (std::fmod(a, factor) == 0) return format_number(bytes / factor, 6) + " " + name;
            break;
        }
    return decimal_bytes(bytes);
}

std::string format_capacity(double bytes) {
    const std::string binary = format_bytes(bytes);
    const std::string decimal = decimal_bytes(bytes);
    return binary == decimal ? binary : binary + " (" + decimal + ")";
}

std::string format_rate(double per_second, std::string_view unit) {
    const std::string u(unit);
    static const std::vector<std::pair<double, std::string>> prefixes = {
        {1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "K"}, {1, ""}};
    const double a = std::fabs(per_second);
    for (const auto& [factor, p] : prefixes)
        if (a >= factor * 0.9995 || factor == 1) return format_number(per_second / factor) + " " + p + u;
    return format_number(per_second) + " " + u;
}

std::string format_energy(double joules) {
    if (joules == 0) return "0 J";
    return scaled(
        joules,
        {{1e6, "MJ"}, {1e3, "kJ"}, {1, "J"}, {1e-3, "mJ"}, {1e-6, "uJ"}, {1e-9, "nJ"}, {1e-12, "pJ"}, {1e-15, "fJ"}});
}

std::string format_power(double watts) {
    if (watts == 0) return "0 W";
    return scaled(watts, {{1e6, "MW"}, {1e3, "kW"}, {1, "W"}, {1e-3, "mW"}, {1e-6, "uW"}});
}

std::string format_quantity(const quantity& q) {
    switch (q.dim) {
        case dimension::scalar:
            return format_number(q.value, 6);
        case dimension::time:
            return format_time(q.value);
        case dimension::cycles:
            return format_number(q.value, 6) + (q.value == 1 ? " cycle" : " cycles");
        case dimension::frequency:
            return scaled(q.value, {{1e12, "THz"}, {1e9, "GHz"}, {1e6, "MHz"}, {1e3, "kHz"}, {1, "Hz"}});
        case dimension::size:
            return format_bytes(q.value);
        case dimension::bandwidth:
            return scaled(q.value,
                          {{1e15, "PB/s"}, {1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}, {1, "B/s"}});
        case dimension::size_per_cycle:
            return format_number(q.value, 6) + " B/cycle";
        case dimension::energy:
            return format_energy(q.value);
        case dimension::power:
            return format_power(q.value);
        case dimension::energy_per_size:
            return format_energy(q.value) + "/B";
    }
    return format_number(q.value);
}

tick clock_domain::cycles(double n) const { return seconds_to_ticks(n / hz); }
double clock_domain::to_cycles(tick t) const { return ticks_to_seconds(t) * hz; }

tick time_or_cycles(const quantity& q, const clock_domain& clk, const std::string& what, const std::string& text,
                    const std::string& expected) {
    const bool time = q.dim == dimension::time || (q.dim == dimension::scalar && q.value == 0);
    if (!time && q.dim != dimension::cycles)
        throw input_error(what + ": expected " + expected + ", got '" + text + "'");
    if (q.value < 0) throw input_error(what + ": must not be negative, got '" + text + "'");
    return time ? seconds_to_ticks(q.value) : clk.cycles(q.value);
}

tick duration::to_ticks(const clock_domain& clk) const {
    return q.dim == dimension::cycles ? clk.cycles(q.value) : seconds_to_ticks(q.value);
}
double duration::to_cycles(const clock_domain& clk) const {
    return q.dim == dimension::cycles ? q.value : q.value * clk.hz;
}
double bandwidth::bytes_per_second(const clock_domain& clk) const {
    return q.dim == dimension::size_per_cycle ? q.value * clk.hz : q.value;
}

}  // namespace tessel
