#include "engine/serve/serve.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/mappers/mapper.h"
#include "engine/netlist/platform.h"
#include "engine/run/session.h"
#include "engine/serve/arrivals.h"
#include "engine/serve/batcher.h"
#include "engine/serve/kv_transfer.h"
#include "engine/serve/pareto.h"
#include "engine/serve/serve_metrics.h"
#include "engine/serve/step_table.h"
#include "engine/sweep/generated_spec.h"
#include "engine/sweep/results.h"
#include "engine/system/layer_sample.h"
#include "engine/system/memory.h"
#include "engine/system/system_mapper.h"
#include "engine/workload/source.h"
#include "models/core/error.h"
#include "models/core/output_file.h"
#include "models/core/units.h"

namespace tessel::serve {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

/// Bytes in decimal units always: format_bytes picks binary ones for an exact binary multiple, which a cache of
/// whole blocks often is, and one line would then mix MiB and MB.
std::string decimal_size(double bytes) { return format_rate(bytes, "B"); }

/// The user's --set values by who reads them.
struct split_sets {
    std::vector<std::pair<std::string, std::string>> platform;  // the platform's parameters and parallel.*
    std::map<std::string, std::string> workload, serve;
};

split_sets split_user_sets(const std::vector<std::string>& sets) {
    split_sets out;
    for (const auto& s : sets) {
        const auto [k, v] = split_set(s);
        if (k.rfind("serve.", 0) == 0)
            out.serve[k.substr(6)] = v;
        else if (k.rfind("workload.", 0) == 0)
            out.workload[k.substr(9)] = v;
        else
            out.platform.emplace_back(k, v);
    }
    for (const char* k : {"batch", "seq", "kv_cache", "mode", "tp", "training"})
        if (out.workload.count(k))
            throw input_error(std::string("--set workload.") + k +
                              ": tessel serve sets it per batch step (the requests' lengths come from "
                              "serve.prompt_tokens, serve.output_tokens or serve.trace; tensor parallelism from "
                              "parallel.tp)");
    // Serving kernels (FlashAttention, PagedAttention) read each grouped KV head once for its query heads.
    out.workload.emplace("attention", "fused");
    for (const auto& [k, v] : out.platform)
        if (k == "parallel.microbatch")
            throw input_error("--set " + k +
                              ": tessel serve sets it per batch step (a step's sequences split over the pipeline "
                              "stages)");
    return out;
}

/// The draft model's steps take the platform, its plan and the serving kernels, not the model's workload.* settings.
split_sets draft_steps_sets(const split_sets& sets) {
    split_sets d = sets;
    d.workload = {{"attention", "fused"}};
    return d;
}

/// Where the model runs: one replica's chips and its memory per chip.
struct target {
    bool system = false;
    int tp = 1, pp = 1, dp = 1;  // dp: replicas
    std::uint64_t capacity = 0;  // bytes per chip
    // On a system, per replica: its chips' memories (each stage's ranks in turn), where KV transfers go.
    std::vector<std::vector<std::string>> replica_memories;
    std::int64_t chips() const { return static_cast<std::int64_t>(tp) * pp; }
};

/// Loads the platform and its mapper. On a system whose parallel.dp the user left out, the replicas fill it:
/// dp = chips / (tp x pp), added to `sets` for the step runs.
target load_target(const serve_cli& o, const std::string& platform_file, split_sets& sets) {
    sim_context sim;
    param_context ctx;
    for (const auto& [k, v] : sets.platform) ctx.add_override(k, v);
    const std::unique_ptr<platform> plat = platform::load(platform_file, ctx, sim);
    const std::unique_ptr<mapper> m = create_mapper(*plat, ctx);
    const auto unused = ctx.unused_overrides();
    if (!unused.empty()) throw input_error("--set " + unused.front() + ": no such parameter on '" + o.platform + "'");
    target t;
    t.system = plat->is_system();
    if (const auto* sm = dynamic_cast<const system_mapper*>(m.get())) {
        if (sm->streams_weights())
            throw input_error("tessel serve: '" + o.platform +
                              "' streams its weights in every step (mapper.weights: streamed, or its chips' mapper "
                              "streams them, as a Cerebras cluster trains); serving needs the weights resident in "
                              "the chips' memory, beside the KV cache");
        t.tp = sm->plan().tp;
        t.pp = sm->plan().pp;
        t.dp = sm->plan().dp;
        const auto have = static_cast<std::int64_t>(sm->chips(*plat).chips.size());
        bool dp_set = false;
        for (const auto& kv : sets.platform) dp_set |= kv.first == "parallel.dp";
        if (!dp_set && have % t.chips() == 0) {
            t.dp = static_cast<int>(have / t.chips());
            sets.platform.emplace_back("parallel.dp", std::to_string(t.dp));
        }
        if (t.chips() * t.dp != have)
            throw input_error("tessel serve: parallel.dp x tp x pp = " + std::to_string(t.dp) + " x " +
                              std::to_string(t.tp) + " x " + std::to_string(t.pp) + ", but '" + o.platform + "' has " +
                              std::to_string(have) + " chips");
        parallel_plan plan = sm->plan();
        plan.dp = t.dp;
        t.replica_memories.resize(static_cast<std::size_t>(t.dp));
        for (int r = 0; r < t.dp; ++r)
            for (int s = 0; s < t.pp; ++s)
                for (int k = 0; k < t.tp; ++k)
                    t.replica_memories[static_cast<std::size_t>(r)].push_back(
                        sm->chip_memory_name(*plat, system_mapper::chip_of(plan, s, r, k)));
    }
    t.capacity = m->memory_capacity(*plat);
    if (t.capacity == 0)
        throw input_error("tessel serve: the '" + m->name() + "' mapper of '" + o.platform +
                          "' does not say how much memory a chip has, so the KV cache cannot be sized; serving runs "
                          "on GPUs, TPUs and systems of them (platforms/gpu, platforms/tpu, platforms/systems)");
    return t;
}

/// What one chip of a replica holds of the model: its share of the weights and of each token's keys and values.
struct footprint {
    double weight_bytes = 0;        // per chip
    double kv_bytes_per_token = 0;  // per chip, per sequence
    std::int64_t layers = 0;        // the model's repeated layers (0: the workload has no layers parameter)
};

/// A one-token decode step of one sequence: what the model holds, read from the graph of its smallest step.
workload_overrides footprint_overrides(const split_sets& sets) {
    workload_overrides ov = parse_workload_overrides(sets.workload);
    ov.batch = 1;
    ov.seq = 1;
    ov.kv_cache = 64;  // any length: the cache's bytes per token are what is read
    return ov;
}

footprint model_footprint(const workload_source& src, const split_sets& sets, const target& t) {
    workload_overrides ov = footprint_overrides(sets);
    ov.tp = t.tp;
    const std::string no_cache = "tessel serve: workload '" + src.spec() +
                                 "' has no KV cache; serving needs a decoder that caches keys and values (the llama "
                                 "generator: -w llama2-7b, llama3-8b, llama2-70b, ...)";
    workload_graph g;
    try {
        g = src.build(ov);
    } catch (const input_error& e) {
        // A workload without the parameters a serving step sets (a kv_cache) is not a cached decoder.
        if (e.message().find("no parameter") == std::string::npos) throw;
        throw input_error(no_cache + ": " + e.message());
    }
    footprint f;
    bool kv = false;
    auto ends_with = [](const std::string& s, const std::string& tail) {
        return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
    };
    for (const tensor_info& x : g.tensors()) {
        if (x.role == tensor_role::weight && x.alias_of < 0) f.weight_bytes += static_cast<double>(x.bytes());
        // A cache [batch, heads, tokens, d]: the cached tokens, and the step's own when it is appended in place.
        if (x.role == tensor_role::state && x.shape.size() == 4 &&
            (ends_with(x.name, ".k_cache") || ends_with(x.name, ".v_cache"))) {
            f.kv_bytes_per_token += static_cast<double>(x.bytes()) / static_cast<double>(x.shape[2]);
            kv = true;
        }
    }
    if (!kv) throw input_error(no_cache);
    if (const auto it = g.parameters.find("layers"); it != g.parameters.end()) f.layers = std::stoll(it->second);
    // A pipeline stage holds 1/pp of the layers (the embedding and head are left to the stages that hold them).
    f.weight_bytes /= t.pp;
    f.kv_bytes_per_token /= t.pp;
    return f;
}

/// Steps simulated with fewer layers (serve.simulated_layers): every shape runs with a layer sample's `low` and
/// `high` layers, one more a pipeline stage (engine/system/layer_sample.h).
/// tests/serve/serve_layer_sample_slow_test.cpp holds it to whole runs.
struct step_layer_sample : layer_sample {
    std::int64_t chip_weight_bytes = 0;  // the model's weights on one chip
};

step_layer_sample serve_layer_sample(const serve_options& so, const footprint& fp, int pp,
                                     const std::string& workload) {
    if (so.simulated_layers > 0 && fp.layers == 0)
        throw input_error("serve.simulated_layers: workload '" + workload +
                          "' has no layers parameter, so its steps are simulated whole (serve.simulated_layers=0)");
    step_layer_sample ls{sample_layers(fp.layers, pp, so.simulated_layers)};
    if (ls.active()) ls.chip_weight_bytes = static_cast<std::int64_t>(std::ceil(fp.weight_bytes));
    return ls;
}

/// The sweep of step shapes: one zipped axis group over batch, seq and kv_cache.
/// The microbatch of a step of `batch` sequences on `pp` stages: the largest divisor of the batch that gives every
/// stage a microbatch (at most ceil(batch / pp) sequences), so the stages overlap.
std::int64_t step_microbatch(std::int64_t batch, int pp) {
    std::int64_t mb = (batch + pp - 1) / pp;
    while (batch % mb) --mb;
    return mb;
}

std::string steps_yaml(const std::string& platform_file, const std::string& workload, const split_sets& sets,
                       const std::vector<step_shape>& shapes, const target& t, const step_layer_sample& sample) {
    sweep::generated_spec g;
    g.comment =
        "written by tessel serve: the batch-step shapes it simulates (prefill: seq tokens, kv_cache 0; "
        "decode: seq 1 over kv_cache cached tokens)";
    g.name = "serve_steps";
    g.stats = false;  // a step's summary is what serving reads; its units' statistics files went unread
    g.platform = platform_file;
    g.workload = workload;
    g.platform_sets = sets.platform;
    g.workload_sets = sets.workload;
    if (sample.active()) {
        g.workload_sets.erase("layers");  // an axis below
        // What the chips keep on chip, and their programs' form, are decided by the whole model, not the sample.
        if (t.system) {
            g.platform_sets.emplace_back("mapper.holds", std::to_string(sample.chip_weight_bytes) + "B");
            g.platform_sets.emplace_back("mapper.layers_of", std::to_string(sample.layers));
        }
    }
    // On a system every replica runs the step (the batch is the replicas' together, split by the mapper).
    std::vector<std::string> batch, seq, kv, mb, decodes, decode_kv, layers;
    bool mixed = false;
    for (const step_shape& s : shapes)
        for (const bool high : {false, true}) {
            if (high && !sample.active()) break;
            batch.push_back(std::to_string(s.batch * t.dp));
            seq.push_back(std::to_string(s.prefill ? s.length : 1));
            kv.push_back(std::to_string(s.prefill ? s.prefix : s.length));
            mb.push_back(std::to_string(step_microbatch(s.batch, t.pp)));
            decodes.push_back(std::to_string(s.decodes));
            decode_kv.push_back(std::to_string(s.decode_context));
            layers.push_back(sample.value(high));
            mixed |= s.mixed();
        }
    g.axes = {{"workload.batch", batch}, {"workload.seq", seq}, {"workload.kv_cache", kv}};
    if (sample.active()) g.axes.emplace_back("workload.layers", layers);
    // Chunked prefill's mixed steps: the decodes beside a chunk, in each replica's graph.
    if (mixed) {
        g.axes.emplace_back("workload.decode_batch", decodes);
        g.axes.emplace_back("workload.decode_kv_cache", decode_kv);
    }
    if (t.system) g.axes.emplace_back("parallel.microbatch", mb);
    return g.yaml();
}

std::string shape_label(const step_shape& s) {
    if (!s.prefill)
        return "decode of " + std::to_string(s.batch) + " sequences over " + std::to_string(s.length) +
               " cached tokens";
    std::string label = "prefill of " + std::to_string(s.batch) + " x " + std::to_string(s.length) + " tokens";
    if (s.prefix > 0) label += " over " + std::to_string(s.prefix) + " cached";
    if (s.mixed())
        label += " beside " + std::to_string(s.decodes) + " decodes over " + std::to_string(s.decode_context) +
                 " cached tokens";
    return label;
}

/// A step's key in the sweep's results: its workload parameters.
std::string step_key(const std::string& batch, const std::string& seq, const std::string& kv,
                     const std::string& decodes, const std::string& decode_kv, const std::string& layers) {
    return batch + "/" + seq + "/" + kv + "/" + decodes + "/" + decode_kv + "/" + layers;
}

/// The simulated steps, from the sweep's results; a step that failed is an input_error naming it. Also returns
/// the static (idle) power of a replica, from the smallest decode step.
step_table read_steps(const std::string& out_dir, const std::vector<step_shape>& shapes, const target& t,
                      const step_layer_sample& sample, double& idle_watts) {
    std::map<std::string, sweep::row> rows;
    const sweep::results_store store(out_dir, false);
    // In the order written, so that a step whose settings changed (another model in the same folder, which the
    // sweep re-ran under a new key) is read from its newest run.
    for (const std::string& key : store.written_order()) {
        const sweep::row& row = store.latest().at(key);
        const auto& p = row["params"];
        rows[step_key(p.value("workload.batch", ""), p.value("workload.seq", ""), p.value("workload.kv_cache", ""),
                      p.value("workload.decode_batch", "0"), p.value("workload.decode_kv_cache", "0"),
                      p.value("workload.layers", ""))] = row;
    }
    struct step_result {
        double seconds, joules, static_watts;
    };
    // One run of shape `s` (with sample.value(high) layers).
    auto result = [&](const step_shape& s, bool high) {
        const std::string key = step_key(std::to_string(s.batch * t.dp), std::to_string(s.prefill ? s.length : 1),
                                         std::to_string(s.prefill ? s.prefix : s.length), std::to_string(s.decodes),
                                         std::to_string(s.decode_context), sample.value(high));
        const auto it = rows.find(key);
        if (it == rows.end()) throw input_error("tessel serve: the " + shape_label(s) + " step has no result");
        step_result x{};
        try {
            x = sweep::read_point_summary(out_dir, it->second, [](const nlohmann::json& sum) {
                return step_result{
                    sum.value("sim_time_s", 0.0), sum.value("energy_j", 0.0),
                    sum.contains("energy_by_part_j") ? sum["energy_by_part_j"].value("static", 0.0) : 0.0};
            });
        } catch (const input_error& e) {
            throw input_error("tessel serve: the " + shape_label(s) + " step " + e.message() +
                              " (a smaller serve.max_batch or serve.max_prefill_tokens needs smaller steps" +
                              (sample.active() ? "" : ", serve.simulated_layers=2 fewer layers") + ")");
        }
        if (!(x.seconds > 0)) throw input_error("tessel serve: the " + shape_label(s) + " step took no time");
        return x;
    };
    step_table table;
    idle_watts = 0;
    for (const step_shape& s : shapes) {
        step_result x = result(s, false);
        if (sample.active()) {
            const step_result hi = result(s, true);
            if (hi.seconds < x.seconds)
                throw input_error("tessel serve: the " + shape_label(s) + " step took less time with " +
                                  std::to_string(sample.high) + " layers than with " + std::to_string(sample.low) +
                                  ", so its layers cannot be counted from the difference; simulate it whole "
                                  "(serve.simulated_layers=0)");
            x = {sample.model(x.seconds, hi.seconds), sample.model(x.joules, hi.joules),
                 sample.model(x.static_watts, hi.static_watts)};
        }
        // Energy and static power per replica (a system run's are all replicas').
        table.add(s, {x.seconds, x.joules / t.dp});
        if (!s.prefill && idle_watts == 0) idle_watts = x.static_watts / x.seconds / t.dp;
    }
    return table;
}

/// A set of step shapes to simulate: a model's (or the draft's) runs in OUT/NAME, their spec OUT/NAME.yaml.
struct step_runs {
    std::string platform_file, workload;
    split_sets sets;
    std::vector<step_shape> shapes;
    std::string out_dir, name;
    step_layer_sample sample;
};

/// Simulates `runs` as a sweep (resumable: finished runs are kept) and reads them into `table`. Returns 0, or the
/// sweep's status when interrupted.
int simulate_steps(const sweep::sweep_options& base, const step_runs& runs, const target& t, std::ostream& err,
                   step_table& table, double& idle_watts) {
    const std::string spec = runs.out_dir + "/" + (runs.name == "steps" ? "serve_steps" : runs.name) + ".yaml";
    write_file_atomic(spec, steps_yaml(runs.platform_file, runs.workload, runs.sets, runs.shapes, t, runs.sample),
                      "serve sweep", true);
    sweep::sweep_options sw = base;
    sw.spec_file = spec;
    sw.out_dir = runs.out_dir + "/" + runs.name;
    std::ostringstream sweep_out;
    const int status = sweep::run_sweep(sw, sweep_out, err);
    if (status >= 128) return status;
    table = read_steps(sw.out_dir, runs.shapes, t, runs.sample, idle_watts);
    return 0;
}

void write_requests_csv(const std::string& path, const std::vector<request>& reqs, const serve_run& run) {
    std::ostringstream c;
    c << "id,arrival_s,prompt_tokens,output_tokens,first_token_s,finish_s,ttft_s,tpot_s,e2e_s,preemptions,replica\n";
    for (const request& r : reqs) {
        const outcome& x = run.outcomes[static_cast<std::size_t>(r.id)];
        const double a = run.arrivals[static_cast<std::size_t>(r.id)];
        const double tpot =
            r.output_tokens > 1 ? (x.finish_s - x.first_token_s) / static_cast<double>(r.output_tokens - 1) : 0;
        c << r.id << "," << a << "," << r.prompt_tokens << "," << r.output_tokens << "," << x.first_token_s << ","
          << x.finish_s << "," << x.first_token_s - a << "," << tpot << "," << x.finish_s - a << "," << x.preemptions
          << "," << x.replica << "\n";
    }
    write_file_atomic(path, c.str(), "requests table", true);
}

void write_steps_csv(const std::string& path, const serve_run& run, double block_bytes) {
    std::ostringstream c;
    c << "replica,start_s,end_s,kind,batch,tokens,context,kv_bytes,energy_j\n";
    for (const step_record& s : run.steps)
        c << s.replica << "," << s.start_s << "," << s.end_s << "," << (s.prefill ? "prefill" : "decode") << ","
          << s.batch << "," << s.tokens << "," << s.context << "," << static_cast<double>(s.kv_blocks) * block_bytes
          << "," << s.energy_j << "\n";
    write_file_atomic(path, c.str(), "steps table", true);
}

// The trace holds the first steps of a long run only: Perfetto's viewer slows down past a few hundred thousand
// slices, and a file of every step of a million requests would be gigabytes.
constexpr std::size_t k_trace_steps = 100'000;

/// A Chrome/Perfetto trace, written as it goes: each replica's batch steps on a track of its own, each request as
/// two async slices (waiting and prefill until its first token, then decoding until its last). Returns whether
/// it holds the whole run (else the first k_trace_steps steps and the requests that arrived before they ended).
bool write_trace(const std::string& path, const std::vector<request>& reqs, const serve_run& run) {
    std::ostringstream t;
    t.precision(15);
    t << "{\"traceEvents\":[\n"
      << R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"batch steps"}},)"
      << "\n"
      << R"({"name":"process_name","ph":"M","pid":2,"args":{"name":"requests"}})";
    if (!run.transfers.empty())
        t << ",\n"
          << R"({"name":"process_name","ph":"M","pid":3,"args":{"name":"KV transfers"}})";
    const std::size_t steps = std::min(run.steps.size(), k_trace_steps);
    double until = 0;
    for (std::size_t i = 0; i < steps; ++i) {
        const step_record& s = run.steps[i];
        until = std::max(until, s.end_s);
        t << ",\n{\"name\":\"" << (s.prefill ? "prefill" : "decode")
          << "\",\"ph\":\"X\",\"pid\":1,\"tid\":" << s.replica << ",\"ts\":" << s.start_s * 1e6
          << ",\"dur\":" << (s.end_s - s.start_s) * 1e6 << ",\"args\":{\"batch\":" << s.batch
          << ",\"tokens\":" << s.tokens << ",\"context\":" << s.context << "}}";
    }
    const bool whole = steps == run.steps.size();
    // Disaggregated: each cache sent, on its prefill replica's row.
    for (const transfer_record& x : run.transfers) {
        if (!whole && x.start_s > until) continue;
        t << ",\n{\"name\":\"KV cache\",\"ph\":\"X\",\"pid\":3,\"tid\":" << x.from << ",\"ts\":" << x.start_s * 1e6
          << ",\"dur\":" << (x.end_s - x.start_s) * 1e6 << ",\"args\":{\"request\":" << x.request
          << ",\"tokens\":" << x.tokens << ",\"to\":" << x.to << "}}";
    }
    for (const request& r : reqs) {
        const outcome& x = run.outcomes[static_cast<std::size_t>(r.id)];
        const double a = run.arrivals[static_cast<std::size_t>(r.id)];
        if (!whole && a > until) continue;
        auto slice = [&](const char* what, double from, double to) {
            t << ",\n{\"name\":\"" << what << "\",\"cat\":\"request\",\"ph\":\"b\",\"id\":" << r.id
              << ",\"pid\":2,\"ts\":" << from * 1e6 << ",\"args\":{\"request\":" << r.id << "}}"
              << ",\n{\"name\":\"" << what << "\",\"cat\":\"request\",\"ph\":\"e\",\"id\":" << r.id
              << ",\"pid\":2,\"ts\":" << to * 1e6 << "}";
        };
        slice("to first token", a, x.first_token_s);
        if (x.finish_s > x.first_token_s) slice("decoding", x.first_token_s, x.finish_s);
    }
    t << "\n]}\n";
    write_file_atomic(path, t.str(), "serving trace", true);
    return whole;
}

std::string dist_line(const char* name, const distribution& d) {
    return std::string(name) + "mean " + format_time(d.mean) + ", p50 " + format_time(d.p50) + ", p90 " +
           format_time(d.p90) + ", p99 " + format_time(d.p99);
}

void print_report(std::ostream& out, const serve_cli& o, const serve_options& so, const serve_metrics& m,
                  std::int64_t replicas, std::int64_t shapes, const std::string& out_dir, const json& transfers,
                  const json& speculation, const step_layer_sample& sample) {
    out << "tessel serve: " << o.workload << " on " << o.platform << " (" << m.chips << " chip"
        << (m.chips == 1 ? "" : "s") << (replicas > 1 ? ", " + std::to_string(replicas) + " replicas" : "") << ")\n";
    out << "  requests:   " << m.requests << " (" << so.arrival()
        << (so.arrival() == "poisson" ? " at " + format_number(so.rate) + "/s"
            : so.arrival() == "closed"
                ? ", " + std::to_string(so.concurrency) + (so.concurrency == 1 ? " user" : " users")
                : " " + so.trace)
        << "), " << so.scheduler << " batching, max batch " << so.max_batch
        << (so.scheduler == "chunked" ? ", " + std::to_string(so.chunk) + " tokens a step" : "") << "\n";
    out << "  " << dist_line("TTFT        ", m.ttft) << "\n";
    out << "  " << dist_line("TPOT        ", m.tpot) << "\n";
    out << "  " << dist_line("end to end  ", m.e2e) << "\n";
    out << "  throughput  " << format_number(m.output_tokens_per_s) << " output tokens/s ("
        << format_number(m.output_tokens_per_s_per_chip) << " per chip), " << format_number(m.tokens_per_s_per_user)
        << " tokens/s per user\n";
    out << "  energy      " << format_energy(m.energy_j) << ", " << format_power(m.average_power_w) << " average, "
        << format_number(m.output_tokens_per_kj) << " tokens/kJ\n";
    out << "  KV cache    peak " << decimal_size(m.kv_peak_bytes) << ", mean " << decimal_size(m.kv_mean_bytes)
        << " of " << decimal_size(m.kv_capacity_bytes) << (replicas > 1 ? " per replica" : "") << "; " << m.preemptions
        << " preemption" << (m.preemptions == 1 ? "" : "s") << "\n";
    out << "  steps       " << m.prefill_steps << " prefill"
        << (m.mixed_steps > 0 ? " (" + std::to_string(m.mixed_steps) + " with decodes beside)" : "") << ", "
        << m.decode_steps << " decode (mean batch " << format_number(m.mean_decode_batch, 3) << "), from " << shapes
        << " simulated shapes"
        << (sample.active() ? " (each with " + std::to_string(sample.low) + " and " + std::to_string(sample.high) +
                                  " of its " + std::to_string(sample.layers) + " layers)"
                            : "")
        << "\n";
    if (!transfers.is_null())
        out << "  KV sent     " << transfers["count"].get<std::int64_t>() << " caches from " << so.prefill_replicas
            << " prefill to " << replicas - so.prefill_replicas << " decode replica"
            << (replicas - so.prefill_replicas == 1 ? "" : "s") << ", mean "
            << format_time(transfers["mean_s"].get<double>()) << " on the links after "
            << format_time(transfers["mean_wait_s"].get<double>()) << " waiting for them; "
            << decimal_size(transfers["bytes_per_chip"].get<double>()) << " per chip in all\n";
    if (!speculation.is_null())
        out << "  speculation " << so.speculate << " draft tokens a step from " << so.draft << ", acceptance "
            << format_number(so.acceptance) << ": "
            << format_number(speculation["tokens_per_sequence_step"].get<double>(), 3)
            << " tokens a sequence per step ("
            << format_number(speculation["expected_tokens_per_sequence_step"].get<double>(), 3) << " expected)\n";
    if (so.slo_ttft_s > 0 || so.slo_tpot_s > 0)
        out << "  SLOs        " << format_number(100 * m.slo_attainment, 3) << "% of requests met them; goodput "
            << format_number(m.goodput_requests_per_s) << " requests/s\n";
    out << "results: " << out_dir << "/summary.json, requests.csv, steps.csv, trace.json (ui.perfetto.dev)\n";
}

// A run keeps a record of every batch step (steps.csv), at most one decode step per output token: more output
// tokens than this in all (about 1.5 GB of records if every step decoded one sequence) are refused up front.
constexpr double k_max_output_tokens = 2e7;

void check_size(const std::vector<request>& reqs, const std::vector<std::int64_t>& curve) {
    double tokens = 0;
    for (const request& r : reqs) tokens += static_cast<double>(r.output_tokens);
    if (!curve.empty()) {
        // Each point serves at least 4 requests per user, of the same lengths.
        const double per_request = tokens / static_cast<double>(reqs.size());
        tokens = 0;
        for (const std::int64_t c : curve)
            tokens += std::max(static_cast<double>(reqs.size()), 4.0 * static_cast<double>(c)) * per_request;
    }
    if (tokens > k_max_output_tokens)
        throw input_error("tessel serve: " + format_number(tokens, 4) + " output tokens in all are more than a run " +
                          "simulates (" + format_number(k_max_output_tokens, 2) +
                          "): serve fewer requests (serve.requests), shorter outputs or fewer --curve points");
}

/// The model on its target: what a chip holds and the KV cache left beside the weights.
struct sized_model {
    target tg;
    footprint fp;
    footprint draft;         // speculative decoding's draft model, on the same chips (zero: none)
    double budget = 0;       // bytes per chip for weights and KV cache
    double block_bytes = 0;  // one KV block on one chip
    std::int64_t kv_blocks = 0;
};

/// What a model that does not fit needs: the smallest replica that holds its weights (tp x pp by the plan rules,
/// each stage's layers and the embedding and head where they lie), or why no split of it does.
std::string least_replica(const std::string& workload, const split_sets& sets, double budget, bool system) {
    const auto src = make_workload_source(workload);
    workload_overrides ov = footprint_overrides(sets);
    // A mixture of experts builds only the experts a step's tokens reach (balanced routing): a step of one token
    // per expert reaches them all, so every expert's weights are placed.
    const workload_graph g = src->build(ov);
    if (const auto it = g.parameters.find("experts"); it != g.parameters.end())
        ov.batch = std::max<std::int64_t>(1, std::stoll(it->second));
    const holding_plan h = smallest_holding_plan(*src, ov, budget);
    const parallel_plan& p = h.plan;
    const std::string plan = "parallel.tp=" + std::to_string(p.tp) + " x parallel.pp=" + std::to_string(p.pp);
    const std::string chips = std::to_string(p.chips()) + (p.chips() == 1 ? " chip" : " chips");
    if (!h.found)
        return "no split of this model holds them: at the most the plan rules allow (" + plan + ", " + chips +
               ") a chip still needs " + format_bytes(h.stage_weights) +
               " of weights; a narrower workload.precision or a chip with more memory";
    return "the smallest replica that holds them is " + plan + " (" + chips + ", at most " +
           format_bytes(h.stage_weights) + " of weights a chip)" +
           (system ? ", with room for the KV cache beside" : ": serve it on a system (platforms/systems)");
}

sized_model size_model(const serve_cli& o, const std::string& platform_file, const std::string& workload,
                       split_sets& sets, const serve_options& so) {
    sized_model m;
    m.tg = load_target(o, platform_file, sets);
    m.fp = model_footprint(*make_workload_source(workload), sets, m.tg);
    m.budget = so.memory_utilization * static_cast<double>(m.tg.capacity);
    if (so.speculate > 0) {
        split_sets draft_sets = draft_steps_sets(sets);
        try {
            m.draft = model_footprint(*make_workload_source(sweep::absolute_if_file(so.draft)), draft_sets, m.tg);
        } catch (const input_error& e) {
            throw input_error("serve.draft: " + e.message());
        }
        // The draft's weights sit beside the model's, its cache beside the model's cache, block for block.
        m.budget -= m.draft.weight_bytes;
        if (m.budget <= 0)
            throw input_error("does not fit: the draft model's weights need " + format_bytes(m.draft.weight_bytes) +
                              " per chip, more than the share of memory serving has");
    }
    if (m.fp.weight_bytes >= m.budget)
        throw input_error("does not fit: the weights need " + format_bytes(m.fp.weight_bytes) + " per chip, but " +
                          format_number(100 * so.memory_utilization, 3) + "% of a chip's " +
                          format_bytes(static_cast<double>(m.tg.capacity)) + " is " + format_bytes(m.budget) + "; " +
                          least_replica(workload, sets, m.budget, m.tg.system));
    m.block_bytes = (m.fp.kv_bytes_per_token + m.draft.kv_bytes_per_token) * static_cast<double>(so.block_tokens);
    m.kv_blocks = static_cast<std::int64_t>((m.budget - m.fp.weight_bytes) / m.block_bytes);
    return m;
}

/// What the step grid must cover for `reqs` served under `so` (max_batch: the largest batch any run takes).
grid_bounds bounds_for(const std::vector<request>& reqs, const serve_options& so, const sized_model& m,
                       std::int64_t max_batch) {
    grid_bounds gb;
    gb.prompt_min = gb.prompt_max = reqs.front().prompt_tokens;
    std::int64_t longest = 0;  // prompt + output - 1: a request's largest KV cache
    gb.context_min = -1;
    for (const request& r : reqs) {
        gb.prompt_min = std::min(gb.prompt_min, r.prompt_tokens);
        gb.prompt_max = std::max(gb.prompt_max, r.prompt_tokens);
        longest = std::max(longest, r.prompt_tokens + r.output_tokens - 1);
        if (r.output_tokens > 1) {
            gb.context_min = gb.context_min < 0 ? r.prompt_tokens : std::min(gb.context_min, r.prompt_tokens);
            gb.context_max = std::max(gb.context_max, r.prompt_tokens + r.output_tokens - 2);
        }
    }
    gb.kv_tokens = m.kv_blocks * so.block_tokens;
    if (gb.kv_tokens < longest)
        throw input_error("does not fit: a request of " + std::to_string(longest) + " tokens needs " +
                          format_bytes(static_cast<double>(longest) * m.fp.kv_bytes_per_token) +
                          " of KV cache per chip; " + format_bytes(m.budget - m.fp.weight_bytes) +
                          " is left beside the weights");
    gb.max_batch = std::min(max_batch, std::max<std::int64_t>(1, gb.kv_tokens / gb.prompt_min));
    gb.max_prefill_tokens = so.max_prefill_tokens;
    gb.max_prefill_batch = std::min(gb.max_batch, std::max<std::int64_t>(1, so.max_prefill_tokens / gb.prompt_min));
    // A preempted request is prefilled again over its prompt and output so far.
    if (so.scheduler != "static" && gb.kv_tokens < gb.max_batch * longest) gb.reprefill_max = longest;
    if (so.scheduler == "chunked") gb.chunk = so.chunk;
    gb.speculate = so.speculate;
    return gb;
}

/// One serving run over the simulated steps.
serve_run serve_requests(const std::vector<request>& reqs, const serve_options& so, const sized_model& m,
                         std::int64_t max_batch, const step_table& table, double idle_watts,
                         const transfer_table* transfers, const step_table* draft) {
    server_config cfg;
    cfg.continuous = so.scheduler != "static";
    cfg.chunk = so.scheduler == "chunked" ? so.chunk : 0;
    cfg.max_batch = max_batch;
    cfg.max_prefill_tokens = so.max_prefill_tokens;
    cfg.block_tokens = so.block_tokens;
    cfg.kv_blocks = m.kv_blocks;
    cfg.replicas = m.tg.dp;
    cfg.closed_loop_users = so.concurrency;
    cfg.idle_watts = idle_watts;
    cfg.prefill_replicas = static_cast<int>(so.prefill_replicas);
    cfg.transfers = transfers;
    cfg.speculate = so.speculate;
    cfg.acceptance = so.acceptance;
    cfg.seed = so.seed;
    cfg.draft = draft;
    return run_server(reqs, cfg, table);
}

/// The closed loop at each concurrency of `curve` (max batch = concurrency): latency against throughput, and the
/// points no other beats on both tokens/s per user and tokens/s per chip.
json serve_curve(const std::vector<std::int64_t>& curve, const serve_options& base, const sized_model& m,
                 std::int64_t grid_max_batch, const step_table& table, double idle_watts,
                 const transfer_table* transfers, const step_table* draft) {
    json points = json::array();
    for (const std::int64_t c : curve) {
        serve_options so = base;
        so.concurrency = c;
        so.trace.clear();
        so.requests = std::max(base.requests, 4 * c);  // every user sends several requests
        const std::int64_t batch = std::min(c, grid_max_batch);
        const auto reqs = make_requests(so);
        const serve_run run = serve_requests(reqs, so, m, batch, table, idle_watts, transfers, draft);
        const serve_metrics x = measure(reqs, run, so, m.tg.chips() * m.tg.dp, m.block_bytes, m.kv_blocks);
        json p = x.to_json();
        p["concurrency"] = c;
        p["max_batch"] = batch;
        points.push_back(p);
    }
    std::vector<json*> all;
    for (auto& p : points) all.push_back(&p);
    mark_pareto(all, "pareto");
    return points;
}

/// The KV transfers a disaggregated run needs: each chip of the first prefill replica to its counterpart in the
/// first decode replica (kv_transfer.h), at every cache length a transfer can have (the prompts', and a preempted
/// request's, prefilled again over its output so far).
kv_transfer_plan transfer_plan(const std::string& platform_file, const split_sets& sets, const sized_model& m,
                               const grid_bounds& gb, const serve_options& so, const std::string& out_dir) {
    kv_transfer_plan p;
    p.platform_file = platform_file;
    // A program run takes the platform's own parameters; the plan and the mapper's are the steps'.
    for (const auto& kv : sets.platform)
        if (kv.first.rfind("parallel.", 0) != 0 && kv.first.rfind("mapper.", 0) != 0) p.platform_sets.push_back(kv);
    const auto& from = m.tg.replica_memories.front();
    const auto& to = m.tg.replica_memories[static_cast<std::size_t>(so.prefill_replicas)];
    for (std::size_t i = 0; i < from.size(); ++i) p.routes.emplace_back(from[i], to[i]);
    p.bytes_per_token = m.fp.kv_bytes_per_token;
    std::set<std::int64_t> lengths = {gb.prompt_min, gb.prompt_max};
    if (gb.reprefill_max > 0) lengths.insert(gb.reprefill_max);
    p.lengths.assign(lengths.begin(), lengths.end());
    p.dir = out_dir + "/kv_transfers";
    return p;
}

/// Speculative decoding's yield: output tokens a sequence got per decode step, against the expectation for
/// independent acceptances with no output cut short, (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, eq. 1).
json speculation_summary(const serve_run& run, const serve_options& so) {
    double emitted = 0, slots = 0;
    for (const step_record& s : run.steps)
        if (!s.prefill) {
            emitted += static_cast<double>(s.emitted);
            slots += static_cast<double>(s.batch);
        }
    const double a = so.acceptance;
    const auto k = static_cast<double>(so.speculate);
    const double expected = a >= 1 ? k + 1 : (1 - std::pow(a, k + 1)) / (1 - a);
    return {{"draft", so.draft},
            {"speculate", so.speculate},
            {"acceptance", a},
            {"tokens_per_sequence_step", slots > 0 ? emitted / slots : 0.0},
            {"expected_tokens_per_sequence_step", expected}};
}

/// What the KV transfers of a disaggregated run took: their count, mean time on the links and waiting for them,
/// the bytes each chip sent, and the simulated transfer times by cache length.
json transfer_summary(const serve_run& run, const transfer_table& table, double bytes_per_token) {
    double wait = 0, busy = 0, tokens = 0;
    for (const transfer_record& x : run.transfers) {
        wait += x.start_s - x.ready_s;
        busy += x.end_s - x.start_s;
        tokens += static_cast<double>(x.tokens);
    }
    const double n = std::max<double>(1, static_cast<double>(run.transfers.size()));
    json points = json::object();
    for (const auto& [len, s] : table.points()) points[std::to_string(len)] = s;
    return {{"count", run.transfers.size()},
            {"mean_s", busy / n},
            {"mean_wait_s", wait / n},
            {"bytes_per_chip", tokens * bytes_per_token},
            {"simulated_s_by_tokens", points}};
}

void print_curve(std::ostream& out, const serve_cli& o, const json& points, std::int64_t chips,
                 const std::string& out_dir) {
    out << "tessel serve: " << o.workload << " on " << o.platform << " (" << chips << " chip" << (chips == 1 ? "" : "s")
        << "), a closed loop of N users at a batch cap of N\n";
    out << "   users   TTFT p50   TPOT p50   tokens/s per user   tokens/s per chip   tokens/kJ\n";
    for (const auto& p : points) {
        char line[160];
        std::snprintf(line, sizeof line, "  %6lld %10s %10s %19s %19s %11s%s\n",
                      static_cast<long long>(p["concurrency"].get<std::int64_t>()),
                      format_time(p["ttft_s"]["p50"].get<double>()).c_str(),
                      format_time(p["tpot_s"]["p50"].get<double>()).c_str(),
                      format_number(p["tokens_per_s_per_user"].get<double>()).c_str(),
                      format_number(p["output_tokens_per_s_per_chip"].get<double>()).c_str(),
                      format_number(p["output_tokens_per_kj"].get<double>()).c_str(),
                      p["pareto"].get<bool>() ? "" : "  (beaten)");
        out << line;
    }
    out << "results: " << out_dir << "/curve.json\n";
}

}  // namespace

int run_serve(const serve_cli& o, std::ostream& out, std::ostream& err) {
    if (o.platform.empty()) throw input_error("tessel serve: no platform given (-p NAME or a YAML file)");
    if (o.workload.empty()) throw input_error("tessel serve: no workload given (-w llama2-7b, llama3-8b, ...)");
    split_sets sets = split_user_sets(o.sets);
    const serve_options so = parse_serve_options(sets.serve);
    if (!o.curve.empty() && (!so.trace.empty() || so.concurrency > 0))
        throw input_error("--curve sets the closed loop's users itself; leave out serve.trace and serve.concurrency");
    const std::string platform_file = o.sweep.resolve_platform ? o.sweep.resolve_platform(o.platform) : o.platform;
    const std::string workload = sweep::absolute_if_file(o.workload);
    const sized_model m = size_model(o, platform_file, workload, sets, so);
    const std::int64_t replicas = m.tg.dp;
    if (so.prefill_replicas > 0 && (!m.tg.system || so.prefill_replicas >= replicas))
        throw input_error("serve.prefill_replicas: " + std::to_string(so.prefill_replicas) + " of " +
                          std::to_string(replicas) +
                          " replicas leaves none to decode; disaggregated serving needs a system (platforms/systems) "
                          "of at least two replicas of parallel.tp x parallel.pp chips");

    // The requests, and the steps they can meet (with --curve, at the most users).
    std::int64_t most = so.max_batch;
    for (const std::int64_t c : o.curve) most = std::max(most, c);
    const std::vector<request> reqs = make_requests(so);
    check_size(reqs, o.curve);
    const grid_bounds gb = bounds_for(reqs, so, m, o.curve.empty() ? so.max_batch : most);
    const std::vector<step_shape> shapes = step_grid(gb);
    const std::string out_dir = o.out_dir.empty() ? "out/serve/" + fs::path(platform_file).stem().string() + "-" +
                                                        fs::path(o.workload).stem().string()
                                                  : o.out_dir;
    fs::create_directories(out_dir);
    double idle_watts = 0, draft_idle_watts = 0;
    step_table table, draft;
    const step_layer_sample sample = serve_layer_sample(so, m.fp, m.tg.pp, o.workload);
    if (const int status = simulate_steps(o.sweep, {platform_file, workload, sets, shapes, out_dir, "steps", sample},
                                          m.tg, err, table, idle_watts))
        return status;
    if (so.speculate > 0) {
        // The draft's steps: its prefills, and its decodes over the contexts its draft tokens reach.
        grid_bounds dg = gb;
        dg.speculate = 0;
        dg.context_max += so.speculate;
        dg.kv_tokens += gb.max_batch * so.speculate;
        const std::vector<step_shape> draft_shapes = step_grid(dg);
        if (const int status =
                simulate_steps(o.sweep,
                               {platform_file, sweep::absolute_if_file(so.draft), draft_steps_sets(sets), draft_shapes,
                                out_dir, "draft_steps", serve_layer_sample(so, m.draft, m.tg.pp, so.draft)},
                               m.tg, err, draft, draft_idle_watts))
            return status;
    }
    const step_table* draft_or_null = so.speculate > 0 ? &draft : nullptr;
    transfer_table transfers;
    if (so.prefill_replicas > 0) {
        int kv_status = 0;
        if (!simulate_kv_transfers(transfer_plan(platform_file, sets, m, gb, so, out_dir), o.sweep, err, transfers,
                                   kv_status))
            return kv_status;
    }
    const transfer_table* transfers_or_null = so.prefill_replicas > 0 ? &transfers : nullptr;

    if (!o.curve.empty()) {
        json doc = {{"platform", o.platform},
                    {"workload", o.workload},
                    {"sets", o.sets},
                    {"chips", m.tg.chips() * replicas},
                    {"replicas", replicas}};
        doc["points"] = serve_curve(o.curve, so, m, gb.max_batch, table, idle_watts, transfers_or_null, draft_or_null);
        write_file_atomic(out_dir + "/curve.json", doc.dump(2) + "\n", "serving curve", true);
        if (o.json)
            out << doc.dump(2) << "\n";
        else
            print_curve(out, o, doc["points"], m.tg.chips() * replicas, out_dir);
        return 0;
    }

    const serve_run run =
        serve_requests(reqs, so, m, gb.max_batch, table, idle_watts, transfers_or_null, draft_or_null);
    const serve_metrics x = measure(reqs, run, so, m.tg.chips() * replicas, m.block_bytes, m.kv_blocks);
    json doc = x.to_json();
    doc["platform"] = o.platform;
    doc["workload"] = o.workload;
    doc["sets"] = o.sets;
    doc["arrival"] = so.arrival();
    doc["scheduler"] = so.scheduler;
    doc["replicas"] = replicas;
    doc["tp"] = m.tg.tp;
    doc["pp"] = m.tg.pp;
    doc["max_batch"] = gb.max_batch;
    doc["weight_bytes_per_chip"] = m.fp.weight_bytes;
    doc["kv_bytes_per_token_per_chip"] = m.fp.kv_bytes_per_token;
    doc["kv_blocks"] = m.kv_blocks;
    doc["simulated_shapes"] = shapes.size();
    if (sample.active())
        doc["simulated_layers"] = {{"low", sample.low}, {"high", sample.high}, {"model", sample.layers}};
    if (transfers_or_null) doc["kv_transfers"] = transfer_summary(run, transfers, m.fp.kv_bytes_per_token);
    if (so.speculate > 0) {
        doc["speculation"] = speculation_summary(run, so);
        doc["draft_weight_bytes_per_chip"] = m.draft.weight_bytes;
    }
    write_file_atomic(out_dir + "/summary.json", doc.dump(2) + "\n", "serving summary", true);
    write_requests_csv(out_dir + "/requests.csv", reqs, run);
    write_steps_csv(out_dir + "/steps.csv", run, m.block_bytes);
    const bool whole_trace = write_trace(out_dir + "/trace.json", reqs, run);
    if (o.json)
        out << doc.dump(2) << "\n";
    else
        print_report(out, o, so, x, replicas, static_cast<std::int64_t>(shapes.size()), out_dir,
                     doc.value("kv_transfers", json()), doc.value("speculation", json()), sample);
    if (!whole_trace)
        err << "tessel serve: trace.json holds the first " << k_trace_steps << " of " << run.steps.size()
            << " steps (steps.csv has them all)\n";
    return 0;
}

}  // namespace tessel::serve
