// tessel port: the porting report names what the platform models, whether the model runs and fits, where its
// time goes, and what to change; a blocker is a finding (exit 0), bad input still an error (exit 2).
#include <gtest/gtest.h>

#include "tests/support/cli.h"

using tessel::test::run_tessel;

TEST(port, a_model_that_runs_gets_its_support_time_and_advice) {
    const auto r = run_tessel("port resnet50 -p h100_sxm");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("ops        175 ops of 8 types"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("support    every op type is modelled"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("runs       yes: 436 us per run"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("time       longest ops (first step to last, share of the run): conv1 "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("suggest    the run reaches under 5% of peak"), std::string::npos) << r.out;
}

TEST(port, a_model_that_does_not_fit_says_why_and_what_to_do) {
    const auto r = run_tessel("port bert-large -p groqchip1");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("runs       no: workload 'bert-large' does not fit on 'groqchip1'"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("suggest    the model does not fit one chip"), std::string::npos) << r.out;
}

TEST(port, an_op_no_platform_models_is_named_with_a_replacement) {
    const auto r = run_tessel("port workloads/porting/custom_op.yaml -p mesh4x4");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("support    1 op type(s) tessel does not model, run as memory traffic only: GridSample x1"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("suggest    replace GridSample (x1) with ops tessel models"), std::string::npos) << r.out;
    EXPECT_TESSEL_ERROR("port no_such_model -p mesh4x4", "no_such_model");
}
