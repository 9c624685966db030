// Physical quantities with their units, as they appear in YAML ("1.1GHz", "48KiB", "3.35TB/s", "32B/cycle",
// "30ns", "2cycles"), and simulated time. Time inside the simulator is an integer count of femtoseconds (the
// SystemC time resolution tessel sets), so every run is exact and deterministic; durations round up, so a
// simulated transfer or computation is never faster than its physical bound.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessel {

/// Simulated time in femtoseconds. 2^64 fs is about 5.1 hours of simulated time.
using tick = std::uint64_t;
constexpr double ticks_per_second = 1e15;
constexpr tick max_tick = ~tick{0};

/// Seconds to ticks, rounding up (values within 1e-9 relative of an integer count are taken as exact). Inline
/// (defined below): the exchange, tile and memory models call it once per message or block.
inline tick seconds_to_ticks(double seconds);
/// Throws the input_error for `seconds` of simulated time past the representable end.
[[noreturn]] void time_unrepresentable(double seconds);
/// Throws the input_error for a simulated time past the representable end (a reservation of `dur` from
/// `start` that would wrap): a rate so small, or an amount so large, that the run cannot be simulated.
[[noreturn]] void time_overflow(tick start, tick dur);
double ticks_to_seconds(tick t);

/// What a number measures. Cycles and per-cycle values need a clock to become absolute.
enum class dimension : std::uint8_t {
    scalar,
    time,
    cycles,
    frequency,
    size,
    bandwidth,
    size_per_cycle,
    energy,
    power,
    energy_per_size
};

const char* dimension_name(dimension d);

/// A number with its dimension, in canonical units: seconds, cycles, hertz, bytes, bytes/s, bytes/cycle, joules,
/// watts, joules/byte.
struct quantity {
    double value = 0;
    dimension dim = dimension::scalar;
};

/// Parses "1.1GHz", "48 KiB", "3.35TB/s", "32B/cycle", "30ns", "2cycles", "1.5M" (scalar with SI prefix), "0.5pJ",
/// "40W", "12pJ/B", "3.9pJ/bit".
/// Throws input_error (without a location; callers add it) naming the bad unit and what would be valid.
quantity parse_quantity(std::string_view text);
struct source_location;
/// The same, for a value read from a file: the error is "WHAT: why" at `where`.
quantity parse_quantity(std::string_view text, const std::string& what, const source_location& where);

/// Formats with a readable prefix: "1.1 GHz", "48 KiB", "3.35 TB/s", "30 ns".
std::string format_quantity(const quantity& q);
std::string format_time(double seconds);
std::string format_bytes(double bytes);
/// A capacity set beside decimal amounts: "220 MiB (230.7 MB)" when its binary form would hide the difference.
std::string format_capacity(double bytes);
std::string format_rate(double per_second, std::string_view unit);
std::string format_energy(double joules);  // "1.2 mJ"
std::string format_power(double watts);    // "412 W"  // "312 TFLOP/s" style
std::string format_number(double v, int significant = 4);

/// A clock: converts cycle counts into ticks.
struct clock_domain {
    double hz = 1e9;
    double period_seconds() const { return 1.0 / hz; }
    /// Ticks for n cycles, rounded up.
    tick cycles(double n) const;
    /// Cycles elapsed in t ticks (fractional).
    double to_cycles(tick t) const;
};

/// Ticks of a quantity that is a time or a number of cycles of `clk` (a bare 0 counts as a time), such as a
/// run's quantum. Throws input_error (without a location; callers add it): "WHAT: must not be negative, got
/// 'TEXT'" or "WHAT: expected EXPECTED, got 'TEXT'".
tick time_or_cycles(const quantity& q, const clock_domain& clk, const std::string& what, const std::string& text,
                    const std::string& expected);

/// A time parameter: absolute ("30ns") or in cycles of the owner's clock ("2cycles").
struct duration {
    quantity q{0, dimension::time};
    tick to_ticks(const clock_domain& clk) const;
    double to_cycles(const clock_domain& clk) const;
};

/// A bandwidth parameter: absolute ("3.35TB/s") or per cycle of the owner's clock ("32B/cycle").
struct bandwidth {
    quantity q{0, dimension::bandwidth};
    double bytes_per_second(const clock_domain& clk) const;
};

/// A clock frequency parameter ("1.1GHz").
struct frequency {
    quantity q{1e9, dimension::frequency};
    double hz() const { return q.value; }
    clock_domain clock() const { return clock_domain{q.value}; }
};

/// An energy per action ("0.5pJ": one MAC, one row activation), in joules.
struct energy {
    quantity q{0, dimension::energy};
    double joules() const { return q.value; }
};

/// A power ("40W"), in watts.
struct power {
    quantity q{0, dimension::power};
    double watts() const { return q.value; }
};

/// An energy per byte moved or stored ("12pJ/B", "3.9pJ/bit"), in joules per byte.
struct energy_per_byte {
    quantity q{0, dimension::energy_per_size};
    double joules() const { return q.value; }
};

/// A size parameter ("48KiB"); a whole number of bytes.
struct byte_size {
    quantity q{0, dimension::size};
    std::uint64_t bytes() const { return static_cast<std::uint64_t>(q.value); }
};

/// Whole units (cycles, tiles, waves) that hold a / b: rounded up, with floating-point dust below 1e-12 of a unit
/// ignored, so an exact multiple is not rounded up to one more.
inline double ceil_div(double a, double b) { return std::ceil(a / b - 1e-12); }

/// Femtoseconds to ticks, rounded up, exact for whole counts (the hot-path form of seconds_to_ticks:
/// callers precompute femtoseconds per byte or per cycle once).
inline tick fs_to_ticks(double fs) {
    if (!(fs > 0)) return 0;
    const tick below = static_cast<tick>(fs);
    const double frac = fs - static_cast<double>(below);
    const double tol = 1e-9 * (fs > 1.0 ? fs : 1.0);
    return frac <= tol ? below : below + 1;
}

inline tick seconds_to_ticks(double seconds) {
    if (!(seconds >= 0)) return 0;
    const double fs = seconds * ticks_per_second;
    if (fs >= 1.8e19) time_unrepresentable(seconds);
    return fs_to_ticks(fs);
}

/// Ticks to move `bytes` at `bytes_per_second`, rounded up.
inline tick transfer_ticks(double bytes, double bytes_per_second) {
    if (bytes <= 0) return 0;
    return seconds_to_ticks(bytes / bytes_per_second);
}

}  // namespace tessel
