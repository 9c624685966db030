#include "engine/system/weight_streaming.h"

#include <algorithm>
#include <map>

#include "engine/system/chip_program.h"
#include "engine/system/partition.h"
#include "engine/workload/load.h"
#include "engine/workload/training.h"
#include "models/core/error.h"
#include "models/core/limits.h"
#include "models/core/text.h"

namespace tessel {

namespace {

/// What the store does for one weight gradient: the chip's steps that write it out, and the update it triggers.
struct gradient_flow {
    std::string op;                     // the op whose output is the gradient (its steps in the chip's pass)
    std::vector<std::uint32_t> stores;  // steps of the pass that write it to the chip's I/O memory
    std::uint64_t bytes = 0;            // what those steps write
    double update_bytes = 0;            // what the store reads to update the weight (weight, gradient, state)
};

/// Refuses a plan weight streaming cannot run: anything but data parallelism, ZeRO, recomputation.
void check_weight_streaming_plan(const parallel_plan& plan) {
    const std::string who = "mapper.weights=streamed";
    if (plan.tp != 1 || plan.pp != 1)
        throw input_error(who +
                          ": weight streaming (as a Cerebras cluster trains) is data parallel only (every chip runs "
                          "whole layers; the fabric "
                          "between the chips broadcasts weights and reduces gradients, it carries no pipeline or "
                          "tensor-parallel traffic): set parallel.tp=1 and parallel.pp=1 (the plan has tp=" +
                          std::to_string(plan.tp) + ", pp=" + std::to_string(plan.pp) + ")");
    if (plan.zero != 0)
        throw input_error(who +
                          ": the optimizer state lives in the store, not on the chips, so parallel.zero does not "
                          "apply; leave it 0");
    if (plan.recompute != "none")
        throw input_error(who +
                          ": activations stay on the chip between the forward and backward pass; parallel.recompute=" +
                          plan.recompute + " is not simulated with weight streaming, leave it none");
}

/// A training step split between the chips and the store: the forward and backward pass's ops, and what the
/// optimizer ops (the store's) read.
struct streamed_training_split {
    std::vector<int> pass_ops;
    std::map<std::string, double> update_of;  // gradient's producer -> bytes its update reads
    double pass_flops = 0, state_bytes = 0, weight_bytes = 0;
};

streamed_training_split split_streamed_training_step(const workload_graph& full) {
    streamed_training_split sp;
    for (int i = 0; i < static_cast<int>(full.ops().size()); ++i) {
        const op_node& op = full.op(i);
        if (op.phase != op_phase::optimizer) {
            sp.pass_ops.push_back(i);
            sp.pass_flops += op.cost.flops;
            continue;
        }
        if (op.inputs.size() < 2) continue;
        const int producer = full.tensor(op.inputs[1]).producer;
        if (producer < 0) continue;
        sp.update_of[full.op(producer).name] += op.cost.bytes_read();
        sp.weight_bytes += static_cast<double>(full.tensor(op.inputs[0]).bytes());
        for (size_t k = 2; k < op.inputs.size(); ++k)
            sp.state_bytes += static_cast<double>(full.tensor(op.inputs[k]).bytes());
    }
    return sp;
}

/// What one pass moves through the chip's I/O memory: the gradients leaving it (with their updates), the bytes
/// streaming in, and the updates that wait for the end of the pass.
struct streamed_pass_io {
    std::vector<gradient_flow> flows;
    double streamed_in = 0;
    double late_update = 0;
};

/// The pass's writes to the chip's I/O memory `io`, by op: gradients (and the loss) leaving the chip.
streamed_pass_io collect_gradient_flows(const program& pass, std::uint32_t io,
                                        const std::map<std::string, double>& update_of) {
    streamed_pass_io pio;
    std::vector<gradient_flow>& flows = pio.flows;
    std::map<std::uint32_t, size_t> flow_of_op;
    for (std::uint32_t s = 0; s < pass.size(); ++s) {
        const step& st = pass.steps[s];
        if (st.kind != step_kind::transfer) continue;
        if (st.at.comp == io) pio.streamed_in += static_cast<double>(st.bytes);
        if (st.to.comp != io) continue;
        auto [it, fresh] = flow_of_op.emplace(st.op, flows.size());
        if (fresh) flows.push_back({pass.op_names[st.op], {}, 0, 0});
        gradient_flow& f = flows[it->second];
        f.stores.push_back(s);
        f.bytes += st.bytes;
    }
    // Each update goes with its gradient's flow; an update whose gradient the pass does not write under its
    // producer's name (a view) waits for the end of the pass.
    std::map<std::string, size_t> flow_named;
    for (size_t f = 0; f < flows.size(); ++f) flow_named.emplace(flows[f].op, f);
    for (const auto& [name, bytes] : update_of) {
        const auto it = flow_named.find(name);
        if (it != flow_named.end())
            flows[it->second].update_bytes += bytes;
        else
            pio.late_update += bytes;
    }
    return pio;
}

/// Emits `m` microbatches of the pass on the first `sim_dp` chips, each chip's gradients through its reduction
/// engine to the store, and after the last microbatch the store's updates. Adds one item per pass to `items`.
void emit_streamed_microbatches(program& p, const program& pass, const platform::chip_group& cg,
                                const weight_streaming_setup& setup, const streamed_pass_io& pio, int sim_dp,
                                std::int64_t m, std::vector<streamed_item>& items) {
    const std::vector<gradient_flow>& flows = pio.flows;
    program::append_memo memo;
    using dep_list = std::vector<std::uint32_t>;
    std::vector<dep_list> tail(static_cast<size_t>(sim_dp));
    const endpoint store{setup.store, 0, 0};
    const std::uint32_t op_item = p.intern_op("pipeline.item");
    for (std::int64_t k = 0; k < m; ++k) {
        const bool last = k + 1 == m;
        std::vector<dep_list> contributions(flows.size());
        dep_list ends;
        for (int d = 0; d < sim_dp; ++d) {
            const std::uint32_t off = p.append(pass, on_chip(cg, d), tail[static_cast<size_t>(d)], &memo);
            dep_list sinks;
            for (std::uint32_t s : sinks_of(pass)) sinks.push_back(off + s);
            const std::uint32_t end = p.add_delay(op_item, 0, sinks);
            tail[static_cast<size_t>(d)] = {end};
            ends.push_back(end);
            items.push_back({static_cast<int>(d), off, end, p.intern_op("F+B mb " + std::to_string(k))});
            // Each gradient, once it has left the chip, goes into the chip's reduction engine on the fabric.
            for (size_t f = 0; f < flows.size(); ++f) {
                dep_list after;
                for (std::uint32_t s : flows[f].stores) after.push_back(off + s);
                contributions[f].push_back(p.add_transfer(p.intern_op(flows[f].op), endpoint{setup.fabric, d, 0},
                                                          endpoint{setup.engines[static_cast<size_t>(d)], 0, 0},
                                                          flows[f].bytes, after));
            }
        }
        // The summed gradient leaves the first engine for the store; after the last microbatch the store updates
        // the weight.
        for (size_t f = 0; f < flows.size(); ++f) {
            const std::uint32_t op = p.intern_op(flows[f].op);
            const std::uint32_t in =
                p.add_transfer(op, endpoint{setup.engines[0], 0, 0}, store, flows[f].bytes, contributions[f]);
            if (last && flows[f].update_bytes > 0)
                p.add_transfer(op, store, store, static_cast<std::uint64_t>(flows[f].update_bytes), {in});
        }
        if (last && pio.late_update > 0)
            p.add_transfer(p.intern_op("optimizer (views)"), store, store, static_cast<std::uint64_t>(pio.late_update),
                           ends);
    }
}

/// The mapping's samples, its `parallel` details and its note.
void describe_weight_streaming(mapping& out, const platform& plat, const parallel_plan& plan,
                               const weight_streaming_setup& setup, const streamed_training_split& sp,
                               const streamed_pass_io& pio, std::int64_t batch, int sim_dp, std::int64_t m,
                               std::int64_t m_run) {
    const platform::chip_group& cg = *setup.chips;
    const std::int64_t n_chips = static_cast<std::int64_t>(cg.chips.size());
    const int dp = plan.dp;
    const double streamed_in = pio.streamed_in;
    double gradient_bytes = 0, update_bytes = pio.late_update;
    for (const gradient_flow& f : pio.flows) {
        gradient_bytes += static_cast<double>(f.bytes);
        update_bytes += f.update_bytes;
    }
    out.simulated_share = static_cast<double>(m_run) / static_cast<double>(m);  // a window's share
    out.samples = static_cast<double>(batch) * out.simulated_share;
    nlohmann::json par;
    par["plan"] = plan.str();
    par["dp"] = dp;
    par["tp"] = 1;
    par["pp"] = 1;
    par["microbatch"] = plan.microbatch;
    par["microbatches"] = m;
    par["microbatches_simulated"] = m_run;
    par["interleave"] = 1;
    par["schedule"] = plan.schedule;
    par["recompute"] = plan.recompute;
    par["zero"] = 0;
    par["chips"] = n_chips;
    par["simulated_chips"] = sim_dp;
    out.traffic_scale = static_cast<double>(n_chips) / static_cast<double>(sim_dp);
    par["symmetric"] = setup.symmetric;
    par["ideal_bubble"] = 0.0;
    par["weights"] = "streamed";
    const component& st = plat.comp(setup.store);
    par["memory"] = {{"capacity_bytes", static_cast<double>(st.capacity_bytes())},
                     {"store", st.path()},
                     {"weights_bytes", sp.weight_bytes},
                     {"optimizer_state_bytes", sp.state_bytes},
                     {"stages", nlohmann::json::array()}};
    par["streamed"] = {
        {"in_bytes_per_pass", streamed_in}, {"out_bytes_per_pass", gradient_bytes}, {"update_bytes", update_bytes}};
    par["hardware_flops"] = sp.pass_flops * static_cast<double>(m_run) * dp;
    par["chip_group"] = cg.name;
    out.details["parallel"] = par;
    out.notes.push_back("weight streaming, data parallel over " + std::to_string(dp) + " of " +
                        std::to_string(n_chips) + " chips: " + std::to_string(m) + " microbatches of " +
                        std::to_string(plan.microbatch) + " per chip, each streaming " + format_bytes(streamed_in) +
                        " in (weights and inputs) and " + format_bytes(gradient_bytes) + " of gradients out; " +
                        st.path() + " holds " + format_bytes(sp.weight_bytes + sp.state_bytes) +
                        " of weights and optimizer state and updates them (" + format_bytes(update_bytes) + " read)" +
                        (setup.symmetric ? "; one representative chip simulated" : "; every chip simulated") +
                        (m_run < m ? "; a window of the first " + std::to_string(m_run) +
                                         " microbatches simulated, the iteration extrapolated (mapper.window)"
                                   : std::string()));
}

}  // namespace

mapping map_weight_streaming(const workload_graph& g, const platform& plat, const parallel_plan& plan,
                             mapper& chip_mapper, const weight_streaming_setup& setup,
                             std::vector<streamed_item>& items) {
    check_weight_streaming_plan(plan);
    const platform::chip_group& cg = *setup.chips;
    const std::int64_t n_chips = static_cast<std::int64_t>(cg.chips.size());
    const plan_target target = plan_target_of(*g.origin, g.overrides, n_chips);
    validate_plan(plan, target);

    // One microbatch's forward and backward pass as one graph; the optimizer ops go to the store.
    auto ov = g.overrides;
    ov.batch = plan.microbatch;
    const workload_graph full = g.origin->build(ov);
    if (!is_training_step(full))
        throw input_error(
            "mapper 'system' simulates training iterations: set workload.training (e.g. --set "
            "workload.training=adam)");
    const streamed_training_split sp = split_streamed_training_step(full);
    const platform& chip0 = *cg.chips.front();
    const program pass = chip_mapper.map(subgraph(full, sp.pass_ops, full.name + ".pass"), chip0).prog;
    const streamed_pass_io pio = collect_gradient_flows(pass, cg.first[0] + setup.chip_memory, sp.update_of);

    const int dp = plan.dp, sim_dp = setup.symmetric ? 1 : dp;
    const std::int64_t m = microbatches(plan, target.batch);
    const std::int64_t m_run = setup.window > 0 ? std::min(m, setup.window) : m;
    // Every microbatch on every simulated chip is a copy of the pass: what they add up to is known before any is
    // copied.
    const double copies = static_cast<double>(m_run) * sim_dp;
    const double steps = static_cast<double>(pass.steps.size()) * copies;
    if (steps > limits().steps)
        throw input_error("program '" + g.name + "' " + over_limit("steps", steps, "steps or more") + " (" +
                          std::to_string(m_run) + " microbatches x " + std::to_string(sim_dp) +
                          (sim_dp == 1 ? " simulated chip" : " simulated chips") + ", each a pass of " +
                          format_number(static_cast<double>(pass.steps.size())) +
                          " steps); a weight-streaming iteration is not mapped again in a coarser form");
    mapping out;
    out.prog.name = g.name;
    emit_streamed_microbatches(out.prog, pass, cg, setup, pio, sim_dp, m_run, items);
    for (int d = sim_dp; d < dp; ++d) {
        const std::uint32_t first = cg.first[static_cast<size_t>(d)];
        out.represented.emplace_back(first, first + cg.components);
    }
    describe_weight_streaming(out, plat, plan, setup, sp, pio, target.batch, sim_dp, m, m_run);
    return out;
}

}  // namespace tessel
