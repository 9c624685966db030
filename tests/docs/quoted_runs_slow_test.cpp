// The slow half of tests/docs/quoted_runs_test.cpp: the ```console slow blocks of docs without a test of their
// own, and README.md's accelerator-war table (one ResNet-50 run per row, `tessel run -p PLATFORM -w resnet50`).
#include <cmath>
#include <regex>

#include "tests/support/doc_runs.h"

using namespace tessel::test;

TEST(docs_slow, every_doc_without_a_test_of_its_own_prints_what_it_quotes) {
    // Today every ```console slow block is in a doc with a test of its own (energy, systems, plan, serving,
    // accelerator war), so this runs none; it is the guard for the next doc that quotes a slow run without one.
    check_docs_without_their_own_test(true);
}

namespace {

std::string without_commas(std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    return s;
}

bool prints(const std::string& out, const std::string& text) { return out.find(text) != std::string::npos; }

/// True when `printed` rounds to `quoted` at the digits the table gives ("1.8" for 1.85 printed: within 0.05).
bool rounds_to(double printed, const std::string& quoted) {
    const size_t dot = quoted.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(quoted.size() - dot - 1);
    return std::abs(printed - std::stod(quoted)) <= 0.5 * std::pow(10.0, -decimals) + 1e-9;
}

/// The first number printed after `label` on a line that has it.
double number_after(const std::string& out, const std::string& label) {
    const size_t at = out.find(label);
    return at == std::string::npos ? -1 : std::stod(out.substr(at + label.size()));
}

}  // namespace

TEST(docs_slow, readme_resnet50_table_rows_are_what_each_run_prints) {
    // | `platform` | style | simulated | images/s | of peak | bound by | power | images/s per W |
    const std::regex row(
        R"(^\| `([a-z0-9_]+)` \| [^|]+ \| ([^|]+) \| ([0-9,]+) \| ([0-9.]+)% \| ([a-z]+) \| ([^|]+) \|)");
    std::ifstream in("README.md");
    size_t rows = 0;
    for (std::string l; std::getline(in, l);) {
        std::smatch m;
        if (!std::regex_search(l, m, row)) continue;
        ++rows;
        const auto r = run_tessel("run -p " + m[1].str() + " -w resnet50");
        ASSERT_EQ(r.code, 0) << l << "\n" << r.out;
        const std::string power = trim(m[6].str());
        EXPECT_TRUE(prints(r.out, "simulated  " + m[2].str() + "  (")) << l << "\n" << r.out;
        // The run's throughput (the wafer leads with its steady state and gives the run's after "this run").
        const std::string images = without_commas(m[3].str());
        EXPECT_TRUE(prints(r.out, "throughput " + images + " samples/s") ||
                    prints(r.out, "this run " + images + " samples/s"))
            << l << "\n"
            << r.out;
        const std::string compute = r.out.substr(std::min(r.out.size(), r.out.find("\ncompute")));
        EXPECT_TRUE(rounds_to(number_after(compute, "peak ("), m[4].str())) << l << "\n" << r.out;
        EXPECT_TRUE(prints(r.out, "bound by   " + m[5].str() + ";")) << l << "\n" << r.out;
        if (power[0] != '(') {
            EXPECT_TRUE(prints(r.out, ", " + power + " average")) << l << "\n" << r.out;
        }
    }
    EXPECT_EQ(rows, 9u) << "README.md's accelerator-war table has one row per single-chip style";
}
