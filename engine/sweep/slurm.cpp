#include "engine/sweep/slurm.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include "engine/sweep/results.h"
#include "engine/sweep/slurm_files.h"
#include "models/core/error.h"
#include "models/core/limits.h"

namespace tessel::sweep {

namespace fs = std::filesystem;

namespace {

// Slurm's default MaxArraySize is 1001: larger sweeps put several points in each task.
constexpr size_t max_array_tasks = 1000;

/// A submission: its folder, its job id, and the points of each array task.
struct batch {
    std::string dir;
    std::string job_id;
    size_t points_per_task = 1;
    std::vector<job> jobs;

    size_t task_of(size_t i) const { return i / points_per_task; }
    std::string log_of(size_t task) const { return dir + "/logs/" + std::to_string(task) + ".out"; }
};

batch load_batch(const std::string& dir) {
    task_file t = read_task_file(dir + "/tasks.json");
    batch b;
    b.dir = dir;
    b.points_per_task = t.points_per_task;
    b.jobs = std::move(t.jobs);
    return b;
}

/// Moves finished rows from a batch's rows/ folder into the results. Returns the keys merged.
std::set<std::string> merge_rows(const std::string& batch_dir, results_store& store,
                                 const std::function<void(const std::string&, const row&)>& notify) {
    std::set<std::string> merged;
    const fs::path rows = fs::path(batch_dir) / "rows";
    std::error_code ec;
    if (!fs::is_directory(rows, ec)) return merged;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(rows, ec))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        const row r = row::parse(read_text(f.string()), nullptr, false);
        if (!is_row(r)) continue;  // written by rename, so complete: not one tessel wrote
        const std::string key = r["key"].get<std::string>();
        const auto& latest = store.latest();
        const auto it = latest.find(key);
        // A crash between appending and removing the file must not append the row twice.
        if (it == latest.end() || it->second != r) store.append(r);
        fs::remove(f, ec);
        merged.insert(key);
        notify(key, r);
    }
    return merged;
}

/// States of a job's array tasks ("123_4" -> "FAILED (exit 1:0)"): from sacct where the cluster keeps
/// accounting, else from squeue while the controller still remembers the job.
std::map<std::string, std::string> task_states(const std::string& job_id) {
    std::string out;
    if (run_capture({"sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State,ExitCode"}, out) == 0) {
        auto states = sacct_states(out);
        if (!states.empty()) return states;
    }
    if (run_capture({"squeue", "-h", "-j", job_id, "--states=all", "-o", "%i|%T|%r"}, out) == 0)
        return squeue_states(out);
    return {};
}

/// squeue answered with an error: the controller may be busy or restarting, so the caller asks again.
struct squeue_failed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Whether the job still has tasks pending or running.
bool job_active(const std::string& job_id) {
    std::string out;
    const int rc = run_capture({"squeue", "-h", "-j", job_id, "-o", "%T"}, out);
    if (rc != 0) {
        // A job the controller has already forgotten is reported as an invalid id: it is finished.
        if (out.find("Invalid job id") != std::string::npos) return false;
        if (rc == 127 && out.empty()) throw input_error("the slurm backend needs squeue, which is not on PATH");
        throw squeue_failed("squeue failed (exit " + std::to_string(rc) + "): " + trim(out));
    }
    return squeue_active(out);
}

/// Sleeps up to `seconds`; returns the stopping signal if one came.
int sleep_or_signal(double seconds, const sigset_t& set) {
    timespec ts{static_cast<time_t>(seconds), static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
    siginfo_t info;
    const int sig = ::sigtimedwait(&set, &info, &ts);
    return sig > 0 ? sig : 0;
}

}  // namespace

int run_capture(const std::vector<std::string>& argv, std::string& output) {
    output.clear();
    int fds[2];
    if (::pipe(fds) != 0) return 127;
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return 127;
    }
    if (pid == 0) {
        ::dup2(fds[1], 1);
        ::dup2(fds[1], 2);
        ::close(fds[0]);
        ::close(fds[1]);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    ::close(fds[1]);
    char buf[4096];
    while (true) {
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        output.append(buf, size_t(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

namespace {

/// The batch's folders, its tasks.json and the job script every array task runs; returns the script's path.
std::string write_batch(const batch& b, int n, const run_settings& rs, const slurm_settings& ss) {
    const slurm_options& o = ss.options;
    std::error_code ec;
    fs::create_directories(b.dir + "/logs", ec);
    fs::create_directories(b.dir + "/rows", ec);
    if (ec) throw input_error("cannot create '" + b.dir + "': " + ec.message());
    task_file t;
    t.sweep = ss.sweep_name;
    t.run = rs;
    t.points_per_task = b.points_per_task;
    t.cpus_per_task = o.cpus_per_task;
    t.rows = b.dir + "/rows";
    t.jobs = b.jobs;
    write_durable(b.dir + "/tasks.json", task_file_json(t));
    std::string script = b.dir + "/job.sh";
    write_durable(
        script,
        "#!/bin/sh\n# tessel sweep '" + ss.sweep_name + "', submission " + std::to_string(n) +
            ": array task $SLURM_ARRAY_TASK_ID runs its points from tasks.json and leaves one row each in rows/.\n"
            "exec " +
            shell_quote(rs.tessel) + " sweep-task " + shell_quote(b.dir + "/tasks.json") +
            " \"$SLURM_ARRAY_TASK_ID\"\n");
    fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read, ec);
    return script;
}

/// Submits the batch as an array job of `tasks` tasks; returns the job id sbatch printed.
std::string submit_batch(const batch& b, size_t tasks, const std::string& script, const slurm_settings& ss) {
    const slurm_options& o = ss.options;
    std::vector<std::string> argv = {
        "sbatch",
        "--parsable",
        "--job-name=tessel-" + ss.sweep_name,
        "--array=0-" + std::to_string(tasks - 1) + (o.max_parallel > 0 ? "%" + std::to_string(o.max_parallel) : ""),
        "--output=" + b.dir + "/logs/%a.out",
        "--chdir=" + b.dir,
        "--cpus-per-task=" + std::to_string(o.cpus_per_task)};
    if (!o.partition.empty()) argv.push_back("--partition=" + o.partition);
    if (!o.time.empty()) argv.push_back("--time=" + o.time);
    for (const auto& a : o.sbatch_args) argv.push_back(a);
    argv.push_back(script);
    std::string out;
    const int rc = run_capture(argv, out);
    if (rc == 127 && out.empty()) throw input_error("the slurm backend needs sbatch, which is not on PATH");
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
    if (rc != 0)
        throw input_error("sbatch refused the job (exit " + std::to_string(rc) + "): " + trim(out) +
                          "\n  command: " + cmd);
    return sbatch_job_id(out);
}

}  // namespace

bool run_slurm(const std::vector<job>& jobs, const run_settings& rs, const slurm_settings& ss, results_store& store,
               const local_pool::done_fn& on_row, const local_pool::tick_fn& tick, std::ostream& log) {
    const std::string root = store.dir() + "/slurm";
    std::error_code ec;
    fs::create_directories(root, ec);
    std::map<std::string, const job*> by_key;
    for (const auto& j : jobs) by_key[j.key] = &j;

    sigset_t stop_set, old_set;
    sigemptyset(&stop_set);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop_set, s);
    sigprocmask(SIG_BLOCK, &stop_set, &old_set);
    struct restore {
        sigset_t set;
        ~restore() { sigprocmask(SIG_SETMASK, &set, nullptr); }
    } restore_mask{old_set};

    auto notify = [&](const std::string& key, const row& r) {
        const auto it = by_key.find(key);
        if (it != by_key.end() && on_row) on_row(*it->second, r);
    };

    // Rows earlier runs left unmerged (a runner killed while its job went on).
    std::set<std::string> done;
    for (const auto& e : fs::directory_iterator(root, ec))
        if (e.is_directory()) {
            const auto m = merge_rows(e.path().string(), store, notify);
            done.insert(m.begin(), m.end());
        }

    // Follows one submitted batch until every point has a row or the job has left the queue.
    auto follow = [&](const batch& b) -> bool {
        // Rows a runner before this one already merged from this job.
        for (const auto& j : b.jobs) {
            const auto it = store.latest().find(j.key);
            if (it != store.latest().end() && it->second.value("slurm_job", "").rfind(b.job_id + "_", 0) == 0)
                done.insert(j.key);
        }
        int squeue_failures = 0;
        // After the job has left the queue, rows written on other nodes may take a moment to be visible
        // here (a shared file system's attribute cache): wait a little before calling a point lost.
        std::optional<std::chrono::steady_clock::time_point> gone_since;
        const auto grace = std::chrono::duration<double>(std::min(10.0, std::max(1.0, 2 * ss.poll_s)));
        auto next_poll = std::chrono::steady_clock::now();
        while (true) {
            const auto m = merge_rows(b.dir, store, notify);
            done.insert(m.begin(), m.end());
            bool all = true;
            for (const auto& j : b.jobs) all &= done.count(j.key) > 0;
            if (all) return true;
            bool active = true;
            if (std::chrono::steady_clock::now() >= next_poll) {
                try {
                    active = job_active(b.job_id);
                    squeue_failures = 0;
                } catch (const squeue_failed& e) {
                    // A controller that is busy or restarting answers again soon; give it a minute or so.
                    if (++squeue_failures > 30)
                        throw input_error(std::string(e.what()) + ", " + std::to_string(squeue_failures) +
                                          " times in a row; Slurm job " + b.job_id +
                                          " may still be running: run the same command again to attach to it, "
                                          "or cancel it with: scancel " +
                                          b.job_id);
                    if (squeue_failures == 1) log << "tessel sweep: " << e.what() << " (retrying)\n";
                }
                next_poll =
                    std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(ss.poll_s));
            }
            if (!active && !gone_since) gone_since = std::chrono::steady_clock::now();
            if (gone_since && std::chrono::steady_clock::now() - *gone_since >= grace) {
                const auto last = merge_rows(b.dir, store, notify);
                done.insert(last.begin(), last.end());
                const auto states = task_states(b.job_id);
                std::set<size_t> reported;
                for (size_t i = 0; i < b.jobs.size(); ++i) {
                    const job& j = b.jobs[i];
                    if (done.count(j.key)) continue;
                    const size_t task = b.task_of(i);
                    const std::string id = b.job_id + "_" + std::to_string(task);
                    const auto st = states.find(id);
                    const std::string state = st == states.end() ? "state unknown" : st->second;
                    std::string why = "Slurm task " + id + " (";
                    why.append(state).append(") ended without a result for this point; log: ").append(b.log_of(task));
                    row r = make_failed_row(j, why, rs);
                    r["slurm_job"] = id;
                    store.append(r);
                    done.insert(j.key);
                    notify(j.key, r);
                    if (reported.insert(task).second) log << "tessel sweep: " << why << "\n";
                }
                return true;
            }
            if (tick) tick();
            if (const int sig = sleep_or_signal(std::min(0.25, ss.poll_s), stop_set)) {
                log << "\ntessel sweep: interrupted (" << strsignal(sig) << "); Slurm job " << b.job_id
                    << " keeps running. Run the same command again to collect its results, or cancel it with: scancel "
                    << b.job_id << "\n";
                return false;
            }
        }
    };

    // A job an earlier runner submitted and was interrupted while following.
    const std::string active_file = root + "/active";
    if (fs::exists(active_file, ec)) {
        std::istringstream is(read_text(active_file));
        std::string job_id, dir;
        is >> job_id >> dir;
        if (!job_id.empty() && fs::exists(dir + "/tasks.json", ec)) {
            batch b = load_batch(dir);
            b.job_id = job_id;
            log << "tessel sweep: attaching to Slurm job " << job_id << " submitted earlier (" << b.jobs.size()
                << " points)\n";
            if (!follow(b)) return false;
            for (const auto& j : b.jobs) done.insert(j.key);
        }
        fs::remove(active_file, ec);
    }

    std::vector<job> todo;
    for (const auto& j : jobs)
        if (!done.count(j.key)) todo.push_back(j);
    if (todo.empty()) return true;

    // A new submission.
    int n = 1;
    for (const auto& e : fs::directory_iterator(root, ec))
        if (e.is_directory()) n = std::max(n, std::atoi(e.path().filename().c_str()) + 1);
    batch b;
    b.dir = fs::absolute(fs::path(root) / std::to_string(n), ec).lexically_normal().string();
    b.jobs = todo;
    const slurm_options& o = ss.options;
    b.points_per_task =
        o.points_per_task > 0 ? size_t(o.points_per_task) : (todo.size() + max_array_tasks - 1) / max_array_tasks;
    const size_t tasks = (todo.size() + b.points_per_task - 1) / b.points_per_task;
    const std::string script = write_batch(b, n, rs, ss);
    b.job_id = submit_batch(b, tasks, script, ss);
    write_durable(active_file, b.job_id + " " + b.dir + "\n");
    log << "tessel sweep: submitted Slurm job " << b.job_id << ": " << tasks << " array task" << (tasks == 1 ? "" : "s")
        << ", " << b.points_per_task << " point" << (b.points_per_task == 1 ? "" : "s") << " each; logs in " << b.dir
        << "/logs\n";
    if (!follow(b)) return false;
    fs::remove(active_file, ec);
    return true;
}

int run_slurm_task(const std::string& path, long index, std::ostream& log) {
    task_file t;
    try {
        t = read_task_file(path);
    } catch (const input_error& e) {
        log << "tessel sweep-task: error: " << e.what() << "\n";
        return 2;
    }
    const std::vector<job> mine = t.task(index);
    if (mine.empty()) {
        log << "tessel sweep-task: error: task " << index << " has no points in '" << path << "'\n";
        return 2;
    }
    const run_settings& rs = t.run;
    const std::string& rows = t.rows;
    int cpus = t.cpus_per_task;
    if (const char* c = std::getenv("SLURM_CPUS_PER_TASK")) cpus = std::max(1, std::atoi(c));
    local_pool pool;
    const std::string array_job = std::getenv("SLURM_ARRAY_JOB_ID") ? std::getenv("SLURM_ARRAY_JOB_ID") : "?";
    const bool finished = pool.run(mine, cpus, rs, [&](const job& j, const row& done_row) {
        row r = done_row;
        r["slurm_job"] = array_job + "_" + std::to_string(index);
        write_durable(rows + "/" + j.key + ".json",
                      r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        log << "point " << j.index << " (" << j.key << "): " << r["status"].get<std::string>()
            << (r["error"].get<std::string>().empty() ? "" : ": " + r["error"].get<std::string>()) << "\n";
    });
    if (!finished) {
        log << "tessel sweep-task: stopped by " << strsignal(pool.stopped_by()) << "\n";
        return 128 + pool.stopped_by();
    }
    return 0;
}

}  // namespace tessel::sweep
