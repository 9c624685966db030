// docs/serving.md re-run: every quoted `tessel serve` prints what the doc shows, and its settings table lists every
// serve.* key with the default the code declares.
#include <fstream>
#include <sstream>

#include "engine/serve/serve_options.h"
#include "tests/support/doc_runs.h"

using namespace tessel::test;

TEST(serving_doc, quoted_runs_print_what_the_doc_shows) { EXPECT_EQ(check_quoted_runs("docs/serving.md", false), 20u); }

TEST(serving_doc, the_settings_table_is_the_declared_settings) {
    std::ifstream in("docs/serving.md");
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& s : tessel::serve::serve_settings()) {
        const std::string row = "| `" + s.key + "` | " + (s.default_value.empty() ? "" : s.default_value + " ") + "|";
        EXPECT_NE(text.str().find(row), std::string::npos) << "docs/serving.md has no row starting " << row;
    }
}
