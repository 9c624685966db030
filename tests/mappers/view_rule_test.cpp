// One view rule for every mapper (engine/workload/op_types.h, is_view): reshape, flatten, squeeze and
// unsqueeze are views, free everywhere; transpose, slice and concat move data, and every mapper costs them. A
// transpose-heavy graph (a projection split into heads, transposed, activated, transposed back and merged, its
// halves sliced and swapped by a concat) is mapped by each execution style on a platform of its own: kernels
// (h100_sxm, tpu_v4), bsp (gc200), tsp (groqchip1), rdu (sn40l), wafer_pipeline (wse2) and mesh (mesh4x4). On
// every one, no step of the program belongs to a view op, and every other op has steps that move or compute
// its bytes (alone, or in the kernel its producer's epilogue runs it in).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/mappers/mapper.h"
#include "engine/workload/op_types.h"
#include "engine/workload/yaml_workload.h"
#include "tests/support/harness.h"

using namespace tessel;

namespace {

// [batch, seq, heads * head] -> heads [batch, heads, seq, head] -> gelu -> back -> halves swapped -> flat rows.
const char* k_views = R"(
workload: views
parameters: {batch: 2, seq: 64, heads: 4, head: 32, precision: fp16}
tensors:
  x: {shape: [batch, seq, heads * head], role: input}
  w: {shape: [heads * head, heads * head], role: weight}
ops:
  - {name: proj,    op: matmul,    inputs: [x, w]}
  - {name: split,   op: reshape,   inputs: [proj], shape: [batch, seq, heads, head]}
  - {name: to_heads, op: transpose, inputs: [split], perm: [0, 2, 1, 3]}
  - {name: act,     op: gelu,      inputs: [to_heads]}
  - {name: back,    op: transpose, inputs: [act], perm: [0, 2, 1, 3]}
  - {name: merged,  op: reshape,   inputs: [back], shape: [batch, seq, heads * head]}
  - {name: lo,      op: slice,     inputs: [merged], starts: [0], ends: [64], axes: [2]}
  - {name: hi,      op: slice,     inputs: [merged], starts: [64], ends: [128], axes: [2]}
  - {name: swapped, op: concat,    inputs: [hi, lo], axis: 2}
  - {name: lifted,  op: unsqueeze, inputs: [swapped], axes: [0]}
  - {name: dropped, op: squeeze,   inputs: [lifted], axes: [0]}
  - {name: flat,    op: flatten,   inputs: [dropped], axis: 2}
  - {name: y,       op: relu,      inputs: [flat]}
)";

const std::set<std::string> k_view_ops = {"split", "merged", "lifted", "dropped", "flat"};
const std::set<std::string> k_costed_ops = {"proj", "to_heads", "act", "back", "lo", "hi", "swapped", "y"};

// One platform per execution style (kernels twice: a GPU and a TPU).
const std::vector<std::string> k_platforms = {
    "gpu/h100_sxm", "tpu/tpu_v4", "ipu/gc200", "tsp/groqchip1", "rdu/sn40l", "wafer/wse2", "teaching/mesh4x4",
};

struct bench {
    sim_context sim;
    param_context ctx;
    std::unique_ptr<platform> plat;
    std::unique_ptr<executor> exec;
    explicit bench(const std::string& path) {
        const std::string name = path.substr(path.find('/') + 1);
        plat = std::make_unique<platform>(name.c_str(), yaml_node::load_file("platforms/" + path + ".yaml"), ctx, sim);
        exec = std::make_unique<executor>((name + "_exec").c_str(), *plat);
    }
};

/// Every platform, built before anything runs (SystemC elaborates once per process).
std::map<std::string, std::unique_ptr<bench>>& benches() {
    static std::map<std::string, std::unique_ptr<bench>> all = [] {
        std::map<std::string, std::unique_ptr<bench>> m;
        for (const auto& p : k_platforms) m[p] = std::make_unique<bench>(p);
        return m;
    }();
    return all;
}

/// The graph op a program op name belongs to: "to_heads [exchange]" (bsp phases) and "proj#1" (rdu column
/// chunks) name to_heads and proj.
std::string graph_op(std::string name) {
    name = name.substr(0, name.find(" ["));
    return name.substr(0, name.find('#'));
}

}  // namespace

TEST(view_rule, metadata_only_ops_are_views_and_data_movement_is_not) {
    const workload_graph g = load_workload_yaml_text(k_views, "views.yaml", {});
    for (const op_node& op : g.ops()) {
        SCOPED_TRACE(op.name);
        EXPECT_EQ(is_view(op), k_view_ops.count(op.name) == 1);
        EXPECT_EQ(k_view_ops.count(op.name) + k_costed_ops.count(op.name), 1u)
            << "every op of the graph is listed once";
    }
}

TEST(view_rule, every_mapper_treats_the_view_ops_alike) {
    const workload_graph g = load_workload_yaml_text(k_views, "views.yaml", {});
    for (const auto& p : k_platforms) {
        SCOPED_TRACE(p);
        bench& b = *benches().at(p);
        param_context ctx;
        auto mp = create_mapper(*b.plat, ctx);
        const mapping m = mp->map(g, *b.plat);
        // A kernel runs the ops fused into it too (tpu_v4 fuses elementwise epilogues): the mapping lists them.
        std::map<std::uint64_t, std::vector<std::string>> kernel_ops;
        if (m.details.contains("kernels"))
            for (const auto& k : m.details["kernels"])
                kernel_ops[k["step"].get<std::uint64_t>()] = k["ops"].get<std::vector<std::string>>();
        std::map<std::string, double> bytes;  // per graph op: bytes its steps move or compute on
        for (std::uint32_t i = 0; i < m.prog.size(); ++i) {
            const step& s = m.prog.steps[i];
            double x = 0;
            if (s.kind == step_kind::transfer) x = static_cast<double>(s.bytes);
            if (s.kind == step_kind::compute) x = m.prog.works[s.work].local_bytes() + m.prog.works[s.work].flops();
            const auto k = kernel_ops.find(i);
            if (k == kernel_ops.end())
                bytes[graph_op(m.prog.op_names[s.op])] += x;
            else
                for (const auto& op : k->second) bytes[op] += x;
        }
        for (const auto& v : k_view_ops) EXPECT_EQ(bytes.count(v), 0u) << "view op '" << v << "' has steps";
        for (const auto& c : k_costed_ops) EXPECT_GT(bytes[c], 0) << "op '" << c << "' moves or computes nothing";
        // Whatever the program is, it runs: every step is valid on the platform.
        EXPECT_GT(b.exec->run(m.prog).duration(), 0u);
    }
}
