// Units in values: parsing, printing, and clear errors for bad units.
#include <gtest/gtest.h>

#include "models/core/error.h"
#include "models/core/units.h"

using namespace tessel;

TEST(units, parses_the_forms_the_yaml_uses) {
    EXPECT_DOUBLE_EQ(parse_quantity("1.1GHz").value, 1.1e9);
    EXPECT_EQ(parse_quantity("1.1GHz").dim, dimension::frequency);
    EXPECT_DOUBLE_EQ(parse_quantity("48KiB").value, 48 * 1024.0);
    EXPECT_EQ(parse_quantity("48KiB").dim, dimension::size);
    EXPECT_DOUBLE_EQ(parse_quantity("3.35TB/s").value, 3.35e12);
    EXPECT_EQ(parse_quantity("3.35TB/s").dim, dimension::bandwidth);
    EXPECT_DOUBLE_EQ(parse_quantity("32B/cycle").value, 32);
    EXPECT_EQ(parse_quantity("32B/cycle").dim, dimension::size_per_cycle);
    EXPECT_DOUBLE_EQ(parse_quantity("30ns").value, 30e-9);
    EXPECT_EQ(parse_quantity("2cycles").dim, dimension::cycles);
    EXPECT_DOUBLE_EQ(parse_quantity("2cycles").value, 2);
    EXPECT_DOUBLE_EQ(parse_quantity("1cycle").value, 1);
    EXPECT_DOUBLE_EQ(parse_quantity("512Gbps").value, 64e9);
    EXPECT_DOUBLE_EQ(parse_quantity("220Pb/s").value, 220e15 / 8);
    EXPECT_DOUBLE_EQ(parse_quantity("4.1G").value, 4.1e9);
    EXPECT_DOUBLE_EQ(parse_quantity(" 16 ").value, 16);
    EXPECT_DOUBLE_EQ(parse_quantity("1.5 MiB").value, 1.5 * 1048576);
}

TEST(units, energies_and_powers_come_in_joules_watts_and_joules_per_byte) {
    EXPECT_DOUBLE_EQ(parse_quantity("0.5pJ").value, 0.5e-12);
    EXPECT_EQ(parse_quantity("0.5pJ").dim, dimension::energy);
    EXPECT_DOUBLE_EQ(parse_quantity("9.91nJ").value, 9.91e-9);
    EXPECT_DOUBLE_EQ(parse_quantity("40W").value, 40);
    EXPECT_EQ(parse_quantity("15kW").dim, dimension::power);
    EXPECT_DOUBLE_EQ(parse_quantity("15kW").value, 15e3);
    EXPECT_DOUBLE_EQ(parse_quantity("1mW").value, 1e-3);
    EXPECT_EQ(parse_quantity("12pJ/B").dim, dimension::energy_per_size);
    EXPECT_DOUBLE_EQ(parse_quantity("12pJ/B").value, 12e-12);
    // Per bit is eight times per byte; per KiB a 1024th.
    EXPECT_DOUBLE_EQ(parse_quantity("3.9pJ/bit").value, 8 * 3.9e-12);
    EXPECT_DOUBLE_EQ(parse_quantity("3.9pJ/b").value, 8 * 3.9e-12);
    EXPECT_DOUBLE_EQ(parse_quantity("1nJ/KiB").value, 1e-9 / 1024);
    EXPECT_EQ(format_quantity(parse_quantity("0.5pJ")), "500 fJ");
    EXPECT_EQ(format_quantity(parse_quantity("700W")), "700 W");
    EXPECT_EQ(format_energy(2.5e-3), "2.5 mJ");
    EXPECT_THROW(parse_quantity("3pJ/s"), input_error);
}

TEST(units, bad_units_name_the_unit_and_suggest) {
    try {
        parse_quantity("1.1Ghz");
        FAIL() << "expected an error";
    } catch (const input_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("unknown unit 'Ghz'"), std::string::npos) << m;
        EXPECT_NE(m.find("did you mean 'GHz'"), std::string::npos) << m;
    }
    EXPECT_THROW(parse_quantity("fast"), input_error);
    EXPECT_THROW(parse_quantity("3TB/hour"), input_error);
    EXPECT_THROW(parse_quantity(""), input_error);
    try {
        parse_quantity("3tb/S");
        FAIL();
    } catch (const input_error& e) {
        EXPECT_NE(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
    }
}

TEST(units, prints_readable_values) {
    EXPECT_EQ(format_quantity(parse_quantity("1.1GHz")), "1.1 GHz");
    EXPECT_EQ(format_quantity(parse_quantity("48KiB")), "48 KiB");
    EXPECT_EQ(format_quantity(parse_quantity("3.35TB/s")), "3.35 TB/s");
    EXPECT_EQ(format_quantity(parse_quantity("30ns")), "30 ns");
    EXPECT_EQ(format_quantity(parse_quantity("2cycles")), "2 cycles");
    EXPECT_EQ(format_quantity(parse_quantity("32B/cycle")), "32 B/cycle");
    EXPECT_EQ(format_bytes(1000), "1 KB");
    EXPECT_EQ(format_time(1.5e-6), "1.5 us");
}

TEST(units, time_is_integer_femtoseconds_rounded_up) {
    EXPECT_EQ(seconds_to_ticks(1e-9), 1000000u);
    const clock_domain ghz{1e9};
    EXPECT_EQ(ghz.cycles(3), 3000000u);
    const clock_domain odd{1.1e9};
    // 909090.909... fs per cycle: rounded up, never faster than the clock.
    EXPECT_EQ(odd.cycles(1), 909091u);
    EXPECT_EQ(odd.cycles(11), 10000000u);  // exactly 10 ns
    // 256 B at 3.35 TB/s = 76.417... ps
    EXPECT_EQ(transfer_ticks(256, 3.35e12), 76417u + 1);
    duration d;
    d.q = parse_quantity("2cycles");
    EXPECT_EQ(d.to_ticks(ghz), 2000000u);
    bandwidth b;
    b.q = parse_quantity("32B/cycle");
    EXPECT_DOUBLE_EQ(b.bytes_per_second(ghz), 32e9);
}
