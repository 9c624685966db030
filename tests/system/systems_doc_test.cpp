// docs/systems.md quotes real output: every ```console block's `$ tessel ...` command is run again and each
// line the doc shows under it must appear in what the command prints now (the doc may show a subset of lines).
#include <gtest/gtest.h>

#include "tests/support/cli.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct quoted_run {
    std::string command;             // after "$ tessel "
    std::vector<std::string> lines;  // what the doc shows it printing
    int line = 0;                    // where in the doc
};

// Both ends trimmed: blocks may be indented under a list item.
std::string trim(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
    const size_t b = s.find_first_not_of(' ');
    return b == std::string::npos ? std::string() : s.substr(b);
}

std::vector<quoted_run> quoted_runs(const std::string& path) {
    std::ifstream in(path);
    std::vector<quoted_run> out;
    std::string l;
    bool in_block = false;
    int n = 0;
    while (std::getline(in, l)) {
        ++n;
        l = trim(l);
        if (l.rfind("```", 0) == 0) {
            in_block = !in_block && l == "```console";
            continue;
        }
        if (!in_block) continue;
        if (l.rfind("$ tessel ", 0) == 0) {
            out.push_back({l.substr(9), {}, n});
        } else if (!out.empty() && !l.empty()) {
            out.back().lines.push_back(l);
        }
    }
    return out;
}

}  // namespace

TEST(systems_doc, every_quoted_run_prints_what_the_doc_shows) {
    const auto runs = quoted_runs("docs/systems.md");
    ASSERT_GE(runs.size(), 3u) << "docs/systems.md should quote its runs in ```console blocks";
    for (const auto& q : runs) {
        const auto r = tessel::test::run_tessel(q.command);
        std::istringstream got(r.out);
        std::vector<std::string> printed;
        for (std::string l; std::getline(got, l);) printed.push_back(trim(l));
        for (const auto& want : q.lines) {
            bool found = false;
            for (const auto& p : printed) found = found || p == want;
            EXPECT_TRUE(found) << "docs/systems.md:" << q.line << ": `tessel " << q.command << "` no longer prints\n  "
                               << want << "\nit prints:\n" << r.out;
        }
    }
}
