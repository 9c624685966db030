// docs/plan.md's long searches (```console slow: a 7B GPT on one DGX A100, a 175B GPT on 512 GPUs restricted and
// estimated whole, GPT-2 from 8 to 64 GPUs) re-run from fresh output folders, as the quick ones are in
// plan_doc_test.cpp. CTest runs each as a test of its own (system.plan_doc_slow_test.K, tests/CMakeLists.txt; the
// unrestricted 175B search, about 4.4 minutes of both cores, is labelled long); run alone, the executable checks
// them all.
#include <cstdlib>
#include <filesystem>

#include "tests/support/doc_runs.h"

TEST(plan_doc, every_quoted_slow_run_prints_what_the_doc_shows) {
    if (!std::getenv("TESSEL_DOC_RUN"))  // one run at a time empties its own folder (doc_runs.h)
        for (const auto& q : tessel::test::quoted_runs("docs/plan.md"))
            if (q.slow && !tessel::test::output_folder_of(q.command).empty())
                std::filesystem::remove_all(tessel::test::output_folder_of(q.command));
    EXPECT_GE(tessel::test::check_quoted_runs("docs/plan.md", true), 1u);
}
