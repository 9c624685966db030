#include "engine/plan/layer_estimate.h"

#include <unistd.h>

#include <filesystem>

#include "engine/run/session.h"
#include "engine/sweep/generated_spec.h"
#include "engine/sweep/runner.h"
#include "engine/system/layer_sample.h"
#include "models/core/error.h"
#include "models/core/output_file.h"
#include "models/core/units.h"
#include "models/core/yaml_node.h"

namespace fs = std::filesystem;

namespace tessel {

iteration_figures iteration_of(const nlohmann::json& s) {
    const nlohmann::json& par = s.contains("parallel") ? s["parallel"] : nlohmann::json::object();
    const nlohmann::json& est = par.contains("estimate") ? par["estimate"] : nlohmann::json::object();
    iteration_figures f;
    f.seconds = est.value("iteration_s", s.value("sim_time_s", 0.0));
    f.flop_seconds = f.seconds * est.value("model_flops_utilisation", par.value("model_flops_utilisation", 0.0));
    // A window trains its share of the iteration's samples.
    const double share = est.value("microbatches_simulated", 1.0) / est.value("microbatches", 1.0);
    f.samples = s.value("throughput_per_s", 0.0) * s.value("sim_time_s", 0.0) / share;
    if (!est.contains("iteration_s")) f.joules = s.value("energy_j", 0.0);
    return f;
}

namespace {

/// The folder the samples run in: the user's, or a temporary one that goes when the estimate is made (and stays
/// when a sample failed, so that the folder its error names still holds the sample's log).
class sample_folder {
public:
    explicit sample_folder(const std::string& out_dir) {
        if (!out_dir.empty()) {
            m_path = (fs::absolute(out_dir) / "samples").lexically_normal().string();
            return;
        }
        m_path = (fs::temp_directory_path() / ("tessel-estimate-" + std::to_string(::getpid()))).string();
        m_temporary = true;
    }
    ~sample_folder() {
        std::error_code ec;
        if (m_temporary) fs::remove_all(m_path, ec);
    }
    void keep() { m_temporary = false; }
    sample_folder(const sample_folder&) = delete;
    sample_folder& operator=(const sample_folder&) = delete;
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    bool m_temporary = false;
};

/// The run of the sample with `per_chunk` layers a chunk.
sweep::job sample_job(const layer_estimate_request& r, const std::string& folder, int per_chunk) {
    sweep::job j;
    j.index = static_cast<size_t>(per_chunk - r.per_chunk);
    j.key = std::to_string(per_chunk) + "-layers";
    j.params = {{"mapper.sample_layers", std::to_string(per_chunk)}};
    j.dir = folder + "/" + j.key;
    j.rel_dir = j.key;
    j.argv = {sweep::point_exe(), "run", "-p", r.platform, "-w", sweep::absolute_if_file(r.workload)};
    for (const std::string& s : r.sets) j.argv.insert(j.argv.end(), {"--set", s});
    j.argv.insert(j.argv.end(),
                  {"--set", "mapper.sample_layers=" + std::to_string(per_chunk), "--out", j.dir, "-q", "--no-stats"});
    return j;
}

std::string layers_text(std::int64_t n) { return std::to_string(n) + (n == 1 ? " layer" : " layers"); }

}  // namespace

nlohmann::json estimate_from_layers(const layer_estimate_request& r) {
    if (r.per_chunk < 1) throw input_error("--estimate-layers: needs at least 1 layer per pipeline chunk");
    for (const std::string& s : r.sets) {
        const std::string k = split_set(s).first;
        if (k == "mapper.sample_layers" || k == "mapper.layers_of")
            throw input_error("--set " + k + ": --estimate-layers sets it for each sample; leave it out");
    }
    // A system's file lists its chips; the samples ask its plan for the pipeline chunks.
    const yaml_node root = yaml_node::load_file(r.platform);
    if (!root.is_map() || !root.has("chips"))
        throw input_error("--estimate-layers: '" + r.platform_name +
                          "' is not a system (platforms/systems/: a file with chips:); it samples a system's "
                          "parallel plan, pipeline chunk by chunk; run a single chip whole");
    sample_folder folder(r.out_dir);
    fs::create_directories(folder.path());
    std::vector<sweep::job> jobs;
    for (const int k : {r.per_chunk, r.per_chunk + 1}) jobs.push_back(sample_job(r, folder.path(), k));
    sweep::run_settings rs;
    rs.tessel = jobs.front().argv.front();
    std::vector<sweep::row> rows(jobs.size());
    sweep::local_pool pool;
    if (!pool.run(jobs, r.jobs, rs, [&](const sweep::job& j, const sweep::row& row) { rows[j.index] = row; }))
        throw input_error("--estimate-layers: interrupted (signal " + std::to_string(pool.stopped_by()) +
                          ") before its samples finished");
    std::vector<nlohmann::json> sums;
    for (size_t i = 0; i < jobs.size(); ++i) {
        const std::string what = "the sample of " + layers_text(r.per_chunk + static_cast<int>(i)) +
                                 " per pipeline chunk (" + jobs[i].dir + ")";
        if (rows[i].value("status", "failed") != "ok") {
            folder.keep();
            std::string why = rows[i].value("error", "no error reported");
            for (const std::string prefix : {"tessel: error: ", "tessel: "})
                if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
            throw input_error(std::string(what)
                                  .append(" failed: ")
                                  .append(why)
                                  .append(" (its log: ")
                                  .append(jobs[i].dir)
                                  .append("/log.txt)"));
        }
        sums.push_back(sweep::point_summary(folder.path(), rows[i]));
        if (!sums.back().value("parallel", nlohmann::json::object()).contains("layer_sample"))
            throw input_error(what + " reports no layer sample (parallel.layer_sample in its summary.json): '" +
                              r.platform_name + "' did not map the workload with the system mapper");
    }
    const nlohmann::json& lo_sample = sums[0]["parallel"]["layer_sample"];
    const nlohmann::json& hi_sample = sums[1]["parallel"]["layer_sample"];
    layer_sample ls;
    ls.layers = lo_sample.value("model_layers", std::int64_t{0});
    ls.low = lo_sample.value("layers", std::int64_t{0});
    ls.high = hi_sample.value("layers", std::int64_t{0});
    const iteration_figures lo = iteration_of(sums[0]), hi = iteration_of(sums[1]);
    iteration_figures model = lo;
    if (ls.low < ls.layers) {  // else the model has no more than K layers a chunk: the first sample is the model
        if (hi.seconds < lo.seconds)
            throw input_error("--estimate-layers: the sample with a layer more per pipeline chunk took less time (" +
                              format_time(hi.seconds) + " against " + format_time(lo.seconds) +
                              "), so the model's layers cannot be counted from the difference; run it whole");
        model.seconds = ls.model(lo.seconds, hi.seconds);
        model.flop_seconds = ls.model(lo.flop_seconds, hi.flop_seconds);
        if (lo.joules && hi.joules) model.joules = ls.model(*lo.joules, *hi.joules);
    }
    const nlohmann::json& par = sums[0].value("parallel", nlohmann::json::object());
    nlohmann::json e;
    e["platform"] = sums[0].value("platform", "");
    e["workload"] = sums[0].value("workload", "");
    e["validation"] = sums[0].value("validation", "");
    e["sim_time_s"] = model.seconds;
    e["samples"] = lo.samples;
    e["throughput_per_s"] = model.seconds > 0 ? lo.samples / model.seconds : 0.0;
    e["model_flops_utilisation"] = model.seconds > 0 ? model.flop_seconds / model.seconds : 0.0;
    if (model.joules) {
        e["energy_j"] = *model.joules;
        e["average_power_w"] = model.seconds > 0 ? *model.joules / model.seconds : 0.0;
    }
    e["parallel"] = nlohmann::json::object();
    for (const char* k : {"plan", "chips", "dp", "tp", "pp", "interleave", "microbatch", "microbatches", "recompute",
                          "zero", "microbatches_simulated"})
        if (par.contains(k)) e["parallel"][k] = par[k];
    nlohmann::json runs = nlohmann::json::array();
    for (size_t i = 0; i < sums.size(); ++i) {
        const iteration_figures f = i == 0 ? lo : hi;
        runs.push_back({{"layers", sums[i]["parallel"]["layer_sample"].value("layers", std::int64_t{0})},
                        {"per_chunk", r.per_chunk + static_cast<int>(i)},
                        {"iteration_s", f.seconds},
                        {"windowed", !f.joules.has_value()},
                        {"wall_s", rows[i].value("wall_s", 0.0)},
                        {"dir", r.out_dir.empty() ? "" : jobs[i].dir}});
    }
    e["estimate"] = {{"model_layers", ls.layers},
                     {"chunks", lo_sample.value("chunks", std::int64_t{1})},
                     {"whole", ls.low >= ls.layers},
                     {"rule", "t(model) = t(low) + (model_layers - low) / (high - low) x (t(high) - t(low))"},
                     {"runs", runs}};
    if (!r.out_dir.empty()) write_file_atomic(r.out_dir + "/summary.json", e.dump(2) + "\n", "estimate summary", true);
    return e;
}

void print_layer_estimate(const nlohmann::json& e, std::ostream& out) {
    const nlohmann::json& est = e["estimate"];
    const nlohmann::json& runs = est["runs"];
    const nlohmann::json& par = e["parallel"];
    const auto at = [](const nlohmann::json& run) { return format_time(run.value("iteration_s", 0.0)); };
    out << e.value("workload", "") << " on " << e.value("platform", "");
    if (par.contains("plan")) out << ", " << par["plan"].get<std::string>();
    out << ": ";
    const std::int64_t layers = est.value("model_layers", std::int64_t{0});
    if (est.value("whole", false))
        out << "simulated whole (its " << layers << " layers are no more than " << runs[0].value("per_chunk", 0)
            << " per pipeline chunk)\n";
    else
        out << "estimated from samples of " << runs[0].value("layers", std::int64_t{0}) << " and "
            << layers_text(runs[1].value("layers", std::int64_t{0})) << " of its " << layers << " ("
            << runs[0].value("per_chunk", 0) << " and " << runs[1].value("per_chunk", 0) << " per pipeline chunk, "
            << est.value("chunks", std::int64_t{1})
            << (est.value("chunks", std::int64_t{1}) == 1 ? " chunk" : " chunks") << ")\n";
    char line[160];
    std::snprintf(line, sizeof line, "  %-12s %s\n", "iteration", format_time(e.value("sim_time_s", 0.0)).c_str());
    out << line;
    std::snprintf(line, sizeof line, "  %-12s %s samples/s\n", "throughput",
                  format_number(e.value("throughput_per_s", 0.0)).c_str());
    out << line;
    std::snprintf(line, sizeof line, "  %-12s %s%%\n", "MFU",
                  format_number(100 * e.value("model_flops_utilisation", 0.0), 3).c_str());
    out << line;
    if (e.contains("energy_j"))
        std::snprintf(line, sizeof line, "  %-12s %s per iteration, %s on average\n", "energy",
                      format_energy(e["energy_j"].get<double>()).c_str(),
                      format_power(e.value("average_power_w", 0.0)).c_str());
    else
        std::snprintf(line, sizeof line, "  %-12s not estimated: the samples ran a window of microbatches\n", "energy");
    out << line;
    if (!est.value("whole", false))
        out << "  samples      " << at(runs[0]) << " with " << layers_text(runs[0].value("layers", std::int64_t{0}))
            << ", " << at(runs[1]) << " with " << runs[1].value("layers", std::int64_t{0})
            << (runs[0].value("windowed", false) ? " (each iteration from its window, mapper.window)" : "")
            << "; the other layers counted by their difference (docs/systems.md, \"A sample of layers\")\n";
    if (!e.value("validation", "").empty()) out << "  validation   " << e["validation"].get<std::string>() << "\n";
    if (!runs[0].value("dir", "").empty())
        out << "  the samples' runs: " << runs[0]["dir"].get<std::string>() << ", " << runs[1]["dir"].get<std::string>()
            << "\n";
}

}  // namespace tessel
