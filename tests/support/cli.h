// Runs the tessel binary (TESSEL_BIN, else build/bin/tessel) as a user would and captures what it prints, for
// tests of the command line: exit codes and messages.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tessel::test {

struct cli_result {
    int code;
    std::string out;  // stdout and stderr together
};

inline cli_result run_tessel(const std::string& args) {
    const char* b = std::getenv("TESSEL_BIN");
    const std::string cmd = std::string(b ? b : "build/bin/tessel") + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    cli_result r{-1, {}};
    if (!p) return r;
    std::array<char, 4096> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

/// Writes `text` to a file named `name` in the temporary folder and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
    const auto p = std::filesystem::temp_directory_path() / name;
    std::ofstream(p) << text;
    return p.string();
}

}  // namespace tessel::test

/// `tessel ARGS` exits 2 with TEXT in its message, and no "internal error".
#define EXPECT_TESSEL_ERROR(args, text)                                              \
    do {                                                                             \
        const auto r_ = ::tessel::test::run_tessel(args);                            \
        EXPECT_EQ(r_.code, 2) << (args) << "\n" << r_.out;                           \
        EXPECT_NE(r_.out.find(text), std::string::npos) << (args) << "\n" << r_.out; \
        EXPECT_EQ(r_.out.find("internal error"), std::string::npos) << r_.out;       \
    } while (0)
