// docs/plan.md quotes real output: its quick ```console runs are re-run here (tests/support/doc_runs.h), in a
// fresh output folder so that no result of an earlier build is resumed instead of simulated.
#include <filesystem>

#include "tests/support/doc_runs.h"

TEST(plan_doc, every_quoted_run_prints_what_the_doc_shows) {
    std::filesystem::remove_all("out/plans/small");
    std::filesystem::remove_all("out/plans/small_energy");
    std::filesystem::remove_all("out/plans/small_estimated");
    std::filesystem::remove_all("out/plans/small_layers");
    EXPECT_GE(tessel::test::check_quoted_runs("docs/plan.md", false), 4u);
}
