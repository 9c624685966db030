// Runs the tessel binary (TESSEL_BIN, else build/bin/tessel) as a user would and captures what it prints, for
// tests of the command line: exit codes and messages.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

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

struct cli_cost {
    cli_result result;
    double peak_rss_mb;  // the largest resident set the command reached
    double wall_s;
};

/// Runs tessel like run_tessel and measures what it cost: the child's own peak RSS (wait4's rusage, so earlier
/// commands of the same test do not count) and its wall time.
inline cli_cost run_tessel_measured(const std::string& args) {
    const char* b = std::getenv("TESSEL_BIN");
    const std::string cmd = "exec " + std::string(b ? b : "build/bin/tessel") + " " + args + " 2>&1";
    cli_cost c{{-1, {}}, 0, 0};
    int out[2];
    if (pipe(out) != 0) return c;
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    close(out[1]);
    std::array<char, 4096> buf{};
    ssize_t n;
    while ((n = read(out[0], buf.data(), buf.size())) > 0) c.result.out.append(buf.data(), static_cast<size_t>(n));
    close(out[0]);
    int status = 0;
    rusage use{};
    if (pid < 0 || wait4(pid, &status, 0, &use) != pid) return c;
    c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    c.peak_rss_mb = static_cast<double>(use.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
    c.result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return c;
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
