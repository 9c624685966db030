// Emit and replay of ResNet-50 on the IPU: 4.95 M steps, a 427 MB program file, about a minute (labelled slow,
// left out of the sanitizer pass). The other mappers replay ResNet-50 in emit_replay_test.
#include "tests/support/replay.h"

namespace {

TEST(emit_replay_slow, bsp_resnet50_on_gc200) {
    const auto a = tessel::test::expect_same_replay({"gc200", "resnet50"});
    // README.md quotes this run (287.6 us).
    EXPECT_NEAR(a.value("sim_time_s", 0.0), 287.6e-6, 0.05e-6);
}

}  // namespace
