// docs/accelerator-war.md's comparison (```console slow: GPT-2 on four 8-chip systems, every plan of each
// simulated) re-run from a fresh output folder, so no result of an earlier build is resumed instead of simulated.
#include <filesystem>

#include "tests/support/doc_runs.h"

TEST(accelerator_war_doc, every_quoted_run_prints_what_the_doc_shows) {
    std::filesystem::remove_all("out/compare/gpt2");
    EXPECT_GE(tessel::test::check_quoted_runs("docs/accelerator-war.md", true), 1u);
}
