// Emit and replay of ResNet-50 on the IPU in the bsp mapper's fine form: 4.95 M steps, a 406 MB program file, about
// a minute (labelled slow, left out of the sanitizer pass). The coarse form (the default for a model this size)
// replays in emit_replay_test, and so do the other mappers.
#include "tests/support/replay.h"

namespace {

TEST(emit_replay_slow, bsp_resnet50_on_gc200_fine) {
    const auto a =
        tessel::test::expect_same_replay({"gc200", "resnet50", "gc200_fine", "--set mapper.representation=fine"});
    // docs/platforms/ipu.md quotes this run (267.7 us; the coarse form, which README.md quotes, 267 us).
    EXPECT_NEAR(a.value("sim_time_s", 0.0), 267.7e-6, 0.05e-6);
}

}  // namespace
