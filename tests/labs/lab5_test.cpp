// Lab 5's answer key quotes real runs: each is re-run and every line it shows must still be printed
// (tests/support/doc_runs.h), so the key cannot drift from the simulator.
#include "tests/support/doc_runs.h"

TEST(lab5, every_answer_key_run_prints_what_the_key_shows) {
    EXPECT_EQ(tessel::test::check_quoted_runs("docs/labs/lab5-serving/answers.md", false), 7u);
}
