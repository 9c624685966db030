// Cost rules, one op kind at a time, against counts worked out by hand from the shapes (fp16: 2 bytes per
// element unless stated).
#include <gtest/gtest.h>

#include "engine/workload/builder.h"
#include "engine/workload/op_types.h"
#include "workload_test_util.h"

using namespace tessel;

namespace {

/// One op over fresh inputs; returns the finished graph and the op's index.
struct one_op {
    graph_builder b{"t", dtype::fp16};
    workload_graph g;
    const op_node& op(const std::string& name) const {
        for (const auto& o : g.ops())
            if (o.name == name) return o;
        throw std::runtime_error("no op " + name);
    }
};

}  // namespace

TEST(op_cost, matmul_with_bias_folds_batch_into_m) {
    one_op t;
    const int x = t.b.input("x", {4, 32, 64});
    const int w = t.b.weight("w", {64, 128});
    const int bias = t.b.weight("bias", {128});
    t.b.add1("matmul", "fc", {x, w, bias});
    t.g = t.b.finish();
    const op_cost& c = t.op("fc").cost;
    EXPECT_DOUBLE_EQ(c.macs, 4.0 * 32 * 64 * 128);
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * 4 * 32 * 64 * 128 + 4 * 32 * 128);  // + one add per output for the bias
    EXPECT_DOUBLE_EQ(c.bytes_in, 4 * 32 * 64 * 2);
    EXPECT_DOUBLE_EQ(c.bytes_weight, (64 * 128 + 128) * 2);
    EXPECT_DOUBLE_EQ(c.bytes_out, 4 * 32 * 128 * 2);
    EXPECT_DOUBLE_EQ(c.params, 64 * 128 + 128);
    // The weight is shared by every batch row: one GEMM of (4*32) x 64 x 128.
    EXPECT_EQ(c.batch, 1);
    EXPECT_EQ(c.m, 128);
    EXPECT_EQ(c.n, 128);
    EXPECT_EQ(c.k, 64);
    EXPECT_EQ(c.cls, op_class::gemm);
    const work w_ = t.op("fc").to_work();
    EXPECT_DOUBLE_EQ(w_.flops(), c.flops);
    EXPECT_DOUBLE_EQ(w_.vector_ops, 4 * 32 * 128);
}

TEST(op_cost, batched_matmul_of_activations_keeps_the_batch) {
    one_op t;
    const int q = t.b.input("q", {2, 8, 16, 64});
    const int k = t.b.input("k", {2, 8, 16, 64});
    t.b.add1("matmul", "scores", {q, k}, op_attrs().i("transpose_b", 1));
    t.g = t.b.finish();
    const op_cost& c = t.op("scores").cost;
    EXPECT_EQ(t.g.tensor(t.op("scores").outputs[0]).shape, (shape_t{2, 8, 16, 16}));
    EXPECT_DOUBLE_EQ(c.macs, 2.0 * 8 * 16 * 16 * 64);
    EXPECT_EQ(c.batch, 16);
    EXPECT_EQ(c.m, 16);
    EXPECT_EQ(c.n, 16);
    EXPECT_EQ(c.k, 64);
    EXPECT_DOUBLE_EQ(c.bytes_weight, 0);
    EXPECT_DOUBLE_EQ(c.bytes_in, 2 * (2 * 8 * 16 * 64) * 2);
}

TEST(op_cost, conv2d_is_its_implicit_gemm) {
    one_op t;
    // 3x3 stride 2 padding 1 over 56x56: output 28x28.
    const int x = t.b.input("x", {2, 64, 56, 56});
    const int w = t.b.weight("w", {128, 64, 3, 3});
    t.b.add1("conv2d", "conv", {x, w}, op_attrs().is("stride", {2}).is("padding", {1}));
    t.g = t.b.finish();
    const op_node& op = t.op("conv");
    EXPECT_EQ(t.g.tensor(op.outputs[0]).shape, (shape_t{2, 128, 28, 28}));
    const double m = 2.0 * 28 * 28, n = 128, k = 64.0 * 3 * 3;
    EXPECT_DOUBLE_EQ(op.cost.macs, m * n * k);
    EXPECT_DOUBLE_EQ(op.cost.flops, 2 * m * n * k);
    EXPECT_EQ(op.cost.batch, 1);
    EXPECT_EQ(op.cost.m, 2 * 28 * 28);
    EXPECT_EQ(op.cost.n, 128);
    EXPECT_EQ(op.cost.k, 64 * 9);
    EXPECT_DOUBLE_EQ(op.cost.params, 128 * 64 * 9);
    EXPECT_DOUBLE_EQ(op.cost.bytes_weight, 128 * 64 * 9 * 2);
    EXPECT_EQ(op.cost.cls, op_class::conv);
}

TEST(op_cost, grouped_and_depthwise_conv_batch_over_groups) {
    one_op t;
    const int x = t.b.input("x", {1, 32, 112, 112});
    // Depthwise: groups = channels, weight [32, 1, 3, 3].
    const int dw = t.b.weight("dw", {32, 1, 3, 3});
    t.b.add1("conv2d", "depthwise", {x, dw}, op_attrs().is("padding", {1}).i("groups", 32));
    // Grouped with dilation 2, padding 2 keeps 112x112: groups 4, weight [64, 8, 3, 3], + bias.
    const int gw = t.b.weight("gw", {64, 8, 3, 3});
    const int gb = t.b.weight("gb", {64});
    t.b.add1("conv2d", "grouped", {x, gw, gb}, op_attrs().is("padding", {2}).is("dilation", {2}).i("groups", 4));
    t.g = t.b.finish();
    const op_node& d = t.op("depthwise");
    EXPECT_EQ(t.g.tensor(d.outputs[0]).shape, (shape_t{1, 32, 112, 112}));
    EXPECT_DOUBLE_EQ(d.cost.macs, 112.0 * 112 * 32 * 9);  // one 3x3 filter per channel
    EXPECT_EQ(d.cost.batch, 32);
    EXPECT_EQ(d.cost.m, 112 * 112);
    EXPECT_EQ(d.cost.n, 1);
    EXPECT_EQ(d.cost.k, 9);
    const op_node& g = t.op("grouped");
    EXPECT_EQ(t.g.tensor(g.outputs[0]).shape, (shape_t{1, 64, 112, 112}));
    EXPECT_DOUBLE_EQ(g.cost.macs, 112.0 * 112 * 64 * 8 * 9);
    EXPECT_DOUBLE_EQ(g.cost.flops, 2 * 112.0 * 112 * 64 * 8 * 9 + 112.0 * 112 * 64);
    EXPECT_EQ(g.cost.batch, 4);
    EXPECT_EQ(g.cost.n, 16);
    EXPECT_EQ(g.cost.k, 72);
}

TEST(op_cost, pooling_counts_window_taps) {
    one_op t;
    const int x = t.b.input("x", {1, 64, 112, 112});
    t.b.add1("max_pool", "max", {x}, op_attrs().is("kernel", {3}).is("stride", {2}).is("padding", {1}));
    t.b.add1("avg_pool", "avg", {x}, op_attrs().is("kernel", {2}));
    t.b.add1("global_avg_pool", "gap", {x});
    t.g = t.b.finish();
    const double out_max = 64.0 * 56 * 56;
    EXPECT_EQ(t.g.tensor(t.op("max").outputs[0]).shape, (shape_t{1, 64, 56, 56}));
    EXPECT_DOUBLE_EQ(t.op("max").cost.flops, out_max * 8);                          // 9 taps, 8 comparisons
    EXPECT_EQ(t.g.tensor(t.op("avg").outputs[0]).shape, (shape_t{1, 64, 56, 56}));  // stride defaults to the kernel
    EXPECT_DOUBLE_EQ(t.op("avg").cost.flops, out_max * 4);                          // 3 adds and a multiply
    EXPECT_DOUBLE_EQ(t.op("gap").cost.flops, 64.0 * 112 * 112);                     // H*W per channel
    EXPECT_DOUBLE_EQ(t.op("gap").cost.bytes_in, 64.0 * 112 * 112 * 2);
    EXPECT_DOUBLE_EQ(t.op("gap").cost.bytes_out, 64 * 2);
}

TEST(op_cost, ceil_mode_pooling_matches_pytorch) {
    one_op t;
    // PyTorch: MaxPool2d(3, 2, ceil_mode=True) on 112 -> 56, on 7 -> 3.
    const int x = t.b.input("x", {1, 8, 112, 112});
    const int y = t.b.input("y", {1, 8, 7, 7});
    t.b.add1("max_pool", "p1", {x}, op_attrs().is("kernel", {3}).is("stride", {2}).i("ceil_mode", 1));
    t.b.add1("max_pool", "p2", {y}, op_attrs().is("kernel", {3}).is("stride", {2}).i("ceil_mode", 1));
    t.g = t.b.finish();
    EXPECT_EQ(t.g.tensor(t.op("p1").outputs[0]).shape, (shape_t{1, 8, 56, 56}));
    EXPECT_EQ(t.g.tensor(t.op("p2").outputs[0]).shape, (shape_t{1, 8, 3, 3}));
}

TEST(op_cost, elementwise_counts_per_element_flops_with_broadcast) {
    one_op t;
    const int x = t.b.input("x", {8, 1024});
    const int bias = t.b.weight("bias", {1024});
    t.b.add1("relu", "relu", {x});
    t.b.add1("gelu", "gelu", {x});
    t.b.add1("add", "add", {x, bias});
    t.b.add1("sigmoid", "sigmoid", {x});
    t.b.add1("cast", "cast", {x}, op_attrs().s("to", "fp32"));
    t.g = t.b.finish();
    const double n = 8 * 1024;
    EXPECT_DOUBLE_EQ(t.op("relu").cost.flops, n);
    EXPECT_DOUBLE_EQ(t.op("gelu").cost.flops, 5 * n);
    EXPECT_DOUBLE_EQ(t.op("sigmoid").cost.flops, 4 * n);
    EXPECT_DOUBLE_EQ(t.op("add").cost.flops, n);
    EXPECT_DOUBLE_EQ(t.op("add").cost.bytes_in, n * 2);
    EXPECT_DOUBLE_EQ(t.op("add").cost.bytes_weight, 1024 * 2);
    EXPECT_DOUBLE_EQ(t.op("add").cost.bytes_out, n * 2);
    // A cast moves bytes and does no arithmetic; fp16 in, fp32 out.
    EXPECT_DOUBLE_EQ(t.op("cast").cost.flops, 0);
    EXPECT_DOUBLE_EQ(t.op("cast").cost.bytes_in, n * 2);
    EXPECT_DOUBLE_EQ(t.op("cast").cost.bytes_out, n * 4);
}

TEST(op_cost, reductions_softmax_and_norms) {
    one_op t;
    const int x = t.b.input("x", {4, 128, 768});
    t.b.add1("reduce_mean", "mean", {x}, op_attrs().is("axes", {-1}).i("keepdims", 1));
    t.b.add1("softmax", "softmax", {x});
    t.b.add1("layernorm", "ln", {x, t.b.weight("g", {768}), t.b.weight("b", {768})});
    t.b.add1("rmsnorm", "rms", {x, t.b.weight("s", {768})});
    const int img = t.b.input("img", {2, 16, 8, 8});
    t.b.add1("batchnorm", "bn",
             {img, t.b.weight("bw", {16}), t.b.weight("bb", {16}), t.b.state("bm", {16}), t.b.state("bv", {16})});
    t.g = t.b.finish();
    const double n = 4.0 * 128 * 768;
    EXPECT_EQ(t.g.tensor(t.op("mean").outputs[0]).shape, (shape_t{4, 128, 1}));
    EXPECT_DOUBLE_EQ(t.op("mean").cost.flops, n + 4 * 128);  // an add per input, a divide per output
    EXPECT_DOUBLE_EQ(t.op("softmax").cost.flops, 5 * n);
    EXPECT_DOUBLE_EQ(t.op("ln").cost.flops, 7 * n);
    EXPECT_DOUBLE_EQ(t.op("ln").cost.params, 2 * 768);
    EXPECT_DOUBLE_EQ(t.op("rms").cost.flops, 4 * n);
    EXPECT_DOUBLE_EQ(t.op("bn").cost.flops, 2 * 2.0 * 16 * 64);
    EXPECT_DOUBLE_EQ(t.op("bn").cost.params, 32);  // scale and shift; the statistics are state
    EXPECT_DOUBLE_EQ(t.op("bn").cost.bytes_in, (2 * 16 * 64 + 32) * 2);
}

TEST(op_cost, fused_attention) {
    one_op t;
    const int q = t.b.input("q", {2, 32, 128, 64});
    const int k = t.b.input("k", {2, 8, 512, 64});  // grouped-query: 8 key/value heads
    const int v = t.b.input("v", {2, 8, 512, 64});
    t.b.add1("attention", "attn", {q, k, v});
    t.g = t.b.finish();
    const op_node& a = t.op("attn");
    EXPECT_EQ(t.g.tensor(a.outputs[0]).shape, (shape_t{2, 32, 128, 64}));
    const double scores = 2.0 * 32 * 128 * 512;
    EXPECT_DOUBLE_EQ(a.cost.macs, scores * (64 + 64));
    EXPECT_DOUBLE_EQ(a.cost.flops, 2 * scores * 128 + 6 * scores);
    EXPECT_EQ(a.cost.cls, op_class::attention);
}

TEST(op_cost, data_movement_moves_real_bytes_and_views_move_none) {
    one_op t;
    const int x = t.b.input("x", {4, 16, 32});
    const int ids = t.b.input("ids", {4, 16}, dtype::int64);
    const int table = t.b.weight("table", {1000, 32});
    t.b.add1("embedding", "emb", {table, ids});
    t.b.add1("reshape", "view", {x}, op_attrs().is("shape", {64, -1}));
    t.b.add1("transpose", "t", {x}, op_attrs().is("perm", {0, 2, 1}));
    t.b.add1("concat", "cat", {x, x}, op_attrs().i("axis", 1));
    t.b.add("split", "parts", {x}, op_attrs().i("axis", 2).is("sizes", {8, 24}), 2);
    t.b.add1("slice", "window", {x}, op_attrs().is("starts", {2}).is("ends", {10}).is("axes", {1}));
    const int idx = t.b.input("idx", {3}, dtype::int32);
    t.b.add1("gather", "rows", {x, idx}, op_attrs().i("axis", 1));
    t.g = t.b.finish();
    const double xb = 4 * 16 * 32 * 2;
    // Embedding reads only the 64 looked-up rows of 32 values, not the 1000-row table.
    EXPECT_DOUBLE_EQ(t.op("emb").cost.bytes_weight, 64 * 32 * 2);
    EXPECT_DOUBLE_EQ(t.op("emb").cost.bytes_in, 64 * 8);
    EXPECT_DOUBLE_EQ(t.op("emb").cost.params, 1000 * 32);
    EXPECT_DOUBLE_EQ(t.op("emb").cost.flops, 0);
    EXPECT_EQ(t.g.tensor(t.op("view").outputs[0]).shape, (shape_t{64, 32}));
    EXPECT_DOUBLE_EQ(t.op("view").cost.bytes_read() + t.op("view").cost.bytes_written(), 0);
    EXPECT_DOUBLE_EQ(t.op("t").cost.bytes_in, xb);
    EXPECT_DOUBLE_EQ(t.op("t").cost.bytes_out, xb);
    EXPECT_DOUBLE_EQ(t.op("cat").cost.bytes_in, 2 * xb);
    EXPECT_DOUBLE_EQ(t.op("cat").cost.bytes_out, 2 * xb);
    EXPECT_DOUBLE_EQ(t.op("parts").cost.bytes_out, xb);
    EXPECT_DOUBLE_EQ(t.op("window").cost.bytes_in, 4 * 8 * 32 * 2);
    EXPECT_DOUBLE_EQ(t.op("window").cost.bytes_out, 4 * 8 * 32 * 2);
    EXPECT_DOUBLE_EQ(t.op("rows").cost.bytes_in, 4 * 3 * 32 * 2 + 3 * 4);
    for (const char* n : {"t", "cat", "parts", "window", "rows"}) EXPECT_DOUBLE_EQ(t.op(n).cost.flops, 0) << n;
    EXPECT_EQ(t.op("t").cost.cls, op_class::data_movement);
}

TEST(op_cost, collectives_optimizers_generic_and_shape_only) {
    one_op t;
    const int x = t.b.input("x", {1024, 256});
    t.b.add1("all_reduce", "ar", {x}, op_attrs().i("ranks", 8));
    t.b.add1("all_gather", "ag", {x}, op_attrs().i("ranks", 4).i("axis", 1));
    t.b.add1("reduce_scatter", "rs", {x}, op_attrs().i("ranks", 4));
    const int w = t.b.weight("w", {1000});
    const int g = t.b.input("g", {1000});
    const int m = t.b.state("m", {1000}, dtype::fp32), v = t.b.state("v", {1000}, dtype::fp32);
    t.b.add("adam", "adam", {w, g, m, v}, {}, 3);
    t.b.add("sgd", "sgd", {w, g, t.b.state("mom", {1000})}, {}, 2);
    t.g = t.b.finish();
    const double n = 1024 * 256;
    EXPECT_DOUBLE_EQ(t.op("ar").cost.flops, n * 7 / 8);
    EXPECT_EQ(t.g.tensor(t.op("ag").outputs[0]).shape, (shape_t{1024, 1024}));
    EXPECT_DOUBLE_EQ(t.op("ag").cost.flops, 0);
    EXPECT_EQ(t.g.tensor(t.op("rs").outputs[0]).shape, (shape_t{256, 256}));
    EXPECT_DOUBLE_EQ(t.op("rs").cost.flops, n * 3 / 4);
    EXPECT_DOUBLE_EQ(t.op("adam").cost.flops, 11 * 1000);
    EXPECT_DOUBLE_EQ(t.op("sgd").cost.flops, 4 * 1000);
    EXPECT_EQ(t.g.tensor(t.op("adam").outputs[1]).type, dtype::fp32);

    // generic and shape_only ops take declared shapes; shape_only costs nothing at all.
    workload_graph g2;
    g2.name = "g";
    tensor_info in;
    in.name = "in";
    in.shape = {10, 10};
    in.role = tensor_role::input;
    const int ti = g2.add_tensor(in);
    tensor_info out;
    out.name = "out";
    out.shape = {10, 5};
    const int to = g2.add_tensor(out);
    tensor_info sh;
    sh.name = "shape";
    sh.shape = {2};
    sh.type = dtype::int64;
    const int ts = g2.add_tensor(sh);
    op_node gen;
    gen.name = "custom";
    gen.kind = op_kind::generic;
    gen.type = "TopK";
    gen.float_attrs["flops_per_element"] = 3;
    gen.inputs = {ti};
    gen.outputs = {to};
    g2.add_op(gen);
    op_node s;
    s.name = "shape_of";
    s.kind = op_kind::shape_only;
    s.type = "Shape";
    s.inputs = {ti};
    s.outputs = {ts};
    g2.add_op(s);
    finalize_graph(g2, dtype::fp16);
    EXPECT_DOUBLE_EQ(g2.op(0).cost.flops, 3 * 50);
    EXPECT_DOUBLE_EQ(g2.op(0).cost.bytes_in, 100 * 2);
    EXPECT_DOUBLE_EQ(g2.op(0).cost.bytes_out, 50 * 2);
    const op_cost& z = g2.op(1).cost;
    EXPECT_DOUBLE_EQ(z.flops + z.bytes_read() + z.bytes_written() + z.params, 0);
}

TEST(op_cost, catalog_names_resolve_and_backward_names_map_to_forward) {
    for (const auto& t : op_types()) EXPECT_EQ(find_op_type(t.name), &t) << t.name;
    EXPECT_EQ(find_op_type("relu_grad"), find_op_type("relu"));
    EXPECT_TRUE(is_grad_type("softmax_grad"));
    EXPECT_FALSE(is_grad_type("loss_grad"));  // a type of its own
    EXPECT_FALSE(is_grad_type("generic_grad"));
    EXPECT_EQ(find_op_type("relu6"), nullptr);
}
