// docs/energy.md quotes real output: its quick ```console runs are re-run here (tests/support/doc_runs.h).
#include "tests/support/doc_runs.h"

TEST(energy_doc, every_quoted_run_prints_what_the_doc_shows) {
    EXPECT_GE(tessel::test::check_quoted_runs("docs/energy.md", false), 9u);
}
