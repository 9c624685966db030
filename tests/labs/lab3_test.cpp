// Lab 3's answer key quotes real runs: each is re-run and every line it shows must still be printed
// (tests/support/doc_runs.h), so the key cannot drift from the simulator.
#include "tests/support/doc_runs.h"

TEST(lab3, every_answer_key_run_prints_what_the_key_shows) {
    EXPECT_GE(tessel::test::check_quoted_runs("docs/labs/lab3-bsp-dataflow/answers.md", false), 4u);
}
