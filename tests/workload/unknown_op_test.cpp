// An op of a type tessel does not model runs as the bytes of its tensors on every platform: the run warns.
#include <gtest/gtest.h>

#include "tests/support/cli.h"

using tessel::test::run_tessel;
using tessel::test::write_temp;

TEST(unknown_op, an_op_tessel_does_not_model_is_a_warning_in_the_run) {
    // Every platform "runs" an unknown op by its bytes: the run says so, with the type and how many.
    const std::string w = write_temp("tessel_unknown_op.yaml", R"(
workload: unknown_op
tensors:
  a: {shape: [64, 64], role: input}
  b: {shape: [64, 64], role: weight}
  d: {shape: [64, 64]}
  e: {shape: [64, 64]}
ops:
  - {name: c, op: matmul, inputs: [a, b]}
  - {name: d, op: generic, type: MyFancyOp, inputs: [c]}
  - {name: e, op: generic, type: MyFancyOp, inputs: [d]}
)");
    const auto r = run_tessel("run -p mesh4x4 -w " + w);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("warning: 2 op(s) of a type tessel does not model (MyFancyOp x2) ran as memory traffic only"),
              std::string::npos)
        << r.out;
    // A known model has none.
    const auto k = run_tessel("run -p mesh4x4 -w mlp");
    EXPECT_EQ(k.out.find("does not model"), std::string::npos) << k.out;
}
