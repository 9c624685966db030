// An op of a type tessel does not model runs as the bytes of its tensors on every platform: the run warns.
#include <gtest/gtest.h>

#include "tests/support/cli.h"

using tessel::test::run_tessel;

TEST(unknown_op, an_op_tessel_does_not_model_is_a_warning_in_the_run) {
    // Every platform "runs" an unknown op by its bytes: the run says so, with the type and how many.
    const auto r = run_tessel("run -p mesh4x4 -w workloads/porting/custom_op.yaml");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("warning: 1 op(s) of a type tessel does not model (GridSample) ran as memory traffic only"),
              std::string::npos)
        << r.out;
    // A known model has none.
    const auto k = run_tessel("run -p mesh4x4 -w mlp");
    EXPECT_EQ(k.out.find("does not model"), std::string::npos) << k.out;
}
