#include "engine/system/system_mapper.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "engine/mappers/toolkit/percent.h"
#include "engine/system/chip_program.h"
#include "engine/system/collectives.h"
#include "engine/system/memory.h"
#include "engine/system/partition.h"
#include "engine/system/pipeline_schedule.h"
#include "engine/system/weight_streaming.h"
#include "models/core/limits.h"
#include "models/interconnect/interconnect.h"

namespace tessel {

void system_mapper::options::declare(param_decl& d) {
    d(symmetric, "symmetric", "true",
      "simulate one representative chip per pipeline stage (replicas and tensor-parallel ranks are symmetric); "
      "false simulates every chip (as an algorithm with a root, tree, does)");
    d(algorithm, "algorithm", "ring",
      "collective algorithm of the tensor- and data-parallel groups: ring, tree, direct or torus (rings along each "
      "dimension of `torus` in turn, as TPU pods and IPU-PODs reduce)");
    d(torus, "torus", "",
      "the chips' torus extents, first dimension fastest in chip order (4x4x4), for algorithm torus");
    d(bidirectional, "bidirectional", "false",
      "send half of every ring's data each way round (links with a channel per direction)");
    d(chip, "chip", "", "the chip group the plan runs on (default: the system's first)");
    d(memory, "memory", "",
      "the chip's memory (its name inside the chip platform, e.g. hbm) that collectives and pipeline sends read "
      "and write (default: the memory with the largest capacity, which also bounds the plan)");
    d(in_network, "in_network", "none",
      "the switch_reducer group with one in-network reduction engine per chip, in chip order (NVLink SHARP): an "
      "all-reduce or reduce-scatter whose chips' engines sit on one switch reduces there where that is faster; "
      "others use `algorithm`; none: no in-network reduction");
    d(in_network_slice, "in_network_slice", "8MiB",
      "an in-network collective streams through the switch in slices of at least this size (at most 64): results "
      "leave while later slices are reduced, and each slice pays the route's latency once",
      bound::positive);
    d(weights, "weights", "resident",
      "where the weights live: resident (on every chip, by the plan) or streamed (in the `store`, streamed through "
      "each chip layer by layer, gradients reduced in the `in_network` engines on the way back: a Cerebras cluster; "
      "data parallel only)");
    d(holds, "holds", "0B",
      "at least this many bytes of weights and state per chip, for what the chip's mapper keeps in on-chip memory "
      "(the IPU's tiles): tessel serve sets the whole model's when it simulates fewer layers (serve.simulated_layers)",
      bound::none);
    d(store, "store", "memoryx", "weights: streamed: the component holding the weights and optimizer state (MemoryX)");
    d(fabric, "fabric", "swarmx",
      "weights: streamed: the network between the chips and the store (SwarmX); its port c is chip c's I/O");
    d(window, "window", "0",
      "simulate only this many microbatches per pipeline (at least pp, a multiple of pp) and extrapolate the "
      "iteration from the busiest stage's time per microbatch (summary: parallel.estimate); 0 simulates every "
      "microbatch",
      bound::non_negative);
    d(layers_of, "layers_of", "0",
      "the workload is a sample of fewer layers from a model of this many (tessel plan --estimate-layers, tessel "
      "serve's serve.simulated_layers): the chip programs' form (fine or coarse) is chosen as for that model; 0: "
      "the workload is the model",
      bound::non_negative);
    d(sample_layers, "sample_layers", "0",
      "simulate this many layers per pipeline chunk (pp x interleave) of the workload's model, mapped as the model "
      "would be (layers_of is set to its layers), where a chunk has more: one of the two runs of tessel run "
      "--estimate-layers; 0: every layer",
      bound::non_negative);
}

TESSEL_REGISTER_MAPPER(make_mapper<system_mapper>(
    "system",
    "a training iteration or an inference step on a system of chips by a parallel plan (data, tensor, pipeline "
    "parallelism)"));

void system_mapper::configure(const platform& plat, param_context& ctx) {
    if (!plat.is_system())
        throw input_error(
            "mapper 'system' needs a system: platform '" + plat.title() + "' has no 'chips:' (see docs/systems.md)",
            plat.mapper_spec().where());
    m_chip_group = m_opt.chip.empty() ? plat.chip_groups().front().name : m_opt.chip;
    const platform::chip_group* cg = plat.find_chip_group(m_chip_group);
    if (!cg) {
        std::vector<std::string> names;
        for (const auto& g : plat.chip_groups()) names.push_back(g.name);
        throw input_error("mapper.chip: no chip group '" + m_chip_group + "'" + did_you_mean(m_chip_group, names) +
                          "; chips: " + join(names));
    }
    m_plan = read_parallel_plan(plat.parallel_spec(), ctx);
    m_chip_mapper = create_mapper(*cg->chips.front(), ctx, m_chip_group + ".mapper");
    m_chip_mapper->check_device_memory(false);  // the plan's memory model decides (require_fit in map())
    m_chip_mapper->maps_pieces(0);              // pieces cut at collectives, passes one after another
    const collective_algorithm algo = parse_collective_algorithm(m_opt.algorithm);
    m_torus.clear();
    if (algo == collective_algorithm::torus) {
        if (m_opt.torus.empty())
            throw input_error("mapper.algorithm torus needs mapper.torus, the chips' torus extents (e.g. 4x4x4)");
        std::int64_t product = 1;
        std::istringstream extents(m_opt.torus);
        for (std::string part; std::getline(extents, part, 'x');) {
            char* end = nullptr;
            const long v = std::strtol(part.c_str(), &end, 10);
            if (part.empty() || *end != '\0' || v < 1 || v > 65536)
                throw input_error("mapper.torus '" + m_opt.torus + "': expected extents like 4x4x4, got '" + part +
                                  "'");
            m_torus.push_back(static_cast<int>(v));
            product *= v;
        }
        if (product != static_cast<std::int64_t>(cg->chips.size()))
            throw input_error("mapper.torus " + m_opt.torus + " has " + std::to_string(product) +
                              " places but chip group '" + m_chip_group + "' has " + std::to_string(cg->chips.size()) +
                              " chips");
    }
    m_engines.clear();
    if (m_opt.in_network != "none") {
        const platform::group* eg = plat.find_group(m_opt.in_network);
        const std::string what = "mapper.in_network '" + m_opt.in_network + "'";
        if (!eg) {
            std::vector<std::string> names;
            for (const auto& g : plat.groups()) names.push_back(g.name);
            throw input_error(what + " is not a component of " + plat.title() + did_you_mean(m_opt.in_network, names) +
                                  "; none turns in-network reduction off",
                              plat.mapper_spec().where());
        }
        for (std::uint32_t id : eg->ids)
            if (!plat.comp(id).reduces_in_network())
                throw input_error(what + " is a " + eg->kind + ", not an in-network reduction engine (switch_reducer)",
                                  plat.mapper_spec().where());
        if (eg->ids.size() != cg->chips.size())
            throw input_error(what + " has " + std::to_string(eg->ids.size()) + " engines for the " +
                                  std::to_string(cg->chips.size()) + " chips of '" + m_chip_group +
                                  "' (give one per chip)",
                              plat.mapper_spec().where());
        m_engines = eg->ids;
    }
    m_store = m_fabric = ~0u;
    if (m_opt.weights == "streamed") {
        if (m_engines.empty())
            throw input_error(
                "mapper.weights=streamed needs mapper.in_network: the reduction engines (switch_reducer, one "
                "per chip) that sum the gradients on their way to the store",
                plat.mapper_spec().where());
        auto single = [&](const std::string& key, const std::string& name, component::role r, const char* what) {
            const platform::group* grp = plat.find_group(name);
            if (!grp) {
                std::vector<std::string> names;
                for (const auto& g : plat.groups()) names.push_back(g.name);
                throw input_error("mapper." + key + " '" + name + "' is not a component of " + plat.title() +
                                      did_you_mean(name, names) + "; components: " + join(names),
                                  plat.mapper_spec().where());
            }
            if (grp->ids.size() != 1 || !plat.comp(grp->ids.front()).has_role(r))
                throw input_error(
                    "mapper." + key + " '" + name + "' is " +
                        (grp->ids.size() != 1 ? std::to_string(grp->ids.size()) + " components" : "a " + grp->kind) +
                        ", not a single " + what,
                    plat.mapper_spec().where());
            return grp->ids.front();
        };
        m_store = single("store", m_opt.store, component::role::memory, "memory");
        m_fabric = single("fabric", m_opt.fabric, component::role::interconnect, "network");
        if (plat.comp(m_fabric).unit_count() < cg->chips.size())
            throw input_error("mapper.fabric '" + m_opt.fabric + "' has " +
                                  std::to_string(plat.comp(m_fabric).unit_count()) + " ports for the " +
                                  std::to_string(cg->chips.size()) + " chips of '" + m_chip_group +
                                  "' (port c is chip c's I/O)",
                              plat.mapper_spec().where());
    } else if (m_opt.weights != "resident") {
        throw input_error("mapper.weights '" + m_opt.weights + "': expected resident or streamed",
                          plat.mapper_spec().where());
    }
}

std::pair<std::uint32_t, std::uint64_t> system_mapper::chip_memory(const platform& plat,
                                                                   const platform::chip_group& cg) const {
    const platform& chip0 = *cg.chips.front();
    std::uint32_t mem_local = ~0u;
    std::uint64_t capacity = 0;
    for (std::uint32_t k = 0; k < cg.components; ++k) {
        const component& c = plat.comp(cg.first[0] + k);
        if (c.has_role(component::role::memory) && c.capacity_bytes() > capacity) {
            capacity = c.capacity_bytes();
            mem_local = k;
        }
    }
    if (mem_local == ~0u)
        throw input_error("chip platform " + chip0.file() + " has no memory with a capacity to hold a model");
    if (!m_opt.memory.empty()) {
        const endpoint e = chip0.resolve(m_opt.memory, plat.mapper_spec().where());
        if (e.comp < cg.first[0] || e.comp >= cg.first[0] + cg.components ||
            !plat.comp(e.comp).has_role(component::role::memory))
            throw input_error(
                "mapper.memory '" + m_opt.memory + "' is not a memory of the chips of '" + m_chip_group + "'",
                plat.mapper_spec().where());
        mem_local = e.comp - cg.first[0];
    }
    return {mem_local, capacity};
}

std::string system_mapper::chip_memory_name(const platform& plat, int chip) const {
    const platform::chip_group& cg = chips(plat);
    std::string path = plat.comp(cg.first[static_cast<size_t>(chip)] + chip_memory(plat, cg).first).path();
    const std::string top = std::string(plat.name()) + ".";  // a program names parts below the platform
    return path.rfind(top, 0) == 0 ? path.substr(top.size()) : path;
}

namespace {

/// `o` with the model's layer count set to `layers` (a layer sample's model).
workload_overrides layers_overridden(workload_overrides o, std::int64_t layers) {
    o.layers = layers;
    o.other.erase("layers");
    return o;
}

/// A pass of a chunk cut at its collective ops: segment k runs, then collective k (if any), then segment k+1.
struct cut_pass {
    struct collective {
        std::string name;
        collective_kind kind;
        std::string group;
        std::uint64_t bytes = 0;
    };
    std::vector<program> segments;
    std::vector<std::vector<std::uint32_t>> sinks;  // per segment: its steps nothing in it depends on
    std::vector<program::append_memo> memos;        // per segment: its copies share works and payloads
    std::vector<collective> collectives;
    double flops = 0;
    double spilled_bytes = 0;  // activations its segments keep in off-chip memory for the backward pass
    double slower_bytes = 0;   // tensors its segments store between sections past the fastest memory (the RDU's)
    double kept_bytes = 0;     // the most a segment left in that memory for the rest of the chip program
    std::string slower;        // the memories they went to
};

double tensor_bytes(const workload_graph& g, int t) { return static_cast<double>(g.tensor(t).bytes()); }

/// The torus a group of `members` chips spans, its members `stride` apart in chip order, on a system torus of
/// extents `dims` (first fastest): the stride skips whole leading dimensions (or divides the first one left), the
/// members then fill dimensions from the front. Empty when the group does not line up with the torus (then its
/// collectives run as one ring through the torus' routes).
std::vector<int> group_torus(std::vector<int> dims, int stride, int members) {
    size_t d = 0;
    while (stride > 1 && d < dims.size()) {
        if (stride % dims[d] == 0)
            stride /= dims[d++];
        else if (dims[d] % stride == 0)
            dims[d] /= std::exchange(stride, 1);
        else
            return {};
    }
    std::vector<int> shape;
    while (members > 1 && d < dims.size()) {
        if (members % dims[d] == 0) {
            shape.push_back(dims[d]);
            members /= dims[d++];
        } else if (dims[d] % members == 0) {
            shape.push_back(std::exchange(members, 1));
        } else {
            return {};
        }
    }
    if (members != 1) return {};
    return shape;
}

/// Shown each segment of a pass once mapped, with the number of its ops and its fine form's cost (the chip
/// mapper's details["fine_form_cost"]; its steps where the mapper has one form).
using segment_counter = std::function<void(const program&, double, double)>;

/// Cuts `graph`, a chunk's pass named `what`, at its collective ops and maps each segment between them on chip 0
/// (`chip0`) with the chip's own mapper, showing each mapped segment to `mapped`.
cut_pass cut_at_collectives(const workload_graph& graph, const std::string& what, const mapper& chip_mapper,
                            const platform& chip0, const segment_counter& mapped) {
    cut_pass out;
    std::vector<int> ops;
    double seg_ops = 0;
    auto close = [&] {
        program prog;
        if (!ops.empty()) {
            mapping mp = chip_mapper.map(subgraph(graph, ops, what), chip0);
            out.spilled_bytes += mp.details.value("spilled_activation_bytes", 0.0);
            out.kept_bytes = std::max(out.kept_bytes, mp.details.value("reserved_bytes", 0.0));
            if (const double b = mp.details.value("slower_memory_bytes", 0.0); b > 0) {
                out.slower_bytes += b;
                out.slower = mp.details.value("slower_memory", std::string());
            }
            prog = std::move(mp.prog);
            mapped(prog, seg_ops, mp.details.value("fine_form_cost", static_cast<double>(prog.size())));
        }
        seg_ops = 0;
        out.sinks.push_back(sinks_of(prog));
        out.segments.push_back(std::move(prog));
        out.memos.emplace_back();
        ops.clear();
    };
    for (int i = 0; i < static_cast<int>(graph.ops().size()); ++i) {
        const op_node& op = graph.op(i);
        out.flops += op.cost.flops;
        if (op.kind != op_kind::collective) {
            seg_ops += 1;
            ops.push_back(i);
            continue;
        }
        close();
        cut_pass::collective c;
        c.name = op.name;
        c.kind = parse_collective_kind(op.type);
        auto it = op.str_attrs.find("group");
        c.group = it == op.str_attrs.end() ? "tp" : it->second;
        const int t = c.kind == collective_kind::all_gather ? op.outputs.front() : op.inputs.front();
        c.bytes = static_cast<std::uint64_t>(tensor_bytes(graph, t));
        out.collectives.push_back(c);
    }
    close();
    return out;
}

/// A chunk's forward, backward and optimizer passes, cut at their collectives.
struct chunk_passes {
    cut_pass fwd, bwd, opt;
};

/// A plan's passes, as mapped so far, prove its program over the steps budget: `message` says by how much.
struct over_steps_budget {
    std::string message;
    double estimate = 0;    // steps of the whole iteration, scaled from the part mapped
    bool at_least = false;  // estimate is only a lower bound (one piece's program passed the limit)
    // Not over the budget: the fine form's steps and packets, `estimate` of them so far, passed the chip mapper's
    // own coarse_above, the rule by which its auto form goes coarse on one chip.
    bool above_coarse = false;
};

/// The iteration's steps, counted while its passes are mapped: a segment's steps recur once per item that runs
/// its pass, on every simulated tp rank, so their sum is a lower bound on the program's size. A plan over the
/// budget is refused by the first segments that prove it, before the rest are mapped or anything is built (a 13B
/// GPT on an IPU-POD64 was refused only after mapping all its passes: 43 s and 5.2 GB).
class steps_tally {
public:
    /// `uses[c]`: how often chunk c's forward and backward passes run (items of the simulated lanes, times the
    /// simulated tp ranks); `ops`: the ops those runs run, which scale the part mapped to an estimate of all.
    /// `coarse_above`: the chip mapper's (mapper::coarse_above), applied to the fine form's cost of every run.
    steps_tally(std::string program_name, std::vector<std::array<double, 2>> uses, double ops, double coarse_above)
        : m_name(std::move(program_name)), m_uses(std::move(uses)), m_ops(ops), m_coarse_above(coarse_above) {}

    /// Counts pass `dir` (0 forward, 1 backward) of chunk `chunk`: each of its segments once mapped.
    segment_counter counter(int chunk, int dir) {
        const double uses = m_uses[static_cast<size_t>(chunk)][static_cast<size_t>(dir)];
        return [this, uses](const program& seg, double ops, double fine_cost) { count(seg, ops, fine_cost, uses); };
    }

private:
    void count(const program& seg, double ops, double fine_cost, double uses) {
        m_least += static_cast<double>(seg.size()) * uses;
        m_ops_mapped += ops * uses;
        m_fine_cost += fine_cost * uses;
        if (m_fine_cost > m_coarse_above) {
            over_steps_budget above;
            above.estimate = m_fine_cost;
            above.at_least = true;
            above.above_coarse = true;
            throw above;
        }
        if (m_least <= limits().steps) return;
        over_steps_budget over;
        over.estimate = m_least;
        std::string estimate;
        if (m_ops > m_ops_mapped) {
            over.estimate = m_least * m_ops / m_ops_mapped;
            estimate = " (about " + format_number(over.estimate) +
                       " for the whole iteration, scaled by the ops of its passes from the " +
                       fmt_percent(m_ops_mapped / m_ops) + " mapped when the budget was passed)";
        }
        over.message = "program '" + m_name + "' " + over_limit("steps", m_least, "steps or more") + estimate;
        throw over;
    }

    std::string m_name;
    std::vector<std::array<double, 2>> m_uses;
    double m_ops, m_ops_mapped = 0, m_least = 0;
    double m_coarse_above, m_fine_cost = 0;
};

/// The tally of program `name`'s steps: each chunk's passes run by the `schedules` of every stage's `sim_dp`
/// simulated replicas (times a layer sample's scale to its model), on `sim_tp` simulated tp ranks each.
steps_tally tally_of(const std::string& name, const partition_result& part,
                     const std::vector<std::vector<schedule_item>>& schedules, double sim_dp, int sim_tp,
                     double coarse_above) {
    std::vector<std::array<double, 2>> uses(part.chunks.size(), {0, 0});
    for (const auto& stage_items : schedules)
        for (const schedule_item& it : stage_items)
            uses[static_cast<size_t>(it.chunk)][it.pass == pass_dir::forward ? 0 : 1] += sim_dp * sim_tp;
    double ops = 0;
    for (const chunk_partition& ch : part.chunks)
        for (size_t dir = 0; dir < 2; ++dir)
            for (const op_node& op : (dir == 0 ? ch.forward : ch.backward).ops())
                if (op.kind != op_kind::collective) ops += uses[static_cast<size_t>(ch.index)][dir];
    return steps_tally(name, std::move(uses), ops, coarse_above);
}

/// Each chunk's passes, mapped once on chip 0 and re-bound to the chip that runs them; `tally` counts the steps
/// of their runs as they are mapped (the optimizer runs once and is not counted).
std::vector<chunk_passes> cut_chunks(const partition_result& part, const mapper& chip_mapper, const platform& chip0,
                                     steps_tally& tally) {
    std::vector<chunk_passes> passes;
    for (const chunk_partition& ch : part.chunks) {
        const std::string name = "chunk" + std::to_string(ch.index);
        chunk_passes cp;
        cp.fwd = cut_at_collectives(ch.forward, name + ".forward", chip_mapper, chip0, tally.counter(ch.index, 0));
        cp.bwd = cut_at_collectives(ch.backward, name + ".backward", chip_mapper, chip0, tally.counter(ch.index, 1));
        cp.opt = cut_at_collectives(ch.optimizer, name + ".optimizer", chip_mapper, chip0,
                                    [](const program&, double, double) {});
        passes.push_back(std::move(cp));
    }
    return passes;
}

/// What the system mapper does not simulate yet: ZeRO-3 and a gradient reduction overlapping the backward pass.
void refuse_unsimulated(const parallel_plan& plan) {
    if (plan.zero >= 3)
        throw input_error(
            "parallel.zero = 3 (weights sharded, gathered layer by layer) is not simulated by the system "
            "mapper yet; use zero 0, 1 or 2");
    if (plan.overlap_grad_reduce)
        throw input_error(
            "parallel.overlap_grad_reduce = true is not simulated by the system mapper yet: the gradient "
            "reduction starts after a stage's last backward pass; leave it false");
}

using deps_t = std::vector<std::uint32_t>;

/// A pipeline lane: what one (stage, replica) has run of its schedule, and what its next item waits for.
struct lane {
    int stage, replica;
    size_t next = 0;
    std::vector<deps_t> tail;  // per simulated tp rank
};

/// End step of (replica, chunk, microbatch, pass) per simulated tp rank.
using item_ends = std::map<std::tuple<int, int, int, int>, std::vector<std::uint32_t>>;

/// The program ops of the pipeline's sends and items.
struct pipeline_ops {
    std::uint32_t send_forward, send_backward, item;
};

/// The working state of system_mapper::map while it builds the iteration's program: the plan and the chips, how
/// collectives are lowered on them, the program with its record, and the pipeline lanes.
struct iteration_builder {
    iteration_builder(const platform& plat_in, const platform::chip_group& cg_in, const parallel_plan& plan_in,
                      const system_mapper::options& opt_in, const std::vector<int>& torus_in,
                      const std::vector<std::uint32_t>& engines_in, std::uint32_t mem_local_in,
                      collective_algorithm algo_in, bool sym_in, program& p_in, system_record& planned_in)
        : plat(plat_in),
          cg(cg_in),
          plan(plan_in),
          opt(opt_in),
          torus(torus_in),
          engines(engines_in),
          mem_local(mem_local_in),
          algo(algo_in),
          sym(sym_in),
          sim_dp(sym_in ? 1 : plan_in.dp),
          sim_tp(sym_in ? 1 : plan_in.tp),
          p(p_in),
          planned(planned_in),
          link_to_engine(engines_in.size(), -1.0) {}

    const platform& plat;
    const platform::chip_group& cg;
    const parallel_plan& plan;
    const system_mapper::options& opt;
    const std::vector<int>& torus;              // the chips' torus extents (algorithm torus)
    const std::vector<std::uint32_t>& engines;  // per chip, its in-network engine's component id (or none)
    std::uint32_t mem_local;                    // index inside a chip of the memory collectives and sends use
    collective_algorithm algo;
    bool sym;
    int sim_dp, sim_tp;  // the replicas and tp ranks of a stage that are simulated
    program& p;
    system_record& planned;
    // One schedule per distinct collective: the same all-reduce recurs per layer and microbatch.
    collective_schedules collective_plans;
    std::vector<double> link_to_engine;  // per chip, found once (in_switch)
    std::vector<lane> lanes;             // (stage, replica), replicas fastest

    int chip_of(int stage, int replica, int rank) const { return system_mapper::chip_of(plan, stage, replica, rank); }
    endpoint memory_of(int chip) const { return endpoint{cg.first[static_cast<size_t>(chip)] + mem_local, -1, 0}; }
    lane& lane_of(int stage, int replica) {
        return lanes[static_cast<size_t>(stage) * static_cast<size_t>(sim_dp) + static_cast<size_t>(replica)];
    }

    void shape_call(collective_call& call, int stride, int members) const;
    void in_switch(collective_call& call, const std::vector<int>& chips);
    collective_steps lower(const collective_call& c);
    void run_pass(cut_pass& cp, int stage, int replica, std::vector<deps_t>& at);
    void pass_collective(const cut_pass::collective& cc, int stage, int replica, std::vector<deps_t>& at);
    std::uint32_t join(std::uint32_t op, const deps_t& d);

    void reserve(const partition_result& part, const std::vector<chunk_passes>& passes,
                 const std::vector<std::vector<schedule_item>>& schedules);
    void run_pipeline(const partition_result& part, std::vector<chunk_passes>& passes,
                      const std::vector<std::vector<schedule_item>>& schedules);
    bool emit_item(lane& l, const schedule_item& it, const partition_result& part, std::vector<chunk_passes>& passes,
                   item_ends& ended, const pipeline_ops& ops);
    void receive(const lane& l, const chunk_partition& sender, bool fwd, const std::vector<std::uint32_t>& sent,
                 const pipeline_ops& ops, std::vector<deps_t>& at);

    void reduce_and_step(const partition_result& part, std::vector<chunk_passes>& passes);
    void sync(const collective_use& u, int stage, bool after_optimizer);
    void sync_embedding(const collective_call& call, int stage);
    void sync_group(collective_call& call, bool over_dp, int stage);

    void describe(mapping& out, const partition_result& part, const memory_report& mem,
                  const std::vector<chunk_passes>& passes, std::uint64_t capacity, const std::string& chip_group,
                  int simulated_microbatches) const;
};

// A group's algorithm: on a torus, rings along each dimension the group spans (a ring where it does not
// line up); elsewhere the one asked for. A kind that has no such algorithm takes the first it has (an all-to-all
// sends to each peer directly, as NCCL's does).
void iteration_builder::shape_call(collective_call& call, int stride, int members) const {
    const auto fits = algorithms_for(call.kind);
    auto has = [&](collective_algorithm a) { return std::find(fits.begin(), fits.end(), a) != fits.end(); };
    call.algorithm = algo;
    if (algo == collective_algorithm::torus) {
        if (has(algo)) call.shape = group_torus(torus, stride, members);
        if (call.shape.empty()) call.algorithm = collective_algorithm::ring;
    }
    if (!has(call.algorithm)) call.algorithm = fits.front();
    call.bidirectional = opt.bidirectional && call.algorithm != collective_algorithm::tree &&
                         call.algorithm != collective_algorithm::direct;
}

// A reduction over chips whose engines sit on one switch reduces in it (NVLink SHARP inside a node; a group
// spanning nodes keeps the algorithm above, as NCCL's NVLS does not cross InfiniBand), where that is faster
// by the bandwidth bounds, as NCCL's tuner picks: the switch moves the buffer once each way at the slower of
// the engine and the chip's link, a ring 2(n-1)/n times (all-reduce; (n-1)/n against 1 + 1/n for a
// reduce-scatter) at the link's rate. With few chips the ring wins (2 chips: 1x against the engine's rate).
void iteration_builder::in_switch(collective_call& call, const std::vector<int>& chips) {
    if (engines.empty() || chips.size() < 2) return;
    if (call.kind != collective_kind::all_reduce && call.kind != collective_kind::reduce_scatter) return;
    const attach_point engine0 = plat.attachment(engines[static_cast<size_t>(chips.front())], 0);
    for (int c : chips)
        if (plat.attachment(engines[static_cast<size_t>(c)], 0).net != engine0.net) return;
    double& link = link_to_engine[static_cast<size_t>(chips.front())];  // the chip's links toward the switch
    if (link < 0) {
        const attach_point chip_port = plat.attachment(memory_of(chips.front()).comp, 0);
        if (!chip_port.valid() || !engine0.valid()) return;
        link = std::numeric_limits<double>::infinity();
        for (const route_segment& seg : plat.route(chip_port, engine0))
            link = std::min(link, plat.net(seg.net).link_bytes_per_second());
    }
    const double engine =
        std::min(link, plat.comp(engines[static_cast<size_t>(chips.front())]).peak_bytes_per_second());
    const double n = static_cast<double>(chips.size());
    const bool all_reduce = call.kind == collective_kind::all_reduce;
    const double ring_bytes = all_reduce ? 2 * (n - 1) / n : (n - 1) / n, switch_bytes = all_reduce ? 1 : 1 + 1 / n;
    if (switch_bytes / engine >= ring_bytes / link) return;
    call.algorithm = collective_algorithm::in_network;
    call.shape.clear();
    call.bidirectional = false;
    call.chunks =
        static_cast<std::uint32_t>(std::clamp<std::uint64_t>(call.bytes / opt.in_network_slice.bytes(), 1, 64));
    for (int c : chips) call.engines.push_back(endpoint{engines[static_cast<size_t>(c)], 0, 0});
}

collective_steps iteration_builder::lower(const collective_call& c) {
    collective_steps cs = lower_collective(p, c, &collective_plans);
    planned.collectives.push_back(
        {c.op, c.kind, c.algorithm, c.bytes, static_cast<int>(c.ranks.size()), cs.first, cs.end});
    return cs;
}

// Runs one pass on the tp ranks of (stage, replica): segments re-bound per rank, collectives across the group.
void iteration_builder::run_pass(cut_pass& cp, int stage, int replica, std::vector<deps_t>& at) {
    for (size_t k = 0; k < cp.segments.size(); ++k) {
        const program& seg = cp.segments[k];
        if (seg.size() > 0)
            for (int t = 0; t < sim_tp; ++t) {
                const std::uint32_t off =
                    p.append(seg, on_chip(cg, chip_of(stage, replica, t)), at[static_cast<size_t>(t)], &cp.memos[k]);
                deps_t next;
                for (std::uint32_t s : cp.sinks[k]) next.push_back(off + s);
                at[static_cast<size_t>(t)] = std::move(next);
            }
        if (k >= cp.collectives.size()) continue;
        pass_collective(cp.collectives[k], stage, replica, at);
    }
}

// A collective inside a pass, across the tp ranks of (stage, replica), after what each rank has run.
void iteration_builder::pass_collective(const cut_pass::collective& cc, int stage, int replica,
                                        std::vector<deps_t>& at) {
    if (cc.group != "tp")
        throw input_error("collective '" + cc.name + "' of group '" + cc.group +
                          "' inside a pass is not simulated by the system mapper (only tp)");
    const int tp = plan.tp;
    if (tp == 1) return;
    collective_call call;
    call.kind = cc.kind;
    shape_call(call, 1, tp);
    call.bytes = cc.bytes;
    call.op = p.intern_op(cc.name);
    call.symmetric = sym;
    std::vector<int> chips;
    for (int t = 0; t < tp; ++t) {
        chips.push_back(chip_of(stage, replica, t));
        call.ranks.push_back(memory_of(chips.back()));
        call.after.push_back(t < sim_tp ? at[static_cast<size_t>(t)] : deps_t{});
    }
    in_switch(call, chips);
    const collective_steps cs = lower(call);
    for (int t = 0; t < sim_tp; ++t) at[static_cast<size_t>(t)] = {cs.done[static_cast<size_t>(t)]};
}

std::uint32_t iteration_builder::join(std::uint32_t op, const deps_t& d) {
    if (d.size() == 1) return d.front();
    return p.add_delay(op, 0, d);
}

// Room for every copy of the passes' steps and dependencies, made once. Grown by doubling from empty, the iteration
// program (most of a run's memory) was copied and its pages faulted in again at every doubling: a fifth of an
// IPU-POD run's wall time (2026-12-07). The copies are a lower bound of the program (the collectives, sends and joins
// between them come on top), so reserving the power of two at or above them ends, as doubling did, at the least power
// of two that holds the program, and with no copy at all where the two are the same.
void iteration_builder::reserve(const partition_result& part, const std::vector<chunk_passes>& passes,
                                const std::vector<std::vector<schedule_item>>& schedules) {
    const auto copies = static_cast<std::size_t>(sim_dp) * static_cast<std::size_t>(sim_tp);
    std::size_t steps = p.steps.size(), deps = p.deps.size();
    auto add = [&](const cut_pass& cp) {
        for (const program& seg : cp.segments) {
            steps += seg.steps.size() * copies;
            deps += seg.deps.size() * copies;
        }
    };
    for (int s = 0; s < plan.pp; ++s)
        for (const schedule_item& it : schedules[static_cast<size_t>(s)]) {
            const chunk_passes& cp = passes[static_cast<size_t>(it.chunk)];
            add(it.pass == pass_dir::forward ? cp.fwd : cp.bwd);
        }
    for (const chunk_partition& ch : part.chunks) add(passes[static_cast<size_t>(ch.index)].opt);
    auto power_of_two_from = [](std::size_t n) {
        std::size_t c = 1;
        while (c < n) c <<= 1;
        return c;
    };
    p.steps.reserve(power_of_two_from(steps));
    p.deps.reserve(power_of_two_from(deps));
}

// Pipeline: every lane (stage, replica) runs its schedule; items are emitted once what they receive exists.
void iteration_builder::run_pipeline(const partition_result& part, std::vector<chunk_passes>& passes,
                                     const std::vector<std::vector<schedule_item>>& schedules) {
    for (int s = 0; s < plan.pp; ++s)
        for (int d = 0; d < sim_dp; ++d) lanes.push_back({s, d, 0, std::vector<deps_t>(static_cast<size_t>(sim_tp))});
    item_ends ended;
    pipeline_ops ops;
    ops.send_forward = p.intern_op("pipeline.send_forward");
    ops.send_backward = p.intern_op("pipeline.send_backward");
    ops.item = p.intern_op("pipeline.item");
    size_t left = 0;
    for (const auto& l : lanes) left += schedules[static_cast<size_t>(l.stage)].size();
    while (left > 0) {
        bool progress = false;
        for (lane& l : lanes) {
            const auto& items = schedules[static_cast<size_t>(l.stage)];
            while (l.next < items.size()) {
                if (!emit_item(l, items[l.next], part, passes, ended, ops)) break;
                ++l.next;
                --left;
                progress = true;
            }
        }
        if (!progress) throw std::logic_error("system mapper: the pipeline schedules wait on each other");
    }
}

// Emits lane `l`'s next item `it`: what it receives from the chunk before it (after it, going backward), its pass
// and its end per simulated tp rank; false, emitting nothing, while the sender has not run yet.
bool iteration_builder::emit_item(lane& l, const schedule_item& it, const partition_result& part,
                                  std::vector<chunk_passes>& passes, item_ends& ended, const pipeline_ops& ops) {
    const bool fwd = it.pass == pass_dir::forward;
    const int from_chunk = fwd ? it.chunk - 1 : it.chunk + 1;
    const bool receives = from_chunk >= 0 && from_chunk < plan.chunks();
    const std::tuple<int, int, int, int> src{l.replica, from_chunk, it.microbatch, fwd ? 0 : 1};
    if (receives && !ended.count(src)) return false;
    std::vector<deps_t> at = l.tail;
    if (receives) receive(l, part.chunks[static_cast<size_t>(from_chunk)], fwd, ended.at(src), ops, at);
    chunk_passes& cp = passes[static_cast<size_t>(it.chunk)];
    const std::uint32_t item_first = static_cast<std::uint32_t>(p.size());  // after the receive
    run_pass(fwd ? cp.fwd : cp.bwd, l.stage, l.replica, at);
    std::vector<std::uint32_t> ends;
    const std::uint32_t item_op = p.intern_op(std::string(fwd ? "F" : "B") + " chunk " + std::to_string(it.chunk) +
                                              " mb " + std::to_string(it.microbatch));
    for (int t = 0; t < sim_tp; ++t) {
        const std::uint32_t e = join(ops.item, at[static_cast<size_t>(t)]);
        ends.push_back(e);
        l.tail[static_cast<size_t>(t)] = {e};
        planned.items.push_back({chip_of(l.stage, l.replica, t), item_first, e, item_op});
    }
    ended[{l.replica, it.chunk, it.microbatch, fwd ? 0 : 1}] = std::move(ends);
    return true;
}

// What lane `l`'s item receives from `sender`, whose pass ended at `sent` (per simulated tp rank): a transfer
// from the sender's chip, or, from a chunk on the same stage, nothing to move.
void iteration_builder::receive(const lane& l, const chunk_partition& sender, bool fwd,
                                const std::vector<std::uint32_t>& sent, const pipeline_ops& ops,
                                std::vector<deps_t>& at) {
    const double bytes = fwd ? sender.send_forward_bytes : sender.send_backward_bytes;
    const int from_stage = sender.stage;
    for (int t = 0; t < sim_tp; ++t) {
        const std::uint32_t after = sent[static_cast<size_t>(t)];
        if (from_stage == l.stage) {  // interleaved chunks on one stage: already in place
            at[static_cast<size_t>(t)].push_back(after);
            continue;
        }
        const std::uint32_t x =
            p.add_transfer(fwd ? ops.send_forward : ops.send_backward, memory_of(chip_of(from_stage, l.replica, t)),
                           memory_of(chip_of(l.stage, l.replica, t)), static_cast<std::uint64_t>(bytes), {after});
        at[static_cast<size_t>(t)].push_back(x);
    }
}

// Gradient reduction, then the optimizer step (and ZeRO's weight all-gather after it).
void iteration_builder::reduce_and_step(const partition_result& part, std::vector<chunk_passes>& passes) {
    for (bool after_optimizer : {false, true}) {
        for (int s = 0; s < plan.pp; ++s)
            for (const chunk_partition& ch : part.chunks)
                if (ch.stage == s)
                    for (const collective_use& u : ch.grad_sync) sync(u, s, after_optimizer);
        if (after_optimizer) break;
        for (lane& l : lanes)
            for (const chunk_partition& ch : part.chunks)
                if (ch.stage == l.stage)
                    run_pass(passes[static_cast<size_t>(ch.index)].opt, l.stage, l.replica, l.tail);
    }
}

// One gradient synchronisation of stage `stage`: before the optimizer step, or (an all-gather) after it.
void iteration_builder::sync(const collective_use& u, int stage, bool after_optimizer) {
    const bool gather = u.kind == "all_gather";
    if (gather != after_optimizer) return;
    collective_call call;
    call.kind = parse_collective_kind(u.kind);
    call.bytes = static_cast<std::uint64_t>(u.bytes);
    call.op = p.intern_op(u.name);
    if (u.group == "embedding") {
        sync_embedding(call, stage);
        return;
    }
    if (u.group == "dp" || u.group == "tp") {
        sync_group(call, u.group == "dp", stage);
        return;
    }
    throw input_error("gradient synchronisation '" + u.name + "' of group '" + u.group +
                      "' is not simulated by the system mapper");
}

// The first and last stage's copies of a tied embedding: two ranks, both simulated.
void iteration_builder::sync_embedding(const collective_call& call, int stage) {
    const int pp = plan.pp;
    if (stage != 0 || pp == 1) return;
    for (int d = 0; d < sim_dp; ++d)
        for (int t = 0; t < sim_tp; ++t) {
            collective_call c2 = call;
            c2.algorithm = collective_algorithm::ring;
            c2.ranks = {memory_of(chip_of(0, d, t)), memory_of(chip_of(pp - 1, d, t))};
            c2.after = {lane_of(0, d).tail[static_cast<size_t>(t)], lane_of(pp - 1, d).tail[static_cast<size_t>(t)]};
            const collective_steps cs = lower(c2);
            lane_of(0, d).tail[static_cast<size_t>(t)] = {cs.done[0]};
            lane_of(pp - 1, d).tail[static_cast<size_t>(t)] = {cs.done[1]};
        }
}

// One collective per group of the stage: across replicas (dp, one per tp rank) or across tp ranks
// (one per replica). (member, other) -> chip, with `member` running over the group.
void iteration_builder::sync_group(collective_call& call, bool over_dp, int stage) {
    const int members = over_dp ? plan.dp : plan.tp, sim_members = over_dp ? sim_dp : sim_tp;
    const int groups = over_dp ? sim_tp : sim_dp;
    if (members == 1) return;
    call.symmetric = sym;
    shape_call(call, over_dp ? plan.tp : 1, members);
    auto tail = [&](int member, int other) -> deps_t& {
        const int d = over_dp ? member : other, t = over_dp ? other : member;
        return lane_of(stage, d).tail[static_cast<size_t>(t)];
    };
    for (int o = 0; o < groups; ++o) {
        collective_call c2 = call;
        std::vector<int> chips;
        for (int m = 0; m < members; ++m) {
            chips.push_back(over_dp ? chip_of(stage, m, o) : chip_of(stage, o, m));
            c2.ranks.push_back(memory_of(chips.back()));
            c2.after.push_back(m < sim_members ? tail(m, o) : deps_t{});
        }
        in_switch(c2, chips);
        const collective_steps cs = lower(c2);
        for (int m = 0; m < sim_members; ++m) tail(m, o) = {cs.done[static_cast<size_t>(m)]};
    }
}

/// The plan's memory per chip, for the run's details.
nlohmann::json memory_details(const memory_report& mem, std::uint64_t capacity) {
    nlohmann::json stages = nlohmann::json::array();
    for (const stage_memory& sm : mem.stages)
        stages.push_back({{"stage", sm.stage},
                          {"weights_bytes", sm.weights},
                          {"gradients_bytes", sm.gradients},
                          {"optimizer_state_bytes", sm.optimizer_state},
                          {"activations_bytes", sm.activations},
                          {"state_bytes", sm.state},
                          {"total_bytes", sm.total},
                          {"microbatches_in_flight", sm.max_in_flight}});
    return {{"capacity_bytes", static_cast<double>(capacity)}, {"stages", stages}};
}

// What the run reports beside the iteration time.
void iteration_builder::describe(mapping& out, const partition_result& part, const memory_report& mem,
                                 const std::vector<chunk_passes>& passes, std::uint64_t capacity,
                                 const std::string& chip_group, int simulated_microbatches) const {
    const int dp = plan.dp, tp = plan.tp, pp = plan.pp;
    const int m = static_cast<int>(part.microbatches), m_run = simulated_microbatches;
    const std::int64_t n_chips = static_cast<std::int64_t>(cg.chips.size());
    // A window's samples: what the simulated microbatches carry, so its throughput is the window's.
    out.simulated_share = static_cast<double>(m_run) / m;
    out.samples = static_cast<double>(part.batch) * out.simulated_share;
    nlohmann::json par;
    par["plan"] = plan.str();
    par["dp"] = dp;
    par["tp"] = tp;
    par["pp"] = pp;
    par["microbatch"] = plan.microbatch;
    par["microbatches"] = m;
    par["microbatches_simulated"] = m_run;
    par["interleave"] = plan.interleave;
    par["schedule"] = plan.schedule;
    par["recompute"] = plan.recompute;
    par["zero"] = plan.zero;
    par["training"] = part.training;  // else an inference step: forward passes only
    par["chips"] = n_chips;
    par["simulated_chips"] = static_cast<std::int64_t>(pp) * sim_dp * sim_tp;
    for (int s = 0; s < pp; ++s)
        for (int d = 0; d < dp; ++d)
            for (int t = 0; t < tp; ++t)
                if (d >= sim_dp || t >= sim_tp) {
                    const std::uint32_t first = cg.first[static_cast<size_t>(chip_of(s, d, t))];
                    out.represented.emplace_back(first, first + cg.components);
                }
    out.traffic_scale =
        static_cast<double>(n_chips) / static_cast<double>(static_cast<std::int64_t>(pp) * sim_dp * sim_tp);
    par["symmetric"] = sym;
    par["ideal_bubble"] = bubble_fraction(plan.schedule, pp, plan.interleave, m);
    par["memory"] = memory_details(mem, capacity);
    // Every chunk runs on the dp x tp ranks of its stage: forward, backward (with recompute) per microbatch, and
    // the optimizer once.
    double hw_flops = 0;
    for (const chunk_passes& cp : passes) hw_flops += (cp.fwd.flops + cp.bwd.flops) * m_run + cp.opt.flops;
    par["hardware_flops"] = hw_flops * dp * tp;
    par["chip_group"] = chip_group;
    // Activations a chip could not keep on chip for the backward pass (the IPU's, in streaming memory).
    double spilled = 0;
    for (const chunk_passes& cp : passes) spilled += (cp.fwd.spilled_bytes + cp.bwd.spilled_bytes) * m;
    par["spilled_activation_bytes"] = spilled;
    out.details["parallel"] = par;
    if (spilled > 0)
        out.notes.push_back(
            "activations off chip: a chip's on-chip memory cannot hold those the backward pass "
            "reads at microbatch " +
            std::to_string(plan.microbatch) + ", so " + format_bytes(spilled) +
            " per chip and iteration go to its streaming memory and back (a smaller microbatch "
            "may keep them on chip)");
    // Tensors a chip stored between its sections past its fastest memory (the RDU's HBM full while they lived).
    double slower = 0, kept = 0;
    std::string slower_name;
    for (const chunk_passes& cp : passes)
        for (const cut_pass* pass : {&cp.fwd, &cp.bwd, &cp.opt}) {
            slower += pass->slower_bytes * (pass == &cp.opt ? 1 : m);
            kept = std::max(kept, pass->kept_bytes);
            if (!pass->slower.empty()) slower_name = pass->slower;
        }
    out.details["parallel"]["slower_memory_bytes"] = slower;
    out.details["parallel"]["kept_for_program_bytes"] = kept;
    if (slower > 0)
        out.notes.push_back("tensors stored between sections in a slower memory: " + format_bytes(slower) +
                            " per chip and iteration in " + slower_name + ", the fastest having no room while they " +
                            "lived" +
                            (kept > 0 ? " beside up to " + format_bytes(kept) +
                                            " kept for the rest of the chip program (its other passes' weights, the "
                                            "gradients, the optimizer state)"
                                      : "") +
                            " (docs/platforms/rdu.md, step 7)");
    out.notes.push_back(
        "parallel plan " + plan.str() + " on " + std::to_string(n_chips) + " chips: " + std::to_string(m) +
        " microbatches of " + std::to_string(plan.microbatch) + " per pipeline, " + plan.schedule +
        " schedule (ideal bubble " + fmt_percent(bubble_fraction(plan.schedule, pp, plan.interleave, m)) + ")" +
        (m_run < m ? "; a window of the first " + std::to_string(m_run) +
                         " simulated, the iteration extrapolated (mapper.window)"
                   : std::string()) +
        (sym ? "; one representative chip per stage simulated" : "; every chip simulated") +
        (opt.symmetric && !sym ? " (the " + opt.algorithm + " algorithm has a root: ranks play different roles)" : ""));
    for (const auto& n : part.notes) out.notes.push_back(n);
}

}  // namespace

bool system_mapper::symmetric() const {
    return m_opt.symmetric && !has_root(parse_collective_algorithm(m_opt.algorithm));
}

mapping system_mapper::map(const workload_graph& g, const platform& plat) const {
    const platform::chip_group& cg = *plat.find_chip_group(m_chip_group);
    const parallel_plan& plan = m_plan;
    auto planned = std::make_shared<system_record>();
    planned->chip_group = m_chip_group;
    const std::int64_t n_chips = static_cast<std::int64_t>(cg.chips.size());
    if (!g.origin)
        throw input_error(
            "mapper 'system': the workload must be named (a generator or a file) so it can be split by the plan");
    if (m_opt.weights == "streamed") {
        weight_streaming_setup ws;
        ws.chips = &cg;
        ws.chip_memory = chip_memory(plat, cg).first;
        ws.fabric = m_fabric;
        ws.engines = m_engines;
        ws.store = m_store;
        ws.symmetric = symmetric();
        ws.window = m_opt.window;
        std::vector<streamed_item> items;
        mapping out = map_weight_streaming(g, plat, plan, *m_chip_mapper, ws, items);
        for (const streamed_item& it : items) planned->items.push_back({it.chip, it.first, it.last, it.op});
        out.record = planned;
        return out;
    }
    refuse_unsimulated(plan);
    validate_plan(plan, plan_target_of(*g.origin, g.overrides, n_chips));
    // Without workload.training the step is inference: forward passes only, the KV cache held as state.
    const partition_result part = partition(*g.origin, g.overrides, plan);

    // Chip 0's largest memory bounds the plan; it (or mapper.memory) holds what collectives and pipeline sends move.
    const platform& chip0 = *cg.chips.front();
    const std::pair<std::uint32_t, std::uint64_t> chip_mem = chip_memory(plat, cg);
    const std::uint32_t mem_local = chip_mem.first;
    const std::uint64_t capacity = chip_mem.second;
    const memory_report mem = memory_per_chip(part, static_cast<double>(capacity));

    const int m = static_cast<int>(part.microbatches);
    const collective_algorithm algo = parse_collective_algorithm(m_opt.algorithm);
    // Each piece is mapped knowing what the whole chip program reads in every step (the most any stage does):
    // its weights and state (a KV cache); and what it keeps between pieces for the update (gradients, optimizer
    // state), which a mapper with one memory for everything (the RDU's HBM) leaves room for, while an IPU keeps it
    // in streaming memory when the tiles are full (Graphcore's remote buffers). A training layer sample's
    // (layers_of) are its model's, sized here from the model's partition without its graphs.
    const bool sample = m_opt.layers_of > 0 && part.training && part.layers > 0 && part.layers != m_opt.layers_of;
    const memory_report program_mem =
        sample ? memory_per_chip(partition(*g.origin, layers_overridden(g.overrides, m_opt.layers_of), plan,
                                           partition_detail::memory),
                                 static_cast<double>(capacity))
               : mem;
    require_fit(program_mem, plan);  // a sample fits where its model does
    double held = static_cast<double>(m_opt.holds.bytes()), update = 0;
    for (const stage_memory& sm : program_mem.stages) {
        held = std::max(held, sm.weights + sm.state);
        update = std::max(update, sm.gradients + sm.optimizer_state);
    }
    m_chip_mapper->maps_pieces(held, update);
    // A window simulates the first microbatches only: at least a pipeline's worth (its fill and drain), in whole
    // rounds of pp (the interleaved schedule's unit).
    int m_run = m;
    if (m_opt.window > 0) {
        const std::int64_t rounds = (std::max<std::int64_t>(m_opt.window, plan.pp) + plan.pp - 1) / plan.pp;
        m_run = static_cast<int>(std::min<std::int64_t>(m, rounds * plan.pp));
    }
    auto schedule_of = [&](int microbatches) {
        return part.training ? pipeline_schedule(plan, microbatches) : forward_schedule(plan, microbatches);
    };
    const auto schedules = schedule_of(m_run);
    // The chip programs' form is chosen by the whole iteration's steps, so a window is mapped as the whole
    // iteration would be; only a refusal is by the window's own.
    const auto whole_schedules = m_run < m ? schedule_of(m) : schedules;
    // The chip mapper's own form first; its coarse form (one step per superstep or section), if it has one, from
    // the start when the fine form proves over the steps budget, or over the cost at which the chip mapper's auto
    // form goes coarse on one chip (its pieces are each far below it: an SN40L's 13B pass in fine pieces moved
    // 1.3e8 packets of 4 KiB). The proof is the tally of the passes' steps (and fine costs) as they are mapped,
    // or any program passing the limit while it is built: one piece, or the iteration as its pieces, collectives
    // and pipeline sends are joined.
    std::vector<chunk_passes> passes;
    // A layer sample's form is chosen as for its model: its passes counted as the model's (layers_of).
    const double model_scale = m_opt.layers_of > 0 && part.layers > 0
                                   ? static_cast<double>(m_opt.layers_of) / static_cast<double>(part.layers)
                                   : 1.0;
    auto build = [&](const mapper& chip_mapper, const std::vector<std::vector<schedule_item>>& counted, double scale) {
        steps_tally tally = tally_of(g.name, part, counted, scale * (symmetric() ? 1 : plan.dp),
                                     symmetric() ? 1 : plan.tp, chip_mapper.coarse_above());
        passes.clear();  // a failed finer attempt's pieces
        try {
            passes = cut_chunks(part, chip_mapper, chip0, tally);
            auto record = std::make_shared<system_record>(*planned);
            mapping out;
            out.record = record;
            out.prog.name = g.name;
            iteration_builder b(plat, cg, plan, m_opt, m_torus, m_engines, mem_local, algo, symmetric(), out.prog,
                                *record);
            b.reserve(part, passes, schedules);
            b.run_pipeline(part, passes, schedules);
            b.reduce_and_step(part, passes);
            b.describe(out, part, mem, passes, capacity, m_chip_group, m_run);
            return out;
        } catch (const steps_limit_error& e) {
            throw over_steps_budget{e.what_alone, e.steps, true};
        }
    };
    const std::string fewer = steps_limit_error::fewer;
    mapping out;
    std::string coarse_note;
    try {
        out = build(*m_chip_mapper, whole_schedules, model_scale);
    } catch (const over_steps_budget& fine) {
        const std::unique_ptr<mapper> coarse = m_chip_mapper->coarser();
        if (!coarse) {  // over the budget: a mapper with no coarse form has no coarse_above
            if (m_run == m && model_scale == 1.0) throw input_error(fine.message + fewer);
            try {  // the whole iteration (or model) is over the budget, its window (or sample) may not be
                out = build(*m_chip_mapper, schedules, 1.0);
            } catch (const over_steps_budget& window) {
                throw input_error(window.message + fewer);
            }
            return out;
        }
        try {
            out = build(*coarse, schedules, 1.0);
        } catch (const over_steps_budget& still) {
            throw input_error(still.message + " in the chip mapper's coarse form (the fine form: " +
                              (fine.at_least ? "more than " : "about ") + format_number(fine.estimate) +
                              (fine.above_coarse ? " steps and packets" : "") + ")" + fewer);
        }
        const std::string fix = m_chip_group + ".mapper.representation=fine forces the fine form)";
        coarse_note =
            std::string("coarse chip programs: the fine form would need ") + (fine.at_least ? "more than " : "about ") +
            format_number(fine.estimate) +
            (fine.above_coarse ? " steps and packets, above the chip's " + m_chip_group + ".mapper.coarse_above of " +
                                     format_number(m_chip_mapper->coarse_above()) + " (" + fix
                               : " steps, over the steps budget of " + format_number(limits().steps) +
                                     " (--limit steps=N raises it; " + fix);
    }

    if (!coarse_note.empty()) {
        // The chip's coarse form applies whole: its packets and quantum, which joining its pieces leaves behind.
        for (const chunk_passes& cp : passes)
            for (const cut_pass* pass : {&cp.fwd, &cp.bwd, &cp.opt})
                for (const program& seg : pass->segments) {
                    out.prog.packet_bytes = std::max(out.prog.packet_bytes, seg.packet_bytes);
                    out.prog.quantum = std::max(out.prog.quantum, seg.quantum);
                }
        out.notes.insert(out.notes.begin(), coarse_note);
    }
    return out;
}

}  // namespace tessel
