#include "engine/run/session.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/program/program_emit.h"
#include "engine/program/program_yaml.h"
#include "engine/report/explain/explainer.h"
#include "engine/system/system_mapper.h"
#include "engine/workload/load.h"
#include "models/baseline/kernel_device.h"
#include "models/core/fingerprint.h"
#include "models/core/output_file.h"
#include "models/core/yaml_node.h"
#include "models/interconnect/interconnect.h"

namespace tessel {

std::pair<std::string, std::string> split_set(const std::string& arg) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
        throw input_error("--set '" + arg + "': expected PATH=VALUE, e.g. --set noc.link_bandwidth=64B/cycle");
    return {arg.substr(0, eq), arg.substr(eq + 1)};
}

namespace {

tick parse_time_arg(const std::string& text, const std::string& what) {
    if (text.empty()) return 0;
    quantity q;
    try {
        q = parse_quantity(text);
    } catch (const input_error& e) {
        throw input_error(what + ": " + e.message());
    }
    if (q.dim != dimension::time && !(q.dim == dimension::scalar && q.value == 0))
        throw input_error(what + ": expected a time such as 10us, got '" + text + "'");
    if (q.value < 0)
        throw input_error(what + ": a time from the start of the run cannot be negative, got '" + text + "'");
    try {
        return seconds_to_ticks(q.value);
    } catch (const input_error& e) {
        throw input_error(what + ": " + e.message());
    }
}

void write_file(const std::string& path, const std::string& text) {
    const std::filesystem::path p(path);
    if (p.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(p.parent_path(), ec);
    }
    write_file_atomic(path, text);
}

/// An override nobody read is a typo or a parameter that does not exist: the error names the nearest one. A table
/// (rates or energies by data type) is set entry by entry, so a whole table given to --set is named as such.
void reject_unused_overrides(const param_context& ctx, const std::string& also) {
    const auto unused = ctx.unused_overrides();
    if (unused.empty()) return;
    const std::string& path = unused.front();
    std::vector<std::string> known;
    for (const auto& [k, v] : ctx.resolved()) {
        if (k == path && !v.empty() && v.front() == '{')
            throw input_error(std::string("--set ")
                                  .append(path)
                                  .append(": a table is set one entry at a time, e.g. --set ")
                                  .append(path)
                                  .append(".fp16=VALUE (it is now ")
                                  .append(v)
                                  .append(")"));
        known.push_back(k);
    }
    throw input_error("--set " + path + ": no such parameter" + did_you_mean(path, known) +
                      " (platform parameters are COMPONENT.PARAM, e.g. noc.link_bandwidth; " + also + ")");
}

}  // namespace

session::session(session_options o) : m_opt(std::move(o)) {}
session::~session() = default;

run_summary session::run() {
    if (m_opt.platform.empty()) throw input_error("no platform given (--platform FILE.yaml)");
    if (m_opt.workload.empty() && m_opt.program.empty())
        throw input_error("nothing to run: give --workload (a workload to map) or --program (a program to run)");
    if (!m_opt.workload.empty() && !m_opt.program.empty())
        throw input_error("give either --workload (a workload to map) or --program (a program to run), not both");
    std::map<std::string, std::string> given;
    for (const auto& s : m_opt.sets) {
        auto [k, v] = split_set(s);
        // Outputs must not depend on the order of the --set flags: one key with two values is refused.
        if (const auto [it, fresh] = given.emplace(k, v); !fresh && it->second != v)
            throw input_error(std::string("--set ")
                                  .append(k)
                                  .append(" is given twice, as '")
                                  .append(it->second)
                                  .append("' and as '")
                                  .append(v)
                                  .append("'; give it once"));
        if (k.rfind("workload.", 0) == 0)
            m_workload_sets[k.substr(9)] = v;
        else
            m_ctx.add_override(k, v);
    }
    trace_options to;
    to.vcd_path = m_opt.vcd;
    to.perfetto_path = m_opt.trace;
    to.scopes = m_opt.trace_scopes;
    to.from = parse_time_arg(m_opt.trace_from, "--trace-from");
    to.to = m_opt.trace_to.empty() ? max_tick : parse_time_arg(m_opt.trace_to, "--trace-to");
    if (to.to <= to.from) throw input_error("--trace-to must be later than --trace-from");
    to.merge_gap = parse_time_arg(m_opt.trace_merge, "--trace-merge");
    m_sim.trace.configure(to);

    m_platform = platform::load(m_opt.platform, m_ctx, m_sim);
    // A system's trace has one Perfetto process per chip, a track per unit inside it.
    std::vector<std::string> chips;
    for (const auto& g : m_platform->chip_groups())
        for (const platform* c : g.chips) chips.emplace_back(c->name());
    m_sim.trace.set_processes(chips);
    double flops = 0;
    std::string workload_name;
    if (!m_opt.program.empty()) {
        m_mapping.prog = load_program(m_opt.program, *m_platform, &m_ctx);
        // An emitted program carries how its mapped run weighed it (samples, chips a representative stood for).
        const yaml_node root = yaml_node::load_file(m_opt.program);
        if (root.is_map() && root.has("emitted")) {
            const emitted_scale sc = read_emitted_scale(root["emitted"], *m_platform);
            m_mapping.samples = sc.samples;
            m_mapping.traffic_scale = sc.traffic_scale;
            m_mapping.represented = sc.represented;
            m_emitted = true;
        }
        for (const step& st : m_mapping.prog.steps)
            if (st.kind == step_kind::compute) flops += m_mapping.prog.works[st.work].flops();
        if (!m_workload_sets.empty())
            throw input_error("--set workload." + m_workload_sets.begin()->first + ": a program run has no workload");
    } else {
        // The graph holds its source and overrides: a system mapper builds its stages from them.
        workload_graph g = load_workload(m_opt.workload, m_workload_sets);
        m_mapper = create_mapper(*m_platform, m_ctx);
        mapper* mp = m_mapper.get();
        reject_unused_overrides(m_ctx, "mapper options mapper.NAME; workload parameters workload.NAME");
        nlohmann::json sample;
        if (auto* sm = dynamic_cast<system_mapper*>(mp); sm && sm->sample_layers() > 0)
            sample = take_layer_sample(g, *sm);
        m_mapping = mp->map(g, *m_platform);
        if (!sample.is_null()) {
            m_mapping.details["parallel"]["layer_sample"] = sample;  // summary: parallel.layer_sample
            if (sample["layers"] != sample["model_layers"])
                m_mapping.notes.push_back("a sample of layers: " + sample["per_chunk"].dump() +
                                          " per pipeline chunk, " + sample["layers"].dump() + " of the model's " +
                                          sample["model_layers"].dump() +
                                          " (mapper.sample_layers; tessel run --estimate-layers counts the rest)");
        }
        if (!explainer_reads_kernel_records(mp->name())) {
            auto stop_recording = [&](std::uint32_t id) {
                if (kernel_device* k = m_platform->comp(id).kernels()) k->keep_records(false);
            };
            for (const std::uint32_t id : m_platform->top_level()) stop_recording(id);
            for (const auto& group : m_platform->chip_groups())
                for (const std::uint32_t first : group.first)
                    for (std::uint32_t id = first; id < first + group.components; ++id) stop_recording(id);
        }
        flops = g.total().flops * m_mapping.simulated_share;
        // What the graph's import had to guess goes first in the notes: an op of a type tessel does not model runs
        // as the bytes of its tensors alone, and every platform would "run" it, so say which and how many.
        std::map<std::string, int> unknown_types;
        for (const op_node& op : g.ops())
            if (unmodelled(op)) unknown_types[op.type.empty() ? "generic" : op.type] += 1;
        std::vector<std::string> guessed = g.notes;
        if (!unknown_types.empty()) {
            std::string types;
            int n = 0;
            for (const auto& [t, count] : unknown_types) {
                types += (types.empty() ? "" : ", ") + t + (count > 1 ? " x" + std::to_string(count) : "");
                n += count;
            }
            guessed.push_back("warning: " + std::to_string(n) + " op(s) of a type tessel does not model (" + types +
                              ") ran as memory traffic only, no arithmetic: their time and energy are a lower bound "
                              "(set flops_per_element on them in the YAML workload if you know it)");
        }
        m_mapping.notes.insert(m_mapping.notes.begin(), guessed.begin(), guessed.end());
        for (const auto& [k, v] : g.parameters)
            m_workload_resolved.append("workload.").append(k).append(": \"").append(v).append("\"\n");
        workload_name = g.name;
    }
    reject_unused_overrides(m_ctx, "a program's own parameters program.NAME");
    if (!workload_name.empty()) m_mapping.prog.name = workload_name;
    if (!m_opt.emit_program.empty()) {
        output_file file(m_opt.emit_program, "--emit-program file");
        std::ostream& out = file.stream();
        emit_header h;
        h.platform = m_opt.platform_arg.empty() ? m_opt.platform : m_opt.platform_arg;
        h.scale = {m_opt.program.empty() || m_emitted ? m_mapping.samples : 0.0, m_mapping.traffic_scale,
                   m_mapping.represented};
        h.command =
            "tessel run -p " + h.platform + (m_opt.workload.empty() ? " -g " + m_opt.program : " -w " + m_opt.workload);
        for (const auto& st : m_opt.sets) h.command += " --set " + st;
        write_emitted_program(m_mapping.prog, *m_platform, h, out);
        file.commit();
    }
    m_sim.trace.set_op_names(m_mapping.prog.op_names);
    // A symmetric system simulates some chips for all: what they spend is weighted for the whole system as it is
    // spent, so the energy ledger's by-op table and power timeline are the system's (summarise checks them).
    const auto weights = energy_weights(*m_platform, m_mapping.represented, m_mapping.traffic_scale);
    for (component* c : m_sim.components())
        if (c) c->set_energy_weight(weights[c->id()]);
    m_exec = std::make_unique<executor>("executor", *m_platform);
    m_result = m_exec->run(m_mapping.prog);
    // A hand-written program processes no samples; only a mapped workload has a throughput.
    const double samples = m_opt.program.empty() || m_emitted ? m_mapping.samples : 0.0;
    run_summary s = summarise(*m_platform, m_result, m_mapping.prog, flops, samples, m_mapping.represented,
                              m_mapping.traffic_scale);
    s.notes.insert(s.notes.begin(), m_mapping.notes.begin(), m_mapping.notes.end());
    s.details = m_mapping.details;
    if (m_mapper) explain_run(m_mapper->name(), m_mapping, *m_platform, m_result, s);
    record_stats(s, m_sim.stats);
    if (!m_opt.trace.empty()) {
        // Power over time: each window's dynamic energy over its width, plus the static power.
        const energy_ledger& led = m_sim.energy;
        const double window = ticks_to_seconds(led.bin_ticks());
        std::vector<double> watts;
        for (double j : led.bins()) watts.push_back(j / window + s.energy.static_watts);
        m_sim.trace.counter("power (W)", led.bin_ticks(), std::move(watts));
    }
    write_outputs(s);
    return s;
}

std::vector<std::string> session::trace_report() const {
    std::vector<std::string> lines;
    for (const auto& [path, format] : {std::pair{m_opt.trace, "Perfetto"}, std::pair{m_opt.vcd, "VCD"}}) {
        if (path.empty()) continue;
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(path, ec);
        lines.push_back("trace      " + path + " (" + format + "): " + std::to_string(m_sim.trace.slice_count()) +
                        " slices on " + std::to_string(m_sim.trace.track_count()) + " tracks, " +
                        (ec ? std::string("size unknown") : format_bytes(static_cast<double>(bytes))));
    }
    return lines;
}

std::string session::resolved() const { return m_platform->resolved_yaml(m_ctx) + m_workload_resolved; }

nlohmann::json session::take_layer_sample(workload_graph& g, system_mapper& sm) const {
    const auto it = g.parameters.find("layers");
    if (it == g.parameters.end())
        throw input_error("mapper.sample_layers: workload '" + m_opt.workload +
                          "' has no 'layers' parameter to sample (the transformer generators have: gpt2, bert, llama)");
    if (m_ctx.find_override("mapper.layers_of"))
        throw input_error("mapper.sample_layers sets mapper.layers_of itself (to the model's layers); leave it out");
    const std::int64_t layers = std::stoll(it->second);
    const std::int64_t chunks = std::int64_t{sm.plan().pp} * sm.plan().interleave;
    const std::int64_t run = std::min(layers, sm.sample_layers() * chunks);
    if (run < layers) {
        std::map<std::string, std::string> sets = m_workload_sets;
        sets["layers"] = std::to_string(run);
        g = load_workload(m_opt.workload, sets);
        sm.sample_of(layers);
    }
    return {{"model_layers", layers}, {"layers", run}, {"chunks", chunks}, {"per_chunk", run / chunks}};
}

void session::write_outputs(const run_summary& s) const {
    const std::string resolved_text = resolved();
    nlohmann::json j = s.to_json();
    j["tessel_version"] = TESSEL_VERSION;
    j["config_hash"] = fingerprint().add(resolved_text).hex();
    const double secs = s.sim_seconds;
    auto stats_json = [&] {
        std::ostringstream os;
        m_sim.stats.write_json(os, secs, m_opt.per_unit_stats);
        return os.str();
    };
    auto stats_csv = [&] {
        std::ostringstream os;
        m_sim.stats.write_csv(os, secs);
        return os.str();
    };
    if (!m_opt.out_dir.empty()) {
        const std::string d = m_opt.out_dir + "/";
        write_file(d + "summary.json", j.dump(2) + "\n");
        if (m_opt.unit_stats) {
            write_file(d + "stats.json", stats_json());
            write_file(d + "stats.csv", stats_csv());
        }
        write_file(d + "resolved.yaml", resolved_text);
    }
    if (!m_opt.stats_json.empty()) write_file(m_opt.stats_json, stats_json());
    if (!m_opt.stats_csv.empty()) write_file(m_opt.stats_csv, stats_csv());
    // The resolved configuration goes next to the results wherever they are.
    if (m_opt.out_dir.empty()) {
        const std::string first = !m_opt.stats_json.empty()  ? m_opt.stats_json
                                  : !m_opt.stats_csv.empty() ? m_opt.stats_csv
                                  : !m_opt.trace.empty()     ? m_opt.trace
                                                             : m_opt.vcd;
        if (!first.empty()) {
            std::filesystem::path p(first);
            write_file((p.parent_path() / (p.stem().string() + ".resolved.yaml")).string(), resolved_text);
        }
    }
    m_sim.trace.write();
    if (!m_opt.floorplan.empty()) write_floorplans(s.sim_seconds);
}

std::vector<floorplan_link> session::mesh_links(const platform::group& g, double seconds) const {
    // The mesh the grid's units sit on, port (x, y) under unit (x, y); a grid larger than this would not show
    // its links at any readable size.
    constexpr int most_per_side = 64;
    if (g.shape[0] > most_per_side || g.shape[1] > most_per_side) return {};
    const attach_point first = m_platform->attachment(g.ids.front(), -1);
    if (!first.valid()) return {};
    const interconnect& mesh = m_platform->net(first.net);
    if (mesh.port_shape() != g.shape) return {};
    for (size_t i = 0; i < g.ids.size(); ++i) {
        const attach_point a = m_platform->attachment(g.ids[i], -1);
        if (a.net != first.net || a.port != i) return {};
    }
    const std::vector<double> bytes = mesh.link_bytes();  // (y * w + x) * 5 + direction, in floorplan_link's order
    if (bytes.empty()) return {};
    const double capacity = mesh.link_bytes_per_second() * seconds;
    const int w = g.shape[0], h = g.shape[1];
    std::vector<floorplan_link> links;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (const auto dir :
                 {floorplan_link::east, floorplan_link::west, floorplan_link::north, floorplan_link::south}) {
                const int nx = x + (dir == floorplan_link::east) - (dir == floorplan_link::west);
                const int ny = y + (dir == floorplan_link::north) - (dir == floorplan_link::south);
                if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
                const size_t l = static_cast<size_t>(y * w + x) * 5 + static_cast<size_t>(dir);
                links.push_back({x, y, dir, l < bytes.size() && capacity > 0 ? bytes[l] / capacity : 0.0});
            }
    return links;
}

void session::write_floorplans(double sim_seconds) const {
    std::vector<std::pair<std::string, floorplan>> grids;
    auto regions_of = [&](const std::string& name, floorplan& fp) {
        for (const auto& [g, r] : m_mapping.regions)
            if (g == name) fp.regions.push_back(r);
    };
    const double span = sim_seconds > 0 ? sim_seconds : 1;
    // Replicated grids of single-unit compute components (tile[x,y]).
    for (const auto& g : m_platform->groups()) {
        if (g.shape.size() != 2) continue;
        if (m_platform->comp(g.ids.front()).unit_busy().size() != 1) continue;
        floorplan fp;
        fp.title = m_platform->title() + ": " + g.name + "[x,y] busy fraction";
        fp.width = g.shape[0];
        fp.height = g.shape[1];
        for (std::uint32_t id : g.ids) fp.value.push_back(m_platform->comp(id).unit_busy()[0] / span);
        regions_of(g.name, fp);
        fp.links = mesh_links(g, span);
        if (!fp.links.empty()) fp.title = m_platform->title() + ": " + g.name + "[x,y] and its links, busy fraction";
        grids.emplace_back(g.name, std::move(fp));
    }
    // Components whose units form a 2D grid (tile_array, a wafer's PE array).
    for (const auto& g : m_platform->groups()) {
        if (!g.shape.empty()) continue;
        const component& c = m_platform->comp(g.ids.front());
        const std::vector<int> shape = c.unit_shape();
        const std::vector<double> busy = c.unit_busy();
        if (shape.size() != 2 || busy.size() != c.unit_count()) continue;
        floorplan fp;
        fp.title = m_platform->title() + ": " + g.name + " busy fraction";
        fp.width = shape[0];
        fp.height = shape[1];
        for (double b : busy) fp.value.push_back(b / span);
        regions_of(g.name, fp);
        grids.emplace_back(g.name, std::move(fp));
    }
    if (grids.empty())
        throw input_error("--floorplan: platform '" + m_platform->title() +
                          "' has no 2D grid of compute units to draw");
    for (size_t i = 0; i < grids.size(); ++i) {
        grids[i].second.relative = m_opt.floorplan_relative;
        std::string path = m_opt.floorplan;
        if (i > 0) {
            const auto dot = path.rfind('.');
            path = path.substr(0, dot) + "-" + grids[i].first + path.substr(dot);
        }
        const std::filesystem::path p(path);
        if (p.has_parent_path()) {
            std::error_code ec;
            std::filesystem::create_directories(p.parent_path(), ec);
        }
        write_floorplan(grids[i].second, path);
    }
}

}  // namespace tessel
