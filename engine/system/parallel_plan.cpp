#include "engine/system/parallel_plan.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "engine/workload/load.h"
#include "models/core/error.h"

namespace tessel {

namespace {

/// An int field declared through param_decl (which reads whole numbers as int64).
void declare_int(param_decl& d, int& f, std::string_view name, std::string_view def, std::string_view desc, bound b,
                 std::int64_t most) {
    std::int64_t v = f;
    d(v, name, def, desc, b, most);
    f = static_cast<int>(v);
}

}  // namespace

void parallel_plan::declare(param_decl& d) {
    constexpr std::int64_t most = std::int64_t{1} << 24;
    declare_int(d, dp, "dp", "1", "data-parallel replicas: each takes batch/dp sequences and all-reduces its gradients",
                bound::positive, most);
    declare_int(d, tp, "tp", "1",
                "tensor-parallel ranks: each layer's heads, feed-forward width and vocabulary are split tp ways "
                "(Megatron column/row splits, all-reduces between them)",
                bound::positive, most);
    declare_int(d, pp, "pp", "1", "pipeline stages, each holding a contiguous range of layers", bound::positive, most);
    declare_int(d, microbatch, "microbatch", "1",
                "sequences per microbatch; workload.batch is the global batch per iteration, so each pipeline runs "
                "batch / (dp * microbatch) microbatches",
                bound::positive, most);
    declare_int(d, interleave, "interleave", "1",
                "model chunks (virtual stages) per pipeline stage; more than 1 needs schedule interleaved_1f1b",
                bound::positive, most);
    d.choice(schedule, "schedule", "1f1b", {"gpipe", "1f1b", "interleaved_1f1b"},
             "pipeline schedule: gpipe (all forwards, then all backwards), 1f1b (PipeDream-flush: one forward, one "
             "backward), interleaved_1f1b (Narayanan et al. SC21: 1F1B over interleave chunks per stage)");
    d.choice(recompute, "recompute", "none", {"none", "selective", "full"},
             "activation recomputation: none keeps every activation the backward pass reads; selective re-runs "
             "the attention core (Korthikanti et al. 2022); full keeps only the inputs of each block "
             "(recompute_layers) and re-runs the block's forward before its backward");
    declare_int(d, recompute_layers, "recompute_layers", "1",
                "the blocks recomputation works in: N >= 1 blocks of N layers for full (Megatron-LM's "
                "--recompute-method uniform --recompute-num-layers N) and layer by layer for selective, each "
                "re-run just before its own backward, so one block's activations exist again at a time; 0 the "
                "whole chunk (it keeps only the chunk's input and re-creates every activation at once before the "
                "backward pass); no effect with recompute none",
                bound::non_negative, most);
    d(sequence_parallel, "sequence_parallel", "false",
      "split norms and dropout along the sequence over the tp ranks: all-reduces become reduce-scatter/all-gather "
      "pairs (Korthikanti et al. 2022); needs tp > 1");
    declare_int(d, zero, "zero", "0",
                "optimizer sharding over the dp replicas (ZeRO): 0 none, 1 optimizer state, 2 and gradients, 3 and "
                "weights",
                bound::non_negative, 3);
    d(overlap_grad_reduce, "overlap_grad_reduce", "false",
      "start each chunk's data-parallel gradient reduction as soon as its last backward is done, overlapping the "
      "rest of the backward pass");
}

std::string parallel_plan::str() const {
    std::string s = "dp=" + std::to_string(dp) + " tp=" + std::to_string(tp) + " pp=" + std::to_string(pp);
    if (microbatch != 1) s += " microbatch=" + std::to_string(microbatch);
    if (interleave != 1) s += " interleave=" + std::to_string(interleave);
    if (recompute != "none" && recompute_layers != 1) s += " recompute_layers=" + std::to_string(recompute_layers);
    return s;
}

std::vector<param_spec> describe_parallel_plan() { return describe_params<parallel_plan>(); }

parallel_plan read_parallel_plan(const yaml_node& node, param_context& ctx) {
    parallel_plan p;
    param_decl d(node, &ctx, "parallel", "the parallel plan");
    p.declare(d);
    d.finish();
    return p;
}

plan_target plan_target_of(const std::string& spec, const std::map<std::string, std::string>& overrides,
                           std::int64_t chips) {
    return plan_target_of(*make_workload_source(spec), parse_workload_overrides(overrides), chips);
}

plan_target plan_target_of(const workload_source& source, const workload_overrides& overrides, std::int64_t chips) {
    // The forward graph at the workload's own fuse setting: its parameters are what the plan is checked against.
    auto ov = overrides;
    ov.training = "none";
    ov.fuse.reset();
    ov.other.erase("fuse");
    const workload_graph g = source.build(ov);
    plan_target t;
    t.workload = source.spec();
    t.chips = chips;
    auto get = [&](const char* key) -> std::int64_t {
        const auto it = g.parameters.find(key);
        if (it == g.parameters.end()) return 0;
        try {
            return static_cast<std::int64_t>(std::stod(it->second));
        } catch (const std::exception&) {
            return 0;
        }
    };
    t.batch = std::max<std::int64_t>(1, get("batch"));
    t.seq = get("seq");
    t.splittable = g.parameters.count("tp") != 0;
    // Layers to cut into stages: the ops carry a "layer" attribute (the transformer generators).
    bool has_layers = false;
    for (const auto& op : g.ops()) has_layers |= op.int_attrs.count("layer") != 0;
    if (has_layers) t.layers = get("layers");
    if (t.splittable) {
        t.heads = get("heads");
        t.kv_heads = g.parameters.count("kv_heads") ? get("kv_heads") : t.heads;
        t.ffn = g.parameters.count("ffn") ? get("ffn") : 4 * get("hidden");
    }
    return t;
}

std::int64_t microbatches(const parallel_plan& p, std::int64_t batch) {
    const std::int64_t per = std::int64_t{p.dp} * p.microbatch;
    return per > 0 ? batch / per : 0;
}

std::vector<std::string> plan_violations(const parallel_plan& p, const plan_target& t) {
    std::vector<std::string> v;
    auto s = [](std::int64_t x) { return std::to_string(x); };
    if (p.dp < 1 || p.tp < 1 || p.pp < 1 || p.microbatch < 1 || p.interleave < 1) {
        v.push_back("dp, tp, pp, microbatch and interleave must be at least 1");
        return v;
    }
    if (p.chips() != t.chips)
        v.push_back("dp x tp x pp = " + s(p.dp) + " x " + s(p.tp) + " x " + s(p.pp) + " = " + s(p.chips()) +
                    ", but the system has " + s(t.chips) + " chip" + (t.chips == 1 ? "" : "s"));
    if (p.tp > 1) {
        if (!t.splittable)
            v.push_back("tp = " + s(p.tp) +
                        " needs a workload that can be split into tensor-parallel shards (the gpt2, "
                        "bert and llama generators); '" +
                        t.workload + "' cannot");
        else {
            if (t.heads % p.tp)
                v.push_back("tp = " + s(p.tp) + " does not divide the " + s(t.heads) + " attention heads");
            else if (t.kv_heads % p.tp)
                v.push_back("tp = " + s(p.tp) + " does not divide the " + s(t.kv_heads) + " key/value heads");
            if (t.ffn % p.tp) v.push_back("tp = " + s(p.tp) + " does not divide the feed-forward width " + s(t.ffn));
        }
    }
    if (p.sequence_parallel) {
        if (p.tp == 1)
            v.push_back("sequence_parallel needs tp > 1 (it splits the sequence over the tp ranks)");
        else if (t.seq > 0 && t.seq % p.tp)
            v.push_back("sequence_parallel: tp = " + s(p.tp) + " does not divide seq = " + s(t.seq));
    }
    const std::int64_t chunks = p.chunks();
    if (chunks > 1) {
        if (t.layers == 0)
            v.push_back("pp x interleave = " + s(chunks) +
                        " needs a workload whose ops are numbered by layer (the "
                        "gpt2, bert and llama generators); '" +
                        t.workload + "' is not");
        else if (chunks > t.layers)
            v.push_back("pp x interleave = " + s(p.pp) + " x " + s(p.interleave) + " = " + s(chunks) +
                        " chunks, but the model has only " + s(t.layers) + " layers");
        else if (t.layers % chunks)
            v.push_back("pp x interleave = " + s(p.pp) + " x " + s(p.interleave) + " = " + s(chunks) +
                        " does not divide the " + s(t.layers) +
                        " layers (Megatron-LM's rule: every chunk holds "
                        "the same number of layers)");
    }
    if (p.interleave > 1) {
        if (p.schedule != "interleaved_1f1b")
            v.push_back("interleave = " + s(p.interleave) + " needs schedule interleaved_1f1b, not " + p.schedule);
        if (p.pp == 1) v.push_back("interleave = " + s(p.interleave) + " needs pp > 1");
    }
    if (t.batch % p.dp)
        v.push_back("dp = " + s(p.dp) + " does not divide the global batch " + s(t.batch));
    else if ((t.batch / p.dp) % p.microbatch)
        v.push_back("microbatch = " + s(p.microbatch) + " does not divide batch / dp = " + s(t.batch) + " / " +
                    s(p.dp) + " = " + s(t.batch / p.dp));
    else if (p.schedule == "interleaved_1f1b" && p.pp > 1 && microbatches(p, t.batch) % p.pp)
        v.push_back("the interleaved schedule needs the microbatches per pipeline (batch / (dp x microbatch) = " +
                    s(microbatches(p, t.batch)) + ") to be a multiple of pp = " + s(p.pp));
    if (p.zero < 0 || p.zero > 3) v.push_back("zero = " + s(p.zero) + " is not 0, 1, 2 or 3");
    return v;
}

std::vector<parallel_plan> nearest_valid_plans(const parallel_plan& p, const plan_target& t, size_t count) {
    std::vector<std::int64_t> divisors;
    for (std::int64_t d = 1; d * d <= t.chips; ++d)
        if (t.chips % d == 0) {
            divisors.push_back(d);
            if (d != t.chips / d) divisors.push_back(t.chips / d);
        }
    std::sort(divisors.begin(), divisors.end());
    auto dist = [](double a, double b) { return std::fabs(std::log2(a / b)); };
    struct scored {
        double d;
        int tp_changed, pp_changed;
        parallel_plan plan;
    };
    std::vector<scored> found;
    // Microbatch and interleave candidates: the requested ones first, then powers of two and the divisors they need.
    std::vector<int> interleaves = {p.interleave};
    if (p.interleave > 1)
        for (int v = 1; v <= std::max<std::int64_t>(1, t.layers); v *= 2)
            if (v != p.interleave) interleaves.push_back(v);
    for (std::int64_t tp : divisors)
        for (std::int64_t pp : divisors) {
            if (t.chips % (tp * pp)) continue;
            const std::int64_t dp = t.chips / (tp * pp);
            for (int v : interleaves) {
                parallel_plan q = p;
                q.dp = static_cast<int>(dp);
                q.tp = static_cast<int>(tp);
                q.pp = static_cast<int>(pp);
                q.interleave = v;
                if (v == 1 && q.schedule == "interleaved_1f1b" && p.interleave > 1) q.schedule = "1f1b";
                if (q.pp == 1) q.interleave = 1;
                if (q.tp == 1) q.sequence_parallel = false;
                // The microbatch nearest the requested one that divides batch / dp.
                if (t.batch % dp) continue;
                const std::int64_t per = t.batch / dp;
                std::int64_t best_mb = -1;
                double best = 1e300;
                for (std::int64_t mb = 1; mb <= per; ++mb) {
                    if (per % mb) continue;
                    parallel_plan r = q;
                    r.microbatch = static_cast<int>(mb);
                    if (!plan_violations(r, t).empty()) continue;
                    const double dm = dist(static_cast<double>(mb), p.microbatch);
                    if (dm < best) best = dm, best_mb = mb;
                }
                if (best_mb < 0) continue;
                q.microbatch = static_cast<int>(best_mb);
                const double d = dist(static_cast<double>(dp), p.dp) + dist(static_cast<double>(tp), p.tp) +
                                 dist(static_cast<double>(pp), p.pp) + best + dist(q.interleave, p.interleave);
                found.push_back(scored{d, q.tp != p.tp, q.pp != p.pp, q});
            }
        }
    std::stable_sort(found.begin(), found.end(), [](const scored& a, const scored& b) {
        return std::tie(a.d, a.tp_changed, a.pp_changed) < std::tie(b.d, b.tp_changed, b.pp_changed);
    });
    std::vector<parallel_plan> out;
    for (const auto& f : found) {
        if (out.size() >= count) break;
        bool dup = false;
        for (const auto& o : out) dup |= o.str() == f.plan.str() && o.schedule == f.plan.schedule;
        if (!dup) out.push_back(f.plan);
    }
    return out;
}

void validate_plan(const parallel_plan& p, const plan_target& t) {
    const auto v = plan_violations(p, t);
    if (v.empty()) return;
    std::string msg = "parallel plan " + p.str() + " for workload '" + t.workload + "' on " + std::to_string(t.chips) +
                      " chips is not valid: ";
    for (size_t i = 0; i < v.size(); ++i) msg += (i ? "; " : "") + v[i];
    const auto near = nearest_valid_plans(p, t, 3);
    if (near.empty()) {
        msg += "; no valid plan exists for these chips and this model";
    } else {
        msg += "; nearest valid: ";
        for (size_t i = 0; i < near.size(); ++i) msg += (i ? ", " : "") + near[i].str();
    }
    fail(msg);
}

}  // namespace tessel
