// docs/energy.md's slow runs (the IPUs and the wafer's BERT-large, about a minute together) re-run here.
#include "tests/support/doc_runs.h"

TEST(energy_doc, every_slow_quoted_run_prints_what_the_doc_shows) {
    EXPECT_GE(tessel::test::check_quoted_runs("docs/energy.md", true), 5u);
}
