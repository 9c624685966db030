// docs/porting.md quotes real output: its ```console runs are re-run here (tests/support/doc_runs.h).
#include "tests/support/doc_runs.h"

TEST(port_doc, every_quoted_run_prints_what_the_doc_shows) {
    EXPECT_GE(tessel::test::check_quoted_runs("docs/porting.md", false), 3u);
}
