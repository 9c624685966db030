// Checked arithmetic (models/core/checked.h) and resource budgets (models/core/limits.h): overflow, NaN and
// nonsense are input errors naming what was computed, never a wrapped number.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>

#include "models/core/checked.h"
#include "models/core/limits.h"

using namespace tessel;

namespace {

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const input_error& e) {
        return e.what();
    }
    return "(no error)";
}

constexpr std::int64_t two_to(int n) { return std::int64_t{1} << n; }

TEST(checked, products_up_to_two_to_the_53_are_exact_and_beyond_are_refused) {
    EXPECT_EQ(checked_mul(two_to(26), two_to(27), "x"), two_to(53));
    EXPECT_EQ(checked_mul(0, two_to(62), "x"), 0);
    EXPECT_EQ(message_of([] { checked_mul(two_to(27), two_to(27), "gemm m x n"); }),
              "gemm m x n: 134217728 x 134217728 is more than 2^53 (9007199254740992), the largest count tessel "
              "handles exactly");
    EXPECT_EQ(message_of([] { checked_mul(-1, 2, "x"); }), "x: -1 x 2 has a negative factor");
    EXPECT_EQ(checked_add(two_to(52), two_to(52), "x"), two_to(53));
    EXPECT_EQ(
        message_of([] { checked_add(two_to(53), 1, "bytes"); }),
        "bytes: 9007199254740992 + 1 is more than 2^53 (9007199254740992), the largest count tessel handles exactly");
}

TEST(checked, a_shape_of_2_to_the_32_squared_is_refused_not_wrapped_to_zero) {
    // 2^32 x 2^32 = 2^64 wraps to 0 in 64 bits: the 0-FLOP conv and 0-parameter GEMM of issue 16.
    EXPECT_EQ(message_of([] {
                  checked_elements({4294967296, 4294967296}, "tensor 'a'");
              }),
              "tensor 'a': shape [4294967296, 4294967296] has more than 2^53 (9007199254740992) elements, more than "
              "tessel can "
              "count exactly");
    EXPECT_EQ(checked_elements({}, "scalar"), 1);
    EXPECT_EQ(checked_elements({64, 0, two_to(60)}, "empty"), 0)
        << "a zero dimension makes the tensor empty, whatever follows";
    EXPECT_EQ(checked_elements({3, 224, 224}, "image"), 3 * 224 * 224);
    EXPECT_EQ(message_of([] { checked_elements({4, -1}, "t"); }), "t: shape [4, -1] has a negative dimension");
}

TEST(checked, counts_from_doubles_must_be_whole_finite_and_in_range) {
    EXPECT_EQ(checked_count(65536, "bytes"), 65536);
    EXPECT_EQ(message_of([] { checked_count(std::nan(""), "bytes"); }), "bytes: expected a whole number, got NaN");
    EXPECT_EQ(message_of([] { checked_count(-1, "bytes"); }), "bytes: must not be negative, got -1");
    EXPECT_EQ(message_of([] { checked_count(1.5, "steps"); }), "steps: expected a whole number, got 1.5");
    EXPECT_EQ(message_of([] { checked_count(1e30, "gemm.m"); }),
              "gemm.m: 1e+30 is more than 2^53 (9007199254740992), the largest count tessel handles exactly");
    EXPECT_EQ(message_of([] { checked_count(std::numeric_limits<double>::infinity(), "x"); }),
              "x: inf is more than 2^53 (9007199254740992), the largest count tessel handles exactly");
}

TEST(limits, clocks_outside_1hz_to_10thz_are_typos) {
    EXPECT_EQ(clock_out_of_range(1.1e9), "");
    EXPECT_EQ(clock_out_of_range(1e13), "") << "10 THz itself is accepted";
    EXPECT_EQ(clock_out_of_range(1e30),
              "1e+18 THz is above 10 THz, the fastest clock tessel simulates (a cycle must span at least 100 fs)");
    EXPECT_EQ(clock_out_of_range(0.5), "0.5 Hz is below 1 Hz, the slowest clock tessel simulates");
}

TEST(limits, set_by_name_refuses_unknown_names_and_nonsense_values) {
    resource_limits l;
    EXPECT_EQ(l.steps, 2e7);
    l.set("steps=2e8");
    EXPECT_EQ(l.steps, 2e8);
    l.set("sim_seconds=2000s");
    EXPECT_EQ(l.sim_seconds, 2000);
    EXPECT_EQ(message_of([&] { l.set("sim_seconds=1e30"); }),
              "--limit sim_seconds=1e30: at most 18000 (simulated time ends at about 5.1 hours, picosecond ticks in "
              "64 bits)");
    EXPECT_EQ(l.sim_seconds, 2000) << "a refused value leaves the limit as it was";
    l.set("sim_seconds=18000");
    EXPECT_EQ(l.sim_seconds, 18000);
    EXPECT_EQ(
        message_of([&] { l.set("stepz=4"); }),
        "--limit stepz=4: no such limit (did you mean 'steps'?); limits: modules, ops, steps, packets, sim_seconds");
    EXPECT_EQ(message_of([&] { l.set("steps=-4"); }), "--limit steps=-4: must be a number above 0");
    EXPECT_EQ(message_of([&] { l.set("steps"); }),
              "--limit 'steps': expected NAME=VALUE, e.g. --limit steps=2e8; limits: modules, ops, steps, packets, "
              "sim_seconds");
    EXPECT_EQ(message_of([&] { l.set("ops=many"); }), "--limit ops=many: expected a number, got 'many'");
}

TEST(limits, over_limit_names_the_flag_that_raises_it) {
    // The process-wide limits keep their defaults in this test executable.
    EXPECT_EQ(over_limit("steps", 1.007e8, "steps"),
              "needs 1.007e+08 steps, over the limit of 2e+07 (--limit steps=N raises it)");
    EXPECT_EQ(message_of([] { require_units(1e10, "a tile_array of 100000 x 100000 tiles"); }),
              "a tile_array of 100000 x 100000 tiles needs 1e+10 units, over the limit of 4e+06 (--limit modules=N "
              "raises it)");
    EXPECT_EQ(message_of([] { require_units(4e6, "a grid"); }), "(no error)");
}

TEST(limits, input_files_must_be_plain_files_of_sensible_size) {
    EXPECT_EQ(message_of([] { require_input_file("/dev/zero", "YAML file"); }),
              "YAML file '/dev/zero' is not a plain file (a device, pipe or socket)");
    const std::string dir = std::filesystem::temp_directory_path().string();
    EXPECT_EQ(message_of([&] { require_input_file(dir, "sweep file"); }),
              "sweep file '" + dir + "' is a directory, not a file");
    EXPECT_EQ(message_of([] { require_input_file("/nonexistent/x.yaml", "YAML file"); }),
              "cannot open '/nonexistent/x.yaml': no such file or not readable");
    const std::string big = message_of([] { require_input_file("README.md", "YAML file", 10); });
    EXPECT_EQ(big.rfind("YAML file 'README.md' is ", 0), 0u) << big;
    EXPECT_NE(big.find(", more than the 10 B tessel reads"), std::string::npos) << big;
}

}  // namespace
