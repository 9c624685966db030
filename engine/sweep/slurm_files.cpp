#include "engine/sweep/slurm_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "engine/sweep/results.h"
#include "models/core/error.h"
#include "models/core/limits.h"

namespace tessel::sweep {

namespace {

// More CPUs than any node has: a task file asking for them was not written by tessel sweep.
constexpr int max_cpus_per_task = 1 << 16;

using json = nlohmann::json;

/// The lines of `text`, each trimmed, with its '|'-separated fields trimmed.
std::vector<std::vector<std::string>> field_lines(const std::string& text) {
    std::vector<std::vector<std::string>> lines;
    std::istringstream is(text);
    for (std::string line; std::getline(is, line);) {
        std::vector<std::string> f;
        std::stringstream ls(line);
        for (std::string x; std::getline(ls, x, '|');) f.push_back(trim(x));
        lines.push_back(std::move(f));
    }
    return lines;
}

/// A point's key names its row file (rows/KEY.json): a plain file name, so no edit can write elsewhere.
bool plain_name(const std::string& s) {
    return !s.empty() && s != "." && s != ".." && s.size() <= 255 && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
}

json metrics_to_json(const std::vector<metric>& metrics) {
    json a = json::array();
    for (const auto& m : metrics) {
        json j;
        j["name"] = m.name;
        if (m.expr)
            j["expr"] = m.expr->expr.text();
        else
            j["path"] = m.path;
        a.push_back(j);
    }
    return a;
}

std::vector<metric> metrics_from_json(const json& a) {
    std::vector<metric> out;
    for (const auto& j : a) {
        metric m;
        m.name = j.at("name").get<std::string>();
        if (j.contains("expr")) {
            const std::string text = j["expr"].get<std::string>();
            try {
                m.expr = located_expr{expression::parse(text), {}, false};
            } catch (const expr_error& e) {
                throw input_error("metric " + m.name + ": '" + text + "': " + e.what());
            }
        } else {
            m.path = j.at("path").get<std::string>();
        }
        out.push_back(std::move(m));
    }
    return out;
}

json job_to_json(const job& j) {
    json o;
    o["point"] = j.index;
    o["key"] = j.key;
    json params = json::array();
    for (const auto& p : j.params) params.push_back({p.name, p.value});
    o["params"] = params;
    o["argv"] = j.argv;
    o["dir"] = j.dir;
    o["rel_dir"] = j.rel_dir;
    return o;
}

/// A count field of a task file: a whole number of at least 0. nlohmann converts a real (7.8e33) to an integer
/// type by a plain cast, which is undefined beyond the type's range (found by the Slurm fuzz harness).
std::uint64_t count_field(const json& v, const std::string& what) {
    if (!v.is_number_unsigned()) throw input_error(what + " is not a whole number of at least 0");
    return v.get<std::uint64_t>();
}

job job_from_json(const json& o) {
    job j;
    j.index = count_field(o.at("point"), "a point's number");
    j.key = o.at("key").get<std::string>();
    if (!plain_name(j.key)) throw input_error("a point's key '" + j.key + "' is not a plain file name");
    for (const auto& p : o.at("params")) j.params.push_back({p.at(0).get<std::string>(), p.at(1).get<std::string>()});
    j.argv = o.at("argv").get<std::vector<std::string>>();
    if (j.argv.empty()) throw input_error("point " + j.key + " has no command (argv)");
    j.dir = o.at("dir").get<std::string>();
    j.rel_dir = o.at("rel_dir").get<std::string>();
    return j;
}

}  // namespace

std::string trim(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    s.erase(0, s.find_first_not_of(" \t\r\n"));
    return s;
}

std::vector<job> task_file::task(long index) const {
    if (index < 0 || jobs.empty()) return {};
    const size_t tasks = (jobs.size() - 1) / points_per_task + 1;
    if (static_cast<unsigned long>(index) >= tasks) return {};
    const size_t first = static_cast<size_t>(index) * points_per_task;
    const size_t last = std::min(jobs.size(), first + points_per_task);
    return {jobs.begin() + static_cast<std::ptrdiff_t>(first), jobs.begin() + static_cast<std::ptrdiff_t>(last)};
}

std::string task_file_json(const task_file& t) {
    json o;
    o["sweep"] = t.sweep;
    o["tessel"] = t.run.tessel;
    o["build"] = t.run.build;
    o["timeout_s"] = t.run.timeout_s;
    o["metrics"] = metrics_to_json(t.run.metrics);
    o["points_per_task"] = t.points_per_task;
    o["cpus_per_task"] = t.cpus_per_task;
    o["rows"] = t.rows;
    o["jobs"] = json::array();
    for (const auto& j : t.jobs) o["jobs"].push_back(job_to_json(j));
    return o.dump(1) + "\n";
}

task_file read_task_file(const std::string& path) {
    require_input_file(path, "task file");
    const std::string not_ours = "'" + path + "' is not a task file tessel sweep wrote: ";
    const json o = json::parse(read_text(path), nullptr, false);
    if (o.is_discarded() || !o.is_object()) throw input_error(not_ours + "not a JSON object");
    task_file t;
    try {
        t.sweep = o.value("sweep", "");
        t.run.tessel = o.at("tessel").get<std::string>();
        t.run.build = o.value("build", "");
        t.run.timeout_s = o.at("timeout_s").get<double>();
        if (!(std::isfinite(t.run.timeout_s) && t.run.timeout_s >= 0))
            throw input_error("timeout_s is not a time in seconds");
        t.run.metrics = metrics_from_json(o.at("metrics"));
        t.run.backend = "slurm";
        t.points_per_task = count_field(o.at("points_per_task"), "points_per_task");
        if (t.points_per_task == 0) throw input_error("points_per_task is 0");
        const std::uint64_t cpus = o.contains("cpus_per_task") ? count_field(o["cpus_per_task"], "cpus_per_task") : 1;
        if (cpus < 1 || cpus > static_cast<std::uint64_t>(max_cpus_per_task))
            throw input_error("cpus_per_task is " + std::to_string(cpus));
        t.cpus_per_task = static_cast<int>(cpus);
        t.rows = o.at("rows").get<std::string>();
        for (const auto& j : o.at("jobs")) t.jobs.push_back(job_from_json(j));
    } catch (const json::exception& e) {
        throw input_error(not_ours + e.what());
    } catch (const input_error& e) {
        throw input_error(not_ours + e.message());
    }
    return t;
}

std::string sbatch_job_id(const std::string& output) {
    std::string last;
    std::istringstream is(output);
    for (std::string line; std::getline(is, line);)
        if (!trim(line).empty()) last = trim(line);
    std::string id = last.substr(0, last.find(';'));
    if (id.empty() || id.size() > 20 || id.find_first_not_of("0123456789") != std::string::npos) {
        std::string shown = trim(output);
        if (shown.size() > 200) shown = shown.substr(0, 200) + "...";
        throw input_error(
            "cannot read a job id from sbatch's output (sbatch --parsable prints JOBID[;CLUSTER] "
            "last): '" +
            shown + "'");
    }
    return id;
}

std::map<std::string, std::string> sacct_states(const std::string& output) {
    std::map<std::string, std::string> states;
    for (const auto& f : field_lines(output))
        if (f.size() >= 3 && !f[0].empty()) states[f[0]] = f[1] + " (exit " + f[2] + ")";
    return states;
}

std::map<std::string, std::string> squeue_states(const std::string& output) {
    std::map<std::string, std::string> states;
    for (const auto& f : field_lines(output))
        if (f.size() >= 2 && !f[0].empty())
            states[f[0]] = f[1] + (f.size() >= 3 && f[2] != "None" ? " (" + f[2] + ")" : "");
    return states;
}

bool squeue_active(const std::string& output) {
    static const char* const waiting[] = {"PENDING",  "RUNNING",  "CONFIGURING", "COMPLETING", "SUSPENDED",
                                          "REQUEUED", "RESIZING", "SIGNALING",   "STAGE_OUT"};
    std::istringstream is(output);
    for (std::string s; std::getline(is, s);) {
        s = trim(s);
        if (std::find(std::begin(waiting), std::end(waiting), s) != std::end(waiting)) return true;
    }
    return false;
}

}  // namespace tessel::sweep
