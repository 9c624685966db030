// Docs quote real output: every ```console block's `$ tessel ...` command is run again and each line the doc
// shows under it must appear in what the command prints now (the doc may show a subset of lines). Blocks fenced
// ```console slow (runs of a minute or more) are checked only by the slow tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"

namespace tessel::test {

struct quoted_run {
    std::string command;             // after "$ tessel "
    std::vector<std::string> lines;  // what the doc shows it printing
    int line = 0;                    // where in the doc
    bool slow = false;
};

/// Both ends trimmed: blocks may be indented under a list item.
inline std::string trim(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
    const size_t b = s.find_first_not_of(' ');
    return b == std::string::npos ? std::string() : s.substr(b);
}

inline std::vector<quoted_run> quoted_runs(const std::string& path) {
    std::ifstream in(path);
    std::vector<quoted_run> out;
    std::string l;
    bool in_block = false, slow = false;
    int n = 0;
    while (std::getline(in, l)) {
        ++n;
        l = trim(l);
        if (l.rfind("```", 0) == 0) {
            in_block = !in_block && (l == "```console" || l == "```console slow");
            slow = l == "```console slow";
            continue;
        }
        if (!in_block) continue;
        if (l.rfind("$ tessel ", 0) == 0) {
            out.push_back({l.substr(9), {}, n, slow});
        } else if (!out.empty() && !l.empty()) {
            out.back().lines.push_back(l);
        }
    }
    return out;
}

/// Runs the doc's quoted commands (the slow ones or the others) and checks every line it shows; returns how many ran.
inline size_t check_quoted_runs(const std::string& doc, bool slow) {
    size_t ran = 0;
    for (const auto& q : quoted_runs(doc)) {
        if (q.slow != slow) continue;
        ++ran;
        const auto r = run_tessel(q.command);
        std::istringstream got(r.out);
        std::vector<std::string> printed;
        for (std::string l; std::getline(got, l);) printed.push_back(trim(l));
        for (const auto& want : q.lines) {
            bool found = false;
            for (const auto& p : printed) found = found || p == want;
            EXPECT_TRUE(found) << doc << ":" << q.line << ": `tessel " << q.command << "` no longer prints\n  " << want
                               << "\nit prints:\n" << r.out;
        }
    }
    return ran;
}

}  // namespace tessel::test
