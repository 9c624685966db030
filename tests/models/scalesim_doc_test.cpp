// docs/timing-model.md quotes SCALE-Sim v2's compute cycles as tessel reproduces them: its ```console runs are
// re-run here (tests/support/doc_runs.h).
#include "tests/support/doc_runs.h"

TEST(scalesim_doc, every_quoted_run_prints_what_the_doc_shows) {
    EXPECT_GE(tessel::test::check_quoted_runs("docs/timing-model.md", false), 6u);
}
