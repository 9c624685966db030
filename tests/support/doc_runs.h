// Docs quote real output: every ```console block's `$ tessel ...` (or `$ build/bin/tessel ...`) command is run
// again and each line the doc shows under it must appear in what the command prints now (the doc may show a
// subset of lines; a line "..." marks lines left out). Blocks fenced ```console slow (runs of a minute or more) are
// checked only by the slow tests; ```console untested marks a quote no test can re-run (wall-clock timings, an
// interrupted run, a Slurm cluster), so that a reader and the docs test both know it is not re-checked.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
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

/// Where the arguments of a quoted tessel command start ("$ tessel run ..." -> at "run"), or 0 if `l` is none.
inline size_t tessel_command_at(const std::string& l) {
    for (const char* prefix : {"$ tessel ", "$ build/bin/tessel "}) {
        const std::string p = prefix;
        if (l.rfind(p, 0) == 0) return p.size();
    }
    return 0;
}

/// Quoted tessel commands in fences other than ```console: the docs test cannot tell them from prose, so they
/// are not re-run. Returned as line numbers.
inline std::vector<int> unchecked_commands(const std::string& path) {
    std::ifstream in(path);
    std::vector<int> out;
    std::string l, fence;
    bool in_block = false;
    int n = 0;
    while (std::getline(in, l)) {
        ++n;
        l = trim(l);
        if (l.rfind("```", 0) == 0) {
            in_block = !in_block;
            fence = l;
            continue;
        }
        const bool console = fence == "```console" || fence == "```console slow" || fence == "```console untested";
        if (in_block && !console && tessel_command_at(l)) out.push_back(n);
    }
    return out;
}

inline std::vector<quoted_run> quoted_runs(const std::string& path) {
    std::ifstream in(path);
    std::vector<quoted_run> out;
    std::string l;
    bool in_block = false, slow = false;
    bool attached = false;  // the lines that follow are the last tessel command's output (not another command's)
    int n = 0;
    while (std::getline(in, l)) {
        ++n;
        l = trim(l);
        if (l.rfind("```", 0) == 0) {
            in_block = !in_block && (l == "```console" || l == "```console slow");
            slow = l == "```console slow";
            attached = false;
            continue;
        }
        if (!in_block) continue;
        if (const size_t at = tessel_command_at(l)) {
            out.push_back({l.substr(at), {}, n, slow});
            attached = true;
        } else if (l.rfind("$ ", 0) == 0) {
            attached = false;  // another program's command: its output is checked elsewhere, if at all
        } else if (attached && !l.empty() && l != "...") {
            out.back().lines.push_back(l);
        }
    }
    return out;
}

/// The `-o DIR` a quoted command writes to, or "".
inline std::string output_folder_of(const std::string& command) {
    std::istringstream words(command);
    for (std::string w; words >> w;)
        if (w == "-o" || w == "--out") return words >> w ? w : "";
    return "";
}

/// A doc's slow runs can be split into one CTest test each (tests/CMakeLists.txt, tessel_doc_run_tests), so that
/// they run beside the other tests instead of one after another: TESSEL_DOC_RUN=K checks only the K-th (from 0)
/// of the runs asked for, TESSEL_DOC_RUNS=N is how many the build counted (a doc that changed since fails, to be
/// counted again), and TESSEL_DOC_RUN_JOBS=J runs a `compare` or `plan` with `-j J` (what it prints does not depend
/// on it) so each test takes the one processor CTest gives it. Each such run starts from an empty `-o` folder.
struct doc_run_selection {
    long only = -1;  // every run
    long expected = -1;
    std::string jobs;
    static doc_run_selection from_environment() {
        doc_run_selection s;
        if (const char* k = std::getenv("TESSEL_DOC_RUN")) s.only = std::atol(k);
        if (const char* n = std::getenv("TESSEL_DOC_RUNS")) s.expected = std::atol(n);
        if (const char* j = std::getenv("TESSEL_DOC_RUN_JOBS")) s.jobs = j;
        return s;
    }
};

/// Runs the doc's quoted commands (the slow ones or the others) and checks every line it shows; returns how many ran.
inline size_t check_quoted_runs(const std::string& doc, bool slow) {
    const doc_run_selection sel = doc_run_selection::from_environment();
    size_t ran = 0;
    long index = -1;
    std::vector<quoted_run> runs;
    for (const auto& q : quoted_runs(doc))
        if (q.slow == slow) runs.push_back(q);
    if (sel.expected >= 0) {
        EXPECT_EQ(static_cast<long>(runs.size()), sel.expected)
            << doc << " has " << runs.size() << " such runs, the build counted " << sel.expected << ": re-run cmake";
    }
    for (const auto& q : runs) {
        if (sel.only >= 0 && ++index != sel.only) continue;
        ++ran;
        std::string command = q.command;
        if (sel.only >= 0) {
            const std::string out = output_folder_of(command);
            if (!out.empty()) std::filesystem::remove_all(out);
            const bool searches = command.rfind("compare ", 0) == 0 || command.rfind("plan ", 0) == 0;
            if (searches && !sel.jobs.empty()) command += " -j " + sel.jobs;
        }
        const auto r = run_tessel(command);
        std::istringstream got(r.out);
        std::vector<std::string> printed;
        for (std::string l; std::getline(got, l);) printed.push_back(trim(l));
        for (const auto& want : q.lines) {
            bool found = false;
            for (const auto& p : printed) found = found || p == want;
            EXPECT_TRUE(found) << doc << ":" << q.line << ": `tessel " << command << "` no longer prints\n  " << want
                               << "\nit prints:\n"
                               << r.out;
        }
    }
    return ran;
}

/// README.md and every Markdown file under docs/, sorted.
inline std::vector<std::string> every_doc() {
    std::vector<std::string> docs = {"README.md"};
    for (const auto& e : std::filesystem::recursive_directory_iterator("docs"))
        if (e.is_regular_file() && e.path().extension() == ".md") docs.push_back(e.path().generic_string());
    std::sort(docs.begin() + 1, docs.end());
    return docs;
}

/// True when a test outside tests/docs/ re-runs `doc`'s quick (or slow) blocks itself: a doc's own test, next
/// to the code it documents, may check more than the quotes.
inline bool checked_by_its_own_test(const std::string& doc, bool slow) {
    const std::string call = "check_quoted_runs(\"" + doc + "\", " + (slow ? "true" : "false") + ")";
    for (const auto& e : std::filesystem::recursive_directory_iterator("tests")) {
        const std::string p = e.path().generic_string();
        if (!e.is_regular_file() || e.path().extension() != ".cpp" || p.rfind("tests/docs/", 0) == 0) continue;
        std::ifstream in(e.path());
        std::stringstream text;
        text << in.rdbuf();
        if (text.str().find(call) != std::string::npos) return true;
    }
    return false;
}

/// Re-runs the quoted runs (slow or quick) of every doc that no test of its own checks; returns how many ran.
inline size_t check_docs_without_their_own_test(bool slow) {
    size_t ran = 0;
    for (const auto& doc : every_doc())
        if (!checked_by_its_own_test(doc, slow)) ran += check_quoted_runs(doc, slow);
    return ran;
}

}  // namespace tessel::test
