// Graph passes on small graphs whose answers are known by hand: topological order, critical path, dead-node
// removal, elementwise fusion, and the Boost.Graph view.
#include <gtest/gtest.h>

#include "engine/workload/builder.h"
#include "engine/workload/load.h"
#include "engine/workload/passes.h"
#include "engine/workload/yaml_workload.h"
#include "workload_test_util.h"

using namespace tessel;

namespace {

/// x -> a (matmul 8x64x64) -> b (relu) ----------------------------> d (add)
///   \-> c (matmul 8x64x256) -> c2 (matmul 8x256x64) --------------/
/// The branch through c has more FLOPs: the critical path is c -> c2 -> d.
workload_graph diamond() {
    graph_builder b("diamond", dtype::fp16);
    const int x = b.input("x", {8, 64});
    const int a = b.add1("matmul", "a", {x, b.weight("wa", {64, 64})});
    const int r = b.add1("relu", "b", {a});
    const int c = b.add1("matmul", "c", {x, b.weight("wc", {64, 256})});
    const int c2 = b.add1("matmul", "c2", {c, b.weight("wc2", {256, 64})});
    b.add1("add", "d", {r, c2});
    return b.finish();
}

int index_of(const workload_graph& g, const std::string& name) {
    for (size_t i = 0; i < g.ops().size(); ++i)
        if (g.op(static_cast<int>(i)).name == name) return static_cast<int>(i);
    return -1;
}

}  // namespace

TEST(passes, topological_order_is_stable_and_boost_view_matches) {
    const auto g = diamond();
    const auto order = g.topological_order();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
    // Vertices are ops, edges are tensors from producer to consumer.
    EXPECT_EQ(boost::num_vertices(g.storage()), 5u);
    EXPECT_EQ(boost::num_edges(g.storage()), 4u);  // a->b, c->c2, b->d, c2->d
    EXPECT_EQ(boost::in_degree(static_cast<size_t>(index_of(g, "d")), g.storage()), 2u);
}

TEST(passes, critical_path_follows_the_heavier_branch) {
    const auto g = diamond();
    const auto cp = critical_path(g);
    std::vector<std::string> names;
    for (int v : cp.ops) names.push_back(g.op(v).name);
    EXPECT_EQ(names, (std::vector<std::string>{"c", "c2", "d"}));
    // c: 2*8*64*256, c2: 2*8*256*64, d: 8*64 adds.
    EXPECT_DOUBLE_EQ(cp.weight, 2 * 2.0 * 8 * 64 * 256 + 8 * 64);
    // Weighted by op count instead, both branches tie at 3 ops; the tie goes to the lower op index.
    const auto by_count = critical_path(g, [](const op_node&) { return 1.0; });
    EXPECT_DOUBLE_EQ(by_count.weight, 3);
    EXPECT_EQ(g.op(by_count.ops.front()).name, "a");
}

TEST(passes, dead_ops_and_their_weights_go) {
    graph_builder b("dead", dtype::fp16);
    const int x = b.input("x", {4, 16});
    const int y = b.add1("matmul", "used", {x, b.weight("w_used", {16, 16})});
    const int unused = b.add1("matmul", "unused", {x, b.weight("w_unused", {16, 1000})});
    b.add1("relu", "unused_too", {unused});
    auto g = b.finish();
    // Only 'used' is an output.
    for (auto& t : g.tensors())
        if (t.role == tensor_role::output && t.name != g.tensor(y).name) t.role = tensor_role::activation;
    EXPECT_DOUBLE_EQ(g.parameter_count(), 16 * 16 + 16 * 1000);
    EXPECT_EQ(remove_dead_ops(g), 2);
    EXPECT_EQ(g.ops().size(), 1u);
    EXPECT_EQ(g.op(0).name, "used");
    EXPECT_DOUBLE_EQ(g.parameter_count(), 16 * 16);
    EXPECT_EQ(g.find_tensor("w_unused"), -1);
    EXPECT_EQ(remove_dead_ops(g), 0);
}

TEST(passes, fusion_folds_bias_and_activation_into_the_matmul) {
    graph_builder b("f", dtype::fp16);
    const int x = b.input("x", {32, 128});
    const int m = b.add1("matmul", "fc", {x, b.weight("w", {128, 256})});
    const int a = b.add1("add", "bias", {m, b.weight("b_fc", {256})});
    const int r = b.add1("gelu", "act", {a});
    const int side = b.add1("relu", "side", {x});  // reads x: x has two readers, so nothing fuses into x
    b.add1("mul", "scale", {r, b.input("s", {32, 256})});
    (void)side;
    auto g = b.finish();
    const op_cost before = g.total();
    EXPECT_EQ(fuse_elementwise(g), 3);  // bias, act and scale fold into fc; side has no host
    ASSERT_EQ(g.ops().size(), 2u);
    const op_node& fc = g.op(index_of(g, "fc"));
    ASSERT_EQ(fc.fused.size(), 3u);
    EXPECT_EQ(fc.fused[0].type, "add");
    EXPECT_EQ(fc.fused[1].type, "gelu");
    EXPECT_EQ(fc.fused[2].type, "mul");
    EXPECT_EQ(g.tensor(fc.outputs[0]).name, "scale");
    EXPECT_EQ(fc.own_inputs(), 2u);
    const op_cost after = g.total();
    EXPECT_DOUBLE_EQ(after.flops, before.flops);
    EXPECT_DOUBLE_EQ(after.macs, before.macs);
    // Three 32x256 fp16 intermediates are no longer written and read back.
    const double inter = 32 * 256 * 2;
    EXPECT_DOUBLE_EQ(after.bytes_out, before.bytes_out - 3 * inter);
    EXPECT_DOUBLE_EQ(after.bytes_in, before.bytes_in - 3 * inter);
    EXPECT_DOUBLE_EQ(after.bytes_weight, before.bytes_weight);
    g.topological_order();
}

TEST(passes, fusion_leaves_shared_and_shape_changing_results_alone) {
    graph_builder b("f", dtype::fp16);
    const int x = b.input("x", {4, 8});
    const int m = b.add1("matmul", "fc", {x, b.weight("w", {8, 8})});
    b.add1("relu", "r1", {m});
    b.add1("relu", "r2", {m});  // m has two readers
    const int col = b.add1("matmul", "col", {x, b.weight("v", {8, 1})});
    b.add1("add", "grow", {col, b.input("wide", {4, 8})});  // broadcast makes the result larger
    b.add1("cast", "c", {b.add1("relu", "r3", {x})}, op_attrs().s("to", "fp32"));
    auto g = b.finish();
    EXPECT_EQ(fuse_elementwise(g), 0);
}

TEST(passes, fused_graphs_of_real_models_keep_their_flops) {
    for (const char* name : {"resnet18", "bert-base"}) {
        const auto plain = load_workload(name, {});
        const auto fused = load_workload(name, {{"fuse", "true"}});
        EXPECT_LT(fused.ops().size(), plain.ops().size()) << name;
        EXPECT_DOUBLE_EQ(fused.total().flops, plain.total().flops) << name;
        EXPECT_LT(fused.total().bytes_out, plain.total().bytes_out) << name;
    }
}
