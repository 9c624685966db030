// docs/accelerator-war.md's prose about the GPT-2-at-equal-power comparison quotes numbers derived from that
// section's table (samples/s, ratios, samples per joule). The table itself is re-run by the long test
// (system.accelerator_war_doc_slow_test); this quick test checks that the prose still says what the quoted table
// gives, so a re-run that changes the table cannot leave the prose behind (it once did: 2,817 against 2,830).
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/doc_runs.h"

using namespace tessel::test;

namespace {

/// One row of a `tessel compare` table: the columns after the plan.
struct compare_row {
    double samples_per_s = 0;
    double samples_per_j = 0;
};

std::string read_doc() {
    std::ifstream in("docs/accelerator-war.md");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The row of `system` (e.g. "dgx_h100 nodes=2") in the block of the command that has `command_part`.
compare_row row_of(const std::string& doc, const std::string& command_part, const std::string& system) {
    const size_t block = doc.find(command_part);
    EXPECT_NE(block, std::string::npos) << command_part;
    const size_t at = doc.find("\n  " + system + " ", block);
    EXPECT_NE(at, std::string::npos) << system;
    const std::string line = doc.substr(at + 1, doc.find('\n', at + 1) - at - 1);
    // ... iteration "ms", samples/s, per chip, MFU "%", power "kW", samples/J, days
    static const std::regex columns(R"( ms +([0-9.e+]+) +[0-9.e+]+ +[0-9.]+% +[0-9.]+ kW +([0-9.]+) )");
    std::smatch m;
    EXPECT_TRUE(std::regex_search(line, m, columns)) << line;
    return {std::stod(m[1].str()), std::stod(m[2].str())};
}

std::string with_commas(double v) {
    std::string s = std::to_string(static_cast<long long>(std::llround(v)));
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
    return s;
}

std::string fixed(double v, int decimals) {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(decimals);
    s << v;
    return s.str();
}

}  // namespace

TEST(accelerator_war_prose, equal_power_section_says_what_its_table_gives) {
    const std::string doc = read_doc();
    const std::string prose = std::regex_replace(doc, std::regex(R"(\s+)"), " ");  // line breaks fall anywhere
    const std::string power = "--power 20.5kW";
    const compare_row a100 = row_of(doc, power, "dgx_a100 nodes=3");
    const compare_row h100 = row_of(doc, power, "dgx_h100 nodes=2");
    const compare_row tpu = row_of(doc, power, "tpu_v4_pod torus_x=4 torus_y=4 chips=96");
    const compare_row groq = row_of(doc, power, "groqrack nodes=8");

    const std::string rates =
        "(" + with_commas(a100.samples_per_s) + " and " + with_commas(h100.samples_per_s) + " samples/s)";
    EXPECT_NE(prose.find(rates), std::string::npos) << "should say " << rates;
    const std::string lead = "lead (" + fixed(tpu.samples_per_s / h100.samples_per_s, 2) + "x the DGX H100 nodes)";
    EXPECT_NE(prose.find(lead), std::string::npos) << "should say " << lead;
    const double faster = 100 * (groq.samples_per_s / h100.samples_per_s - 1);
    const std::string train = "train " + fixed(faster, 0) + "% faster than the two DGX H100 nodes";
    EXPECT_NE(prose.find(train), std::string::npos) << "should say " << train;
    const std::string joule = fixed(groq.samples_per_j / h100.samples_per_j, 2) + "x as many samples per joule";
    EXPECT_NE(prose.find(joule), std::string::npos) << "should say " << joule;
}
