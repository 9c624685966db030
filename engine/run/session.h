// One simulation run, from files to results: load the platform (with --set overrides), build the program
// (a hand-written program YAML, or a workload mapped by the platform's mapper), run it on the executor, then
// summarise and write the outputs asked for. `tessel run` and the tests both go through here.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/mappers/mapper.h"
#include "engine/report/floorplan.h"
#include "engine/report/summary.h"
#include "models/core/tracer.h"

namespace tessel {

class system_mapper;

struct session_options {
    std::string platform;               // platform YAML path
    std::string workload;               // workload spec (file or built-in name), or
    std::string program;                // program YAML path
    std::vector<std::string> sets;      // "path=value"
    std::string out_dir;                // writes summary.json, stats.json, stats.csv, resolved.yaml there
    std::string stats_json, stats_csv;  // explicit paths
    std::string vcd, trace;             // trace files
    std::vector<std::string> trace_scopes;
    std::string trace_from, trace_to;  // time window ("10us")
    std::string trace_merge;           // slices of one op on a unit closer than this become one ("100ns")
    bool per_unit_stats = false;
    bool unit_stats = true;           // with out_dir: stats.json and stats.csv beside the summary
    std::string floorplan;            // .svg or .png of the busiest 2D grid(s) of compute units
    bool floorplan_relative = false;  // colours over the units' own range of busy fractions
    std::string emit_program;         // write the program as run (program YAML, replayable with -g)
    std::string platform_arg;         // the platform as the user named it (for the emitted program)
};

class session {
public:
    explicit session(session_options o);
    ~session();

    /// Loads everything and runs; throws input_error for bad input.
    run_summary run();

    platform& plat() { return *m_platform; }
    const platform& plat() const { return *m_platform; }
    /// True once run() has loaded the platform (a run that fails in mapping still has it).
    bool loaded() const { return m_platform != nullptr; }
    const program& prog() const { return m_mapping.prog; }
    const executor::result& result() const { return m_result; }
    const param_context& context() const { return m_ctx; }
    /// The resolved configuration text (platform parameters, mapper options, workload parameters).
    std::string resolved() const;
    /// What the trace files hold, one line per file written ("trace      out/t.json: 1,234 slices ..."), for
    /// the printed report.
    std::vector<std::string> trace_report() const;

private:
    /// mapper.sample_layers: rebuilds `g` with that many layers per pipeline chunk of `sm`'s plan where its model
    /// has more, tells the mapper the model it samples, and returns the sample's record (summary: layer_sample).
    nlohmann::json take_layer_sample(workload_graph& g, system_mapper& sm) const;
    void write_outputs(const run_summary& s) const;
    void write_floorplans(double sim_seconds) const;
    /// The links of the mesh a replicated grid of units sits on, busy over `seconds` (none if it sits on none).
    std::vector<floorplan_link> mesh_links(const platform::group& g, double seconds) const;
    session_options m_opt;
    sim_context m_sim;
    param_context m_ctx;
    std::unique_ptr<platform> m_platform;
    std::unique_ptr<executor> m_exec;
    std::unique_ptr<mapper> m_mapper;
    mapping m_mapping;
    executor::result m_result;
    std::map<std::string, std::string> m_workload_sets;
    std::string m_workload_resolved;
    bool m_emitted = false;  // the program is an emitted one: it carries its mapped run's scale
};

/// Splits "a.b=c" into {"a.b", "c"}; throws input_error naming the bad argument.
std::pair<std::string, std::string> split_set(const std::string& arg);

}  // namespace tessel
