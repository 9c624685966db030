// docs/accelerator-war.md's comparisons (```console slow: GPT-2, BERT-large and ResNet-50 on 8-chip systems,
// GPT-2 at equal power, BERT-large, a 7B and a 70B GPT on 64, BERT-large on an IPU-POD16, every plan of each
// simulated) re-run from fresh output folders, so no result of an earlier build is resumed instead of simulated.
// CTest runs each comparison as a test of its own (system.accelerator_war_doc_slow_test.K, tests/CMakeLists.txt);
// run alone, the executable checks them all.
#include <cstdlib>
#include <filesystem>

#include "tests/support/doc_runs.h"

TEST(accelerator_war_doc, every_quoted_run_prints_what_the_doc_shows) {
    if (!std::getenv("TESSEL_DOC_RUN"))  // one run at a time empties its own folder (doc_runs.h)
        for (const auto& q : tessel::test::quoted_runs("docs/accelerator-war.md"))
            if (q.slow && !tessel::test::output_folder_of(q.command).empty())
                std::filesystem::remove_all(tessel::test::output_folder_of(q.command));
    EXPECT_GE(tessel::test::check_quoted_runs("docs/accelerator-war.md", true), 1u);
}
