// The kernels mapper's `framework: eager` (engine/mappers/eager_kernels.h) launches what eager PyTorch launches,
// checked against hand counts: cuDNN's NCHW<->NHWC conversions around a 3x3 convolution and none around a
// 1x1 stride-1 one over 56x56, batch norm's three kernels in training, GELU's tanh form as eight kernels forward
// and eleven backward, cross-entropy's seven, autocast's casts in a mixed-precision step (a weight cast once from
// its fp32 master, fp32 layer norm and 16-bit matrix products casting their inputs, gradients cast back to their
// tensors' types), and torch.optim's foreach SGD as multi-tensor launches whose
// count matches what PyTorch's profiler recorded on an H100 (21 launches over GPT-2 small's 148 parameters,
// 51 over BERT-large's 389: validation/gpu/h100_framework.jsonl) and whose bytes are the three passes'.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/mappers/eager_kernels.h"
#include "engine/mappers/mapper.h"
#include "engine/system/partition.h"
#include "engine/workload/training.h"
#include "engine/workload/yaml_workload.h"
#include "tests/support/errors.h"
#include "tests/support/harness.h"

using namespace tessel;

namespace {

struct h100 {
    sim_context sim;
    param_context ctx;
    std::unique_ptr<platform> plat;
    h100() { plat = std::make_unique<platform>("h100", yaml_node::load_file("platforms/gpu/h100_sxm.yaml"), ctx, sim); }
};

h100& device() {
    static h100 d;
    return d;
}

/// The kernels (name, work) the kernels mapper gives `g` with `framework`.
std::vector<std::pair<std::string, work>> kernels(const workload_graph& g, const std::string& framework,
                                                  const std::string& fuse = "none") {
    param_context ctx;
    ctx.add_override("mapper.framework", framework);
    ctx.add_override("mapper.fuse", fuse);
    auto mp = create_mapper(*device().plat, ctx);
    const mapping m = mp->map(g, *device().plat);
    std::vector<std::pair<std::string, work>> out;
    for (const auto& k : m.details["kernels"]) {
        const step& s = m.prog.steps[k["step"].get<std::uint32_t>()];
        out.emplace_back(k["name"].get<std::string>(), m.prog.works[s.work]);
    }
    return out;
}

std::vector<std::string> names(const std::vector<std::pair<std::string, work>>& ks) {
    std::vector<std::string> n;
    for (const auto& k : ks) n.push_back(k.first);
    return n;
}

const char* k_convs = R"(
workload: convs
parameters: {precision: bf16}
tensors:
  x: {shape: [8, 64, 56, 56], role: input}
  w3: {shape: [64, 64, 3, 3], role: weight}
  w1: {shape: [256, 64, 1, 1], role: weight}
  wp: {shape: [64, 256, 1, 1], role: weight}
ops:
  - {name: c3, op: conv2d, inputs: [x, w3], padding: 1}
  - {name: c1, op: conv2d, inputs: [c3, w1]}
  - {name: pool, op: max_pool, inputs: [c1], kernel: 8}
  - {name: cp, op: conv2d, inputs: [pool, wp]}
)";

/// Two linear layers with `activation` ("relu", "gelu, approximate: tanh") between them, in `precision`.
workload_graph two_layers(const std::string& precision, const std::string& activation) {
    const std::string text = "workload: two_layers\nparameters: {precision: " + precision +
                             "}\ntensors:\n"
                             "  x: {shape: [64, 512], role: input}\n"
                             "  w1: {shape: [512, 1024], role: weight}\n"
                             "  w2: {shape: [1024, 256], role: weight}\n"
                             "ops:\n"
                             "  - {name: fc1, op: matmul, inputs: [x, w1]}\n"
                             "  - {name: act, op: " +
                             activation +
                             ", inputs: [fc1]}\n"
                             "  - {name: fc2, op: matmul, inputs: [act, w2]}\n";
    return load_workload_yaml_text(text, "two.yaml", {});
}

}  // namespace

TEST(eager_kernels, cudnn_converts_nchw_around_a_3x3_convolution_and_not_around_a_wide_1x1) {
    const workload_graph g = load_workload_yaml_text(k_convs, "convs.yaml", {});
    const auto ks = kernels(g, "eager");
    // c3 converts x and its output; c1 (1x1, stride 1, 56x56) runs as a GEMM on NCHW; cp (1x1 over 7x7) converts.
    const std::vector<std::string> expect = {"c3.nchw_to_nhwc", "c3", "c3.nhwc_to_nchw", "c1", "pool",
                                             "cp.nchw_to_nhwc", "cp", "cp.nhwc_to_nchw"};
    EXPECT_EQ(names(ks), expect);
    const double x_bytes = 8.0 * 64 * 56 * 56 * 2;  // bf16
    EXPECT_DOUBLE_EQ(ks[0].second.bytes_in, x_bytes);
    EXPECT_DOUBLE_EQ(ks[0].second.bytes_out, x_bytes);
    EXPECT_EQ(ks[0].second.cls, op_class::data_movement);
    EXPECT_DOUBLE_EQ(ks[2].second.bytes_in, x_bytes);  // c3's output has x's shape
    // The convolution itself is the same work as one kernel per op gives.
    const auto ops = kernels(g, "ops");
    ASSERT_EQ(names(ops), (std::vector<std::string>{"c3", "c1", "pool", "cp"}));
    EXPECT_TRUE(ks[1].second == ops[0].second);
}

TEST(eager_kernels, training_runs_batch_norm_gelu_and_cross_entropy_as_eager_pytorch_does) {
    const char* text = R"(
workload: mlp
parameters: {precision: fp32}
tensors:
  x: {shape: [4, 16, 8, 8], role: input}
  scale: {shape: [16], role: weight}
  bias: {shape: [16], role: weight}
  mean: {shape: [16], role: state}
  var: {shape: [16], role: state}
  w: {shape: [1024, 512], role: weight}
ops:
  - {name: bn, op: batchnorm, inputs: [x, scale, bias, mean, var]}
  - {name: flat, op: flatten, inputs: [bn], axis: 1}
  - {name: act, op: gelu, inputs: [flat], approximate: tanh}
  - {name: logits, op: matmul, inputs: [act, w]}
)";
    // In fp32 (so without autocast's casts, tested below).
    const workload_graph g =
        expand_training(load_workload_yaml_text(text, "mlp.yaml", {}), training_options{"sgd", true});
    std::map<std::string, int> count;  // kernels per graph op name prefix
    for (const auto& n : names(kernels(g, "eager"))) {
        for (const char* op : {"bn.", "act.grad", "act.", "logits.loss_grad"})
            if (n.rfind(op, 0) == 0) {
                ++count[op];
                break;
            }
    }
    EXPECT_EQ(count["bn."], 3 + 1);  // statistics, running statistics, transform; the backward kernel (bn.grad)
    EXPECT_EQ(count["act."], 8);     // pow, mul, add, mul, tanh, add, mul, mul
    EXPECT_EQ(count["act.grad"], 11);
    EXPECT_EQ(count["logits.loss_grad"], 7);  // to fp32, log_softmax, nll; fill, scatter, log_softmax grad, back
    // An approximate GELU runs as one kernel per op otherwise.
    int act = 0;
    for (const auto& n : names(kernels(g, "ops"))) act += n == "act";
    EXPECT_EQ(act, 1);
}

TEST(eager_kernels, multi_tensor_apply_launches_match_pytorch_on_the_measured_parameter_lists) {
    // One tensor of 320 chunks and one element: a full launch, then one more.
    EXPECT_EQ(multi_tensor_launches({320 * 65536 + 1}, 1, false).size(), 2u);
    // 111 small tensors at depth 1: 110 per launch.
    EXPECT_EQ(multi_tensor_launches(std::vector<std::int64_t>(111, 10), 1, false).size(), 2u);
    EXPECT_EQ(multi_tensor_launches(std::vector<std::int64_t>(111, 10), 2, false).size(), 2u);  // 64 + 47
    EXPECT_EQ(multi_tensor_launches(std::vector<std::int64_t>(129, 10), 2, false).size(), 3u);
    // A tensor cut between launches continues in the next: every element is in exactly one launch.
    const auto cut = multi_tensor_launches({100, 400 * 65536}, 1, false);
    ASSERT_EQ(cut.size(), 2u);
    EXPECT_EQ(cut[0].parts.size(), 2u);
    EXPECT_EQ(cut[0].parts[1].count, 319 * 65536);
    EXPECT_EQ(cut[1].parts[0].first, 319 * 65536);
    EXPECT_EQ(cut[1].parts[0].count, 81 * 65536);

    // SGD with momentum (foreach): mul_ (depth 1), add_ (2), add_ (2). PyTorch launched 21 kernels for GPT-2
    // small's parameters and 51 for BERT-large's (h100_framework.jsonl, kernel counts from the profiler).
    auto sgd = [](const std::vector<std::vector<std::int64_t>>& shapes) {
        std::vector<std::int64_t> n;
        for (const auto& s : shapes) {
            std::int64_t e = 1;
            for (auto d : s) e *= d;
            n.push_back(e);
        }
        return multi_tensor_launches(n, 1, false).size() + 2 * multi_tensor_launches(n, 2, false).size();
    };
    std::vector<std::vector<std::int64_t>> gpt2 = {{50257, 768}, {1024, 768}};
    for (int l = 0; l < 12; ++l)
        for (auto s : std::vector<std::vector<std::int64_t>>{{768},
                                                             {768},
                                                             {768, 2304},
                                                             {2304},
                                                             {768, 768},
                                                             {768},
                                                             {768},
                                                             {768},
                                                             {768, 3072},
                                                             {3072},
                                                             {3072, 768},
                                                             {768}})
            gpt2.push_back(s);
    gpt2.push_back({768});
    gpt2.push_back({768});
    EXPECT_EQ(gpt2.size(), 148u);
    EXPECT_EQ(sgd(gpt2), 21u);
    std::vector<std::vector<std::int64_t>> bert = {{30522, 1024}, {512, 1024}, {2, 1024}, {1024}, {1024}};
    for (int l = 0; l < 24; ++l) {
        for (int i = 0; i < 4; ++i) {
            bert.push_back({1024, 1024});
            bert.push_back({1024});
        }
        for (auto s : std::vector<std::vector<std::int64_t>>{
                 {1024}, {1024}, {4096, 1024}, {4096}, {1024, 4096}, {1024}, {1024}, {1024}})
            bert.push_back(s);
    }
    EXPECT_EQ(bert.size(), 389u);
    EXPECT_EQ(sgd(bert), 51u);
}

TEST(eager_kernels, foreach_sgd_moves_three_passes_of_bytes_after_the_backward_pass) {
    const workload_graph g = expand_training(two_layers("fp32", "relu"), training_options{"sgd", true});
    const auto ks = kernels(g, "eager");
    double in = 0, out = 0;
    size_t first = ks.size();
    for (size_t i = 0; i < ks.size(); ++i)
        if (ks[i].first.rfind("optimizer.sgd_foreach.", 0) == 0) {
            first = std::min(first, i);
            in += ks[i].second.bytes_in;
            out += ks[i].second.bytes_out;
        }
    // All updates after the last backward kernel, one launch per pass (2 tensors, 8 + 4 chunks).
    EXPECT_EQ(first, ks.size() - 3);
    // fp32: buf (r, w); buf, g (r), buf (w); p, buf (r), p (w): 5 reads and 3 writes of 4 bytes per parameter.
    const double params = 512.0 * 1024 + 1024.0 * 256;
    EXPECT_DOUBLE_EQ(in, 5 * 4 * params);
    EXPECT_DOUBLE_EQ(out, 3 * 4 * params);
}

TEST(eager_kernels, bad_settings_are_clear_errors) {
    const workload_graph g = load_workload_yaml_text(k_convs, "convs.yaml", {});
    EXPECT_NE(test::error_of([&] { kernels(g, "eager", "elementwise"); }).find("mapper.fuse must be none"),
              std::string::npos);
    const char* bad = R"(
workload: bad
tensors:
  x: {shape: [4, 4], role: input}
ops:
  - {name: act, op: gelu, inputs: [x], approximate: sigmoid}
)";
    {
        sim_context sim;
        param_context pctx;
        platform tpu("tpu", yaml_node::load_file("platforms/tpu/tpu_v4.yaml"), pctx, sim);
        param_context ctx;
        ctx.add_override("mapper.framework", "eager");
        auto mp = create_mapper(tpu, ctx);
        const std::string t = test::error_of([&] { mp->map(g, tpu); });
        EXPECT_NE(t.find("runs kernels on a tpu"), std::string::npos) << t;
    }
    const std::string e = test::error_of([&] { load_workload_yaml_text(bad, "bad.yaml", {}); });
    EXPECT_NE(e.find("attribute 'approximate' is 'sigmoid'; expected one of none, tanh"), std::string::npos) << e;
    EXPECT_NE(e.find("bad.yaml:"), std::string::npos) << e;
}

TEST(eager_kernels, autocast_casts_where_a_mixed_precision_step_changes_types) {
    const char* text = R"(
workload: mlp
parameters: {precision: bf16}
tensors:
  x: {shape: [64, 512], role: input}
  w: {shape: [512, 256], role: weight}
  scale: {shape: [256], role: weight}
ops:
  - {name: fc, op: matmul, inputs: [x, w]}
  - {name: ln, op: rmsnorm, inputs: [fc, scale]}
  - {name: out, op: layernorm, inputs: [ln]}
)";
    const workload_graph g =
        expand_training(load_workload_yaml_text(text, "mlp.yaml", {}), training_options{"sgd", true});
    const auto ks = kernels(g, "eager");
    std::vector<std::string> got;
    for (const auto& n : names(ks))
        if (n.rfind("ln.", 0) != 0 || n.rfind("ln.grad", 0) == 0) got.push_back(n);  // RMSNorm's forward chain aside
    // fc: w cast from its master (first use), x is bf16 already. ln (Hugging Face RMSNorm: its own fp32 chain)
    // ends fp32 (the fp32 scale times the 16-bit rows); layernorm runs in fp32 on it (no cast). Backward: the
    // layer norm's gradient (fp32) reaches ln as fp32; fc's weight gradient is cast to fp32 for the optimizer.
    const std::vector<std::string> expect = {"w.autocast",
                                             "fc",
                                             "out",
                                             "out.loss_grad.to_fp32",
                                             "out.loss_grad.log_softmax",
                                             "out.loss_grad.nll",
                                             "out.loss_grad.nll_grad_fill",
                                             "out.loss_grad.nll_grad",
                                             "out.loss_grad.log_softmax_grad",
                                             "out.loss_grad.to_fp32",
                                             "out.grad",
                                             "ln.grad",
                                             "ln.grad.autocast_out",
                                             "fc.grad.db",
                                             "fc.grad.db.autocast_out",
                                             "optimizer.sgd_foreach.mul_momentum",
                                             "optimizer.sgd_foreach.add_grad",
                                             "optimizer.sgd_foreach.add_p"};
    EXPECT_EQ(got, expect);
    // The weight's cast reads its fp32 master and writes the 16-bit copy: 6 bytes per parameter.
    ASSERT_FALSE(ks.empty());
    EXPECT_EQ(ks[0].first, "w.autocast");
    EXPECT_DOUBLE_EQ(ks[0].second.bytes_in, 512.0 * 256 * 4);
    EXPECT_DOUBLE_EQ(ks[0].second.bytes_out, 512.0 * 256 * 2);
}

// A system maps chunks of the training graph (engine/system/partition.h subgraph): a gradient still names its
// tensor inside the chunk (same shape), or nothing when the chunk does not hold that tensor.
TEST(eager_kernels, gradients_keep_their_tensors_in_a_chunk) {
    const workload_graph g =
        expand_training(two_layers("bf16", "gelu, approximate: tanh"), training_options{"adam", true});
    std::vector<int> backward;
    int marked = 0;
    for (size_t o = 0; o < g.ops().size(); ++o)
        if (g.ops()[o].phase == op_phase::backward) backward.push_back(static_cast<int>(o));
    for (const auto& t : g.tensors()) marked += t.grad_of >= 0;
    EXPECT_GE(marked, 5);  // d(logits), d(act), d(fc1), d(w1), d(w2)
    const workload_graph chunk = subgraph(g, backward, "backward");
    int kept = 0;
    for (const auto& t : chunk.tensors()) {
        if (t.grad_of < 0) continue;
        ASSERT_LT(static_cast<size_t>(t.grad_of), chunk.tensors().size()) << t.name;
        EXPECT_EQ(chunk.tensor(t.grad_of).shape, t.shape) << t.name;
        ++kept;
    }
    EXPECT_GE(kept, 3);
    // Every chunk maps under autocast without reading past its tensors.
    EXPECT_FALSE(kernels(chunk, "eager").empty());
}
