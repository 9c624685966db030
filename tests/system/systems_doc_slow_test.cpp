// docs/systems.md's large runs (```console slow: BERT-large on IPU-POD16, SN40L and CS-2 systems, a 175B-parameter
// GPT on 512 GPUs) re-run, as the quick ones are in systems_doc_test.cpp. CTest runs each as a test of its own
// (system.systems_doc_slow_test.K, tests/CMakeLists.txt); run alone, the executable checks them all.
#include "tests/support/doc_runs.h"

TEST(systems_doc, every_quoted_slow_run_prints_what_the_doc_shows) {
    EXPECT_GE(tessel::test::check_quoted_runs("docs/systems.md", true), 1u);
}
