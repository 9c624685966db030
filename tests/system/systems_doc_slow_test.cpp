// docs/systems.md's large runs (```console slow: a 175B-parameter GPT on 512 GPUs) re-run, as the quick ones are
// in systems_doc_test.cpp.
#include "tests/support/doc_runs.h"

TEST(systems_doc, every_quoted_slow_run_prints_what_the_doc_shows) {
    EXPECT_GE(tessel::test::check_quoted_runs("docs/systems.md", true), 1u);
}
