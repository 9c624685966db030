// docs/accelerator-war.md's comparisons (```console slow: GPT-2, BERT-large and ResNet-50 on 8-chip systems,
// GPT-2 at equal power, BERT-large, a 7B and a 70B GPT on 64, BERT-large on an IPU-POD16, every plan of each simulated) re-run from fresh output folders, so no result of an earlier
// build is resumed instead of simulated.
#include <filesystem>

#include "tests/support/doc_runs.h"

TEST(accelerator_war_doc, every_quoted_run_prints_what_the_doc_shows) {
    for (const char* dir : {"out/compare/gpt2", "out/compare/gpt2-20kW", "out/compare/bert-large", "out/compare/bert-large-64", "out/compare/bert-large-6.5kW",
                            "out/compare/gpt7b-64", "out/compare/gpt70b-64", "out/compare/resnet50", "out/plans/ipu_pod16-bert-large"})
        std::filesystem::remove_all(dir);
    EXPECT_GE(tessel::test::check_quoted_runs("docs/accelerator-war.md", true), 1u);
}
