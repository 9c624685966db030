#include "engine/sweep/driver.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>

#include "engine/sweep/progress.h"
#include "engine/sweep/results.h"
#include "engine/sweep/slurm.h"
#include "engine/sweep/validate.h"
#include "models/core/error.h"

namespace tessel::sweep {

namespace fs = std::filesystem;

namespace {

std::string plural(size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

void print_table(std::ostream& out, const spec& s, const std::vector<point>& points, const results_store& store) {
    std::vector<std::string> head = {"#", "key", "status"};
    for (const auto& p : points.front().params) head.push_back(p.name);
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : points) {
        const auto it = store.latest().find(p.key);
        std::vector<std::string> r = {std::to_string(p.index), p.key,
                                      it == store.latest().end() ? "pending" : it->second.value("status", "?")};
        for (const auto& q : p.params) r.push_back(q.value);
        rows.push_back(r);
    }
    std::vector<size_t> w(head.size());
    for (size_t c = 0; c < head.size(); ++c) {
        w[c] = head[c].size();
        for (const auto& r : rows) w[c] = std::max(w[c], r[c].size());
    }
    auto line = [&](const std::vector<std::string>& r) {
        std::string l;
        for (size_t c = 0; c < r.size(); ++c) {
            std::string cell = r[c];
            if (c == 0)
                cell.insert(0, w[c] - cell.size(), ' ');
            else if (c + 1 < r.size())
                cell += std::string(w[c] - cell.size(), ' ');
            l.append(c ? "  " : "").append(cell);
        }
        out << l << "\n";
    };
    line(head);
    for (const auto& r : rows) line(r);
}

}  // namespace

namespace {

/// The command line's settings over the spec's.
void apply_overrides(const sweep_options& o, spec& s) {
    if (o.timeout_s) s.timeout_s = *o.timeout_s;
    if (o.partition) s.slurm.partition = *o.partition;
    if (o.time_limit) s.slurm.time = *o.time_limit;
    if (o.cpus_per_task) s.slurm.cpus_per_task = *o.cpus_per_task;
    if (o.points_per_task) s.slurm.points_per_task = *o.points_per_task;
    if (o.max_parallel) s.slurm.max_parallel = *o.max_parallel;
    for (const auto& a : o.sbatch_args) s.slurm.sbatch_args.push_back(a);
}

/// The sweep's tally (ok, failed, timed out, not run) and its first failures.
void print_summary(std::ostream& out, const spec& s, const expansion& ex, const results_store& store,
                   const progress& prog) {
    size_t ok = 0, failed = 0, timed_out = 0, missing = 0;
    std::vector<const row*> failures;
    for (const auto& p : ex.points) {
        const auto it = store.latest().find(p.key);
        if (it == store.latest().end()) {
            ++missing;
            continue;
        }
        const std::string st = it->second.value("status", "");
        if (st == "ok")
            ++ok;
        else {
            (st == "timeout" ? timed_out : failed)++;
            failures.push_back(&it->second);
        }
    }
    char rate[96] = "";
    if (prog.done() && prog.elapsed() > 0)
        std::snprintf(rate, sizeof rate, " in %.1fs (%.2f points/s)", prog.elapsed(),
                      double(prog.done()) / prog.elapsed());
    out << "sweep " << s.name << ": " << plural(ex.points.size(), "point") << ": " << ok << " ok, " << failed
        << " failed, " << timed_out << " timed out";
    if (missing) out << ", " << missing << " not run yet";
    out << "; this run: " << plural(prog.done(), "point") << rate << "\n";
    for (size_t i = 0; i < failures.size() && i < 5; ++i)
        out << "  point " << (*failures[i])["point"].dump() << " (" << (*failures[i])["key"].get<std::string>() << ") "
            << (*failures[i])["status"].get<std::string>() << ": " << (*failures[i])["error"].get<std::string>()
            << "\n";
    if (failures.size() > 5) out << "  ... and " << failures.size() - 5 << " more (see the error column)\n";
    out << "results: " << store.csv_path() << ", " << store.jsonl_path() << "\n";
}

}  // namespace

int run_sweep(const sweep_options& o, std::ostream& out, std::ostream& err) {
    spec s = load_spec(o.spec_file);
    apply_overrides(o, s);
    if (o.backend != "local" && o.backend != "slurm")
        throw input_error("--backend: expected local or slurm, got '" + o.backend + "'");

    const expansion ex = expand(s);
    validate_points(s, ex.points, o.resolve_platform, o.computed_params);

    const std::string out_dir = o.out_dir.empty() ? "out/sweeps/" + s.name : o.out_dir;
    std::string describe = "sweep " + s.name + ": " + plural(ex.points.size(), "point") + " (" +
                           (s.axes.size() == 1 ? std::string("1 axis") : std::to_string(s.axes.size()) + " axes");
    if (ex.filtered_out)
        describe += ", " + std::to_string(ex.filtered_out) + " of " + std::to_string(ex.combinations) +
                    " combinations filtered out";
    describe += ")";

    if (o.dry_run) {
        const results_store store(out_dir, false);
        size_t done = 0;
        for (const auto& p : ex.points) done += store.latest().count(p.key);
        out << describe << "; " << done << " done, " << ex.points.size() - done << " to run; results in " << out_dir
            << "\n";
        print_table(out, s, ex.points, store);
        return 0;
    }

    results_store store(out_dir, true);
    if (store.torn())
        err << "tessel sweep: dropped a row cut short by a crash at the end of " << store.jsonl_path()
            << "; its point runs again\n";
    if (store.bad())
        err << "tessel sweep: warning: " << store.bad() << " unreadable line(s) in " << store.jsonl_path()
            << " ignored\n";
    {
        std::ifstream in(o.spec_file, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        write_durable(out_dir + "/spec.yaml", ss.str());  // the spec these results came from
    }
    run_settings rs;
    rs.tessel = o.tessel.empty() ? point_exe() : o.tessel;
    rs.timeout_s = s.timeout_s;
    rs.metrics = s.metrics;
    rs.backend = o.backend;
    rs.build = build_id(rs.tessel);
    std::vector<job> todo;
    size_t done_before = 0, other_build = 0;
    for (const auto& p : ex.points) {
        const auto it = store.latest().find(p.key);
        const bool has = it != store.latest().end();
        const bool retry = has && o.retry_failed && it->second.value("status", "") != "ok";
        // A row says which binary made it; another build's model may give another result for the same point.
        bool other = false;
        if (has && !rs.build.empty()) {
            const auto made_by = it->second.find("tessel_build");
            other = made_by == it->second.end() || !made_by->is_string() || made_by->get<std::string>() != rs.build;
        }
        if (has && !retry && !(other && o.rerun_other_builds)) {
            ++done_before;
            other_build += other;
            continue;
        }
        todo.push_back(make_job(s, p, out_dir, rs.tessel, o.resolve_platform));
    }
    if (other_build)
        err << "tessel sweep: " << plural(other_build, "finished point") << " in " << out_dir
            << " came from another build of tessel (their rows' tessel_build is not " << rs.build
            << ", this binary's); kept as results: --rerun-other-builds runs them again\n";
    std::vector<std::string> param_cols, metric_cols;
    for (const auto& p : ex.points.front().params) param_cols.push_back(p.name);
    for (const auto& m : s.metrics) metric_cols.push_back(m.name);
    std::set<std::string> rerun;
    for (const auto& j : todo) rerun.insert(j.key);
    store.rewrite_csv(param_cols, metric_cols, rerun);

    const int jobs = o.jobs > 0 ? o.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
    err << describe << "; " << done_before << " done earlier, " << todo.size() << " to run";
    if (!todo.empty()) {
        if (o.backend == "local")
            err << " on the local backend, " << jobs << " at a time";
        else
            err << " through Slurm";
    }
    err << "; results in " << out_dir << "\n";

    progress prog(err, o.progress_bar && ::isatty(STDERR_FILENO), todo.size());
    bool finished = true;
    int stop_signal = 0;
    if (!todo.empty()) {
        auto on_done = [&](const job& j, const row& r) {
            if (o.backend == "local") store.append(r);  // the Slurm backend appends as it merges
            prog.point_done(j, r);
        };
        auto tick = [&] { prog.tick(); };
        if (o.backend == "local") {
            local_pool pool;
            finished = pool.run(todo, jobs, rs, on_done, tick);
            stop_signal = pool.stopped_by();
        } else {
            slurm_settings ss;
            ss.options = s.slurm;
            ss.poll_s = o.poll_s;
            ss.sweep_name = s.name;
            finished = run_slurm(todo, rs, ss, store, on_done, tick, err);
            if (!finished) stop_signal = SIGINT;
        }
        prog.finish();
    }

    print_summary(out, s, ex, store, prog);
    if (!finished) {
        out << "interrupted: run the same command again to resume (finished points are kept)\n";
        return 128 + (stop_signal ? stop_signal : 2);
    }
    return 0;
}

}  // namespace tessel::sweep
