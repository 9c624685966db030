// docs/serving.md's ```console slow runs re-run: served models whose every step simulates hundreds of chips or
// streams a 70B model's weights (a 640-GroqChip rack, an IPU-POD64). CTest runs each as a test of its own
// (serve.serving_doc_slow_test.K, tests/CMakeLists.txt: labelled long); run alone, the executable checks them all.
#include "tests/support/doc_runs.h"

TEST(serving_doc, every_quoted_slow_run_prints_what_the_doc_shows) {
    EXPECT_GE(tessel::test::check_quoted_runs("docs/serving.md", true), 1u);
}
