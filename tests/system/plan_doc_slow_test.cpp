// docs/plan.md's long searches (```console slow: a 7B GPT on one DGX A100, a 175B GPT on 512 GPUs, GPT-2 from 8
// to 64 GPUs) re-run from fresh output folders, as the quick one is in plan_doc_test.cpp.
#include <filesystem>

#include "tests/support/doc_runs.h"

TEST(plan_doc, every_quoted_slow_run_prints_what_the_doc_shows) {
    for (const char* d : {"out/plans/gpt7b", "out/plans/gpt175b", "out/plans/scale"}) std::filesystem::remove_all(d);
    EXPECT_GE(tessel::test::check_quoted_runs("docs/plan.md", true), 3u);
}
