#include "engine/sweep/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "engine/sweep/metrics.h"
#include "engine/sweep/results.h"
#include "models/core/error.h"
#include "models/core/fingerprint.h"
#include "models/core/output_file.h"

namespace tessel::sweep {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
    return buf;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

/// The line of a point's log that says what went wrong: the last "error:" line, else the last line.
std::string error_line(const std::string& log) {
    std::vector<std::string> lines;
    std::istringstream is(log);
    for (std::string l; std::getline(is, l);) {
        while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
        if (!l.empty()) lines.push_back(l);
    }
    std::string pick;
    for (auto it = lines.rbegin(); it != lines.rend() && pick.empty(); ++it)
        if (it->find("error:") != std::string::npos) pick = *it;
    if (pick.empty() && !lines.empty()) pick = lines.back();
    if (pick.size() > 600) pick = pick.substr(0, 600) + "...";
    return pick;
}

double millis(double s) { return std::round(s * 1000.0) / 1000.0; }

row base_row(const job& j, const run_settings& rs) {
    row r;
    r["point"] = j.index;
    r["key"] = j.key;
    r["status"] = "";
    r["exit_code"] = nullptr;
    r["error"] = "";
    row params = row::object();
    for (const auto& p : j.params) params[p.name] = p.value;
    r["params"] = params;
    row metrics = row::object();
    for (const auto& m : rs.metrics) metrics[m.name] = nullptr;
    r["metrics"] = metrics;
    r["config_hash"] = nullptr;
    r["tessel_version"] = nullptr;
    r["tessel_build"] = rs.build.empty() ? row(nullptr) : row(rs.build);
    r["wall_s"] = nullptr;
    r["host"] = host_name();
    r["finished"] = utc_now();
    r["backend"] = rs.backend;
    r["dir"] = j.rel_dir;
    return r;
}

}  // namespace

std::string shell_quote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                          std::string::npos)
        return s;
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::string self_exe() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot find the tessel executable (/proc/self/exe): " + ec.message());
    return p.string();
}

std::string point_exe() {
    const char* given = std::getenv("TESSEL_POINT_BIN");
    if (given == nullptr || *given == 0) return self_exe();
    std::error_code ec;
    if (!fs::is_regular_file(given, ec) || ::access(given, X_OK) != 0)
        throw input_error(std::string("TESSEL_POINT_BIN='") + given + "' is not an executable file");
    return given;
}

std::string build_id(const std::string& binary) {
    // Hashing a binary of a few hundred MB takes a noticeable fraction of a second; plan and compare resume a
    // sweep several times in one process, so each binary is read once.
    static std::map<std::string, std::string> known;
    const auto it = known.find(binary);
    if (it != known.end()) return it->second;
    std::ifstream in(binary, std::ios::binary);
    std::string id;
    if (in) {
        fingerprint f;
        std::vector<char> buf(1 << 20);  // a multiple of 8: only the file's last bytes are hashed one by one
        while (in) {
            in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
            f.add_words(buf.data(), static_cast<size_t>(in.gcount()));
        }
        id = f.hex();
    }
    known.emplace(binary, id);
    return id;
}

std::string resolve_input(const spec& s, const std::string& what, const std::string& value,
                          const platform_resolver& resolve_platform) {
    std::error_code ec;
    const fs::path v(value);
    if (v.is_absolute()) return value;
    const fs::path in_spec = fs::path(s.dir) / v;
    if (fs::is_regular_file(in_spec, ec)) return fs::absolute(in_spec, ec).lexically_normal().string();
    if (fs::is_regular_file(v, ec)) return fs::absolute(v, ec).lexically_normal().string();
    if (what == "platform" && resolve_platform) {
        const fs::path found(resolve_platform(value));
        return fs::absolute(found, ec).lexically_normal().string();
    }
    return value;
}

job make_job(const spec& s, const point& p, const std::string& out_dir, const std::string& tessel,
             const platform_resolver& resolve_platform) {
    job j;
    j.index = p.index;
    j.key = p.key;
    j.params = p.params;
    j.rel_dir = "points/" + p.key;
    std::error_code ec;
    j.dir = (fs::absolute(out_dir, ec) / j.rel_dir).lexically_normal().string();
    j.argv = {tessel, "run", "-p", resolve_input(s, "platform", p.platform, resolve_platform)};
    if (!p.workload.empty())
        j.argv.insert(j.argv.end(), {"-w", resolve_input(s, "workload", p.workload, resolve_platform)});
    else
        j.argv.insert(j.argv.end(), {"-g", resolve_input(s, "program", p.program, resolve_platform)});
    for (const auto& set : p.sets) j.argv.insert(j.argv.end(), {"--set", set.name + "=" + set.value});
    j.argv.insert(j.argv.end(), {"--out", j.dir, "-q"});
    if (!s.stats) j.argv.emplace_back("--no-stats");
    return j;
}

row make_row(const job& j, const outcome& o, const run_settings& rs) {
    row r = base_row(j, rs);
    r["wall_s"] = millis(o.wall_s);
    const std::string log = read_text(j.dir + "/log.txt");
    if (o.timed_out) {
        r["status"] = "timeout";
        r["exit_code"] = 128 + SIGKILL;
        char buf[96];
        std::snprintf(buf, sizeof buf, "no result within the time limit (%gs); the run was killed", rs.timeout_s);
        r["error"] = buf;
        return r;
    }
    if (!o.exited) {
        r["status"] = "failed";
        r["exit_code"] = 128 + o.code;
        const std::string last = o.reported.empty() ? error_line(log) : o.reported;
        r["error"] = "killed by signal " + std::to_string(o.code) + " (" + strsignal(o.code) + ")" +
                     (last.empty() ? "" : ": " + last);
        return r;
    }
    r["exit_code"] = o.code;
    if (o.code != 0) {
        r["status"] = "failed";
        const std::string last = o.reported.empty() ? error_line(log) : o.reported;
        r["error"] = last.empty() ? "exit status " + std::to_string(o.code) : last;
        return r;
    }
    const nlohmann::json summary = nlohmann::json::parse(read_text(j.dir + "/summary.json"), nullptr, false);
    if (summary.is_discarded() || !summary.is_object()) {
        r["status"] = "failed";
        r["error"] = "the run exited 0 but wrote no readable summary.json";
        return r;
    }
    r["status"] = "ok";
    r["metrics"] = collect_metrics(rs.metrics, summary, j.params);
    if (summary.contains("config_hash")) r["config_hash"] = summary["config_hash"];
    if (summary.contains("tessel_version")) r["tessel_version"] = summary["tessel_version"];
    return r;
}

row make_failed_row(const job& j, const std::string& error, const run_settings& rs) {
    row r = base_row(j, rs);
    r["status"] = "failed";
    r["error"] = error;
    return r;
}

namespace {

/// The environment of every run: ours plus TESSEL_ERROR_FD (built before fork: the child may not allocate).
std::vector<std::string> run_environment() {
    std::vector<std::string> env_text;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "TESSEL_ERROR_FD=", 16) != 0) env_text.emplace_back(*e);
    env_text.emplace_back("TESSEL_ERROR_FD=3");
    return env_text;
}

/// Whatever the run wrote to its error pipe (it has exited, so this never blocks), then closes the pipe.
std::string take_report(int fd) {
    std::string text;
    char buf[4096];
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    for (ssize_t n; text.size() < 65536 && (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
    ::close(fd);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

/// The forked child of a point: its log as stdout and stderr, the error pipe's write end as fd 3, then the run.
[[noreturn]] void exec_point(const std::string& log, int report_fd, pid_t parent, char* const argv[],
                             char* const envp[]) {
    // Only async-signal-safe calls between fork and exec.
    ::setpgid(0, 0);                     // a timeout kills the point's whole process group
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed runner leaves no orphan writing into its folder
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
    }
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) {
        ::dup2(null, 0);
        ::close(null);
    }
    if (report_fd == 3)
        ::fcntl(3, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec
    else
        ::dup2(report_fd, 3);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(argv[0], argv, envp);
    const char msg[] = "tessel sweep: error: cannot execute the tessel binary\n";
    if (::write(2, msg, sizeof msg - 1) < 0) ::_exit(127);
    ::_exit(127);
}

}  // namespace

bool local_pool::run(const std::vector<job>& jobs, int parallel, const run_settings& rs, const done_fn& done,
                     const tick_fn& tick) {
    m_signal = 0;
    parallel = std::max(1, parallel);
    // Signals arrive through sigtimedwait, never in the middle of writing a row.
    sigset_t wait_set, old_set;
    sigemptyset(&wait_set);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&wait_set, s);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    struct sigaction old_chld {};
    sigaction(SIGCHLD, &dfl, &old_chld);  // an inherited SIG_IGN would make children unwaitable
    sigprocmask(SIG_BLOCK, &wait_set, &old_set);

    struct running {
        const job* j;
        clock_type::time_point start;
        bool timed_out = false;
        int report_fd = -1;  // read end of the run's error pipe
    };
    std::map<pid_t, running> live;
    const pid_t parent = ::getpid();
    std::vector<std::string> env_text = run_environment();
    std::vector<char*> envp;
    envp.reserve(env_text.size() + 1);
    for (auto& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);

    auto launch = [&](const job& j) {
        std::error_code ec;
        fs::remove_all(j.dir, ec);  // left over from an interrupted run
        fs::create_directories(j.dir, ec);
        if (ec) throw input_error("cannot create '" + j.dir + "': " + ec.message());
        std::string cmd;
        for (const auto& a : j.argv) cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
        write_file_atomic(j.dir + "/command.txt", cmd + "\n", "command file");
        const std::string log = j.dir + "/log.txt";
        std::vector<char*> argv;
        for (const auto& a : j.argv) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        // The run's error line also comes back through a pipe (its fd 3, named by TESSEL_ERROR_FD), so a point
        // that fails for lack of disk space keeps its reason even though its log.txt could not be written.
        int report[2];
        if (::pipe2(report, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
        const pid_t pid = ::fork();
        if (pid < 0) {
            ::close(report[0]);
            ::close(report[1]);
            throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
        }
        if (pid == 0) exec_point(log, report[1], parent, argv.data(), envp.data());
        ::close(report[1]);
        ::setpgid(pid, pid);
        live[pid] = running{&j, clock_type::now(), false, report[0]};
    };

    auto reap = [&](bool block) {
        for (auto it = live.begin(); it != live.end();) {
            int status = 0;
            const pid_t r = ::waitpid(it->first, &status, block ? 0 : WNOHANG);
            if (r == 0 || (r < 0 && errno == EINTR)) {
                ++it;
                continue;
            }
            outcome o;
            o.wall_s = std::chrono::duration<double>(clock_type::now() - it->second.start).count();
            // A run that exited on its own just as its time ran out finished: keep its result.
            o.timed_out = it->second.timed_out && !(r > 0 && WIFEXITED(status));
            if (r > 0 && WIFEXITED(status)) {
                o.code = WEXITSTATUS(status);
            } else if (r > 0 && WIFSIGNALED(status)) {
                o.exited = false;
                o.code = WTERMSIG(status);
            } else {
                o.code = 1;
            }
            o.reported = take_report(it->second.report_fd);
            const job& j = *it->second.j;
            it = live.erase(it);
            if (!block) done(j, make_row(j, o, rs));
        }
    };

    size_t next = 0;
    try {
        while (next < jobs.size() || !live.empty()) {
            while (m_signal == 0 && live.size() < size_t(parallel) && next < jobs.size()) launch(jobs[next++]);
            if (live.empty()) break;
            // Sleep until a child ends, a signal comes, the nearest deadline passes or it is time to tick.
            auto wake = clock_type::now() + std::chrono::milliseconds(250);
            if (rs.timeout_s > 0)
                for (const auto& [pid, r] : live)
                    if (!r.timed_out)
                        wake = std::min(wake, r.start + std::chrono::duration_cast<clock_type::duration>(
                                                            std::chrono::duration<double>(rs.timeout_s)));
            const auto left = std::max(wake - clock_type::now(), clock_type::duration::zero());
            const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
            timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
            siginfo_t info;
            const int sig = ::sigtimedwait(&wait_set, &info, &ts);
            if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
                m_signal = sig;
                for (const auto& [pid, r] : live) ::kill(-pid, SIGKILL);
                reap(true);  // stopped points get no row: they run again when the sweep is resumed
                break;
            }
            reap(false);
            if (rs.timeout_s > 0) {
                const auto now = clock_type::now();
                for (auto& [pid, r] : live)
                    if (!r.timed_out && std::chrono::duration<double>(now - r.start).count() >= rs.timeout_s) {
                        r.timed_out = true;
                        ::kill(-pid, SIGKILL);
                    }
            }
            if (tick) tick();
        }
    } catch (...) {
        for (const auto& [pid, r] : live) ::kill(-pid, SIGKILL);
        reap(true);
        sigprocmask(SIG_SETMASK, &old_set, nullptr);
        sigaction(SIGCHLD, &old_chld, nullptr);
        throw;
    }
    sigprocmask(SIG_SETMASK, &old_set, nullptr);
    sigaction(SIGCHLD, &old_chld, nullptr);
    return m_signal == 0;
}

}  // namespace tessel::sweep
