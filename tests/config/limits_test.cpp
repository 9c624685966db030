// Inputs that used to crash, hang or be silently ignored (issue: unbreakable inputs) are one located error with
// exit 2: a replicate whose product would wrap, a count large enough to divide by zero after narrowing, and
// negative times.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/cli.h"

using tessel::test::run_tessel;
using tessel::test::write_temp;

namespace {

TEST(limits, a_replicate_product_that_would_wrap_is_refused_before_building) {
    // 2^32 x 2^32 wrapped to 0 and passed the module limit, then hung building.
    const std::string p = write_temp("tessel_rep.yaml",
                                     "platform: rep\nclock: 1GHz\ncomponents:\n  tile:\n    kind: tile\n"
                                     "    replicate: {x: 65536, y: 4294967296}\n");
    const auto r = run_tessel("run -p " + p + " -w mlp");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("rep.yaml:6:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("replicates more than 65536 modules (replicate.y = 4294967296)"), std::string::npos) << r.out;
}

TEST(limits, counts_have_a_ceiling) {
    // 2^32 narrowed to 0 packets in flight and divided by it (SIGFPE).
    auto r = run_tessel("run -p mesh4x4 -w mlp --set noc.max_outstanding=4294967296");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("max_outstanding"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("must be at most 65536"), std::string::npos) << r.out;
    // Any whole-number parameter beyond 2^53 (where doubles stop counting) is refused, not cast.
    r = run_tessel("run -p mesh4x4 -w mlp --set noc.width=1e30");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("must be at most 9007199254740992"), std::string::npos) << r.out;
}

TEST(limits, times_are_not_negative) {
    const std::string g = write_temp("tessel_neg.yaml", "program: neg\nsteps:\n  - {id: a, delay: -1us}\n");
    auto r = run_tessel("run -p mesh4x4 -g " + g);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("tessel_neg.yaml:3:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("delay: a time must not be negative, got '-1us'"), std::string::npos) << r.out;
    r = run_tessel("run -p mesh4x4 -w mlp --set quantum=-5ns");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("quantum: must not be negative"), std::string::npos) << r.out;
}

}  // namespace
