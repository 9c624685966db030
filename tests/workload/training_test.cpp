// Training graphs: the backward pass of matrix products costs twice their forward MACs (input and weight
// gradients), so matmul-dominated models train at about 3x their forward FLOPs; one optimizer step per
// parameter tensor, with fp32 state under mixed precision.
#include <gtest/gtest.h>

#include <stdexcept>

#include "engine/workload/load.h"
#include "engine/workload/training.h"
#include "workload_test_util.h"

using namespace tessel;

namespace {

struct phase_totals {
    double fwd = 0, bwd = 0, opt = 0;
    int optimizer_ops = 0;
};

phase_totals by_phase(const workload_graph& g, bool macs) {
    phase_totals p;
    for (const auto& op : g.ops()) {
        const double v = macs ? op.cost.macs : op.cost.flops;
        if (op.phase == op_phase::forward)
            p.fwd += v;
        else if (op.phase == op_phase::backward)
            p.bwd += v;
        else {
            p.opt += v;
            ++p.optimizer_ops;
        }
    }
    return p;
}

int weight_tensors(const workload_graph& g) {
    int n = 0;
    for (const auto& t : g.tensors()) n += t.role == tensor_role::weight && t.alias_of < 0;
    return n;
}

}  // namespace

TEST(training, mlp_backward_macs_by_hand) {
    // workloads/mlp.yaml: 4 GEMMs of 64x1024x1024. Backward: 4 weight gradients and 3 input gradients (the
    // graph input needs none): 7 GEMMs of the same size.
    const auto fwd = load_workload("mlp", {});
    const auto tr = load_workload("mlp", {{"training", "adam"}});
    const double gemm = 64.0 * 1024 * 1024;
    const auto p = by_phase(tr, true);
    EXPECT_DOUBLE_EQ(p.fwd, 4 * gemm);
    EXPECT_DOUBLE_EQ(p.bwd, 7 * gemm);
    EXPECT_DOUBLE_EQ(fwd.total().macs, 4 * gemm);
    // Adam over 4 weights and 4 biases, 11 FLOPs per parameter + 1 for the fp32 master copy.
    EXPECT_EQ(p.optimizer_ops, 8);
    EXPECT_DOUBLE_EQ(by_phase(tr, false).opt, 12 * tr.parameter_count());
    EXPECT_DOUBLE_EQ(tr.parameter_count(), fwd.parameter_count());
}

TEST(training, matmul_dominated_models_cost_about_three_forwards) {
    for (const auto& [name, overrides] : std::vector<std::pair<std::string, std::map<std::string, std::string>>>{
             {"gpt2", {{"seq", "256"}}}, {"bert-base", {}}, {"llama", {{"layers", "2"}, {"seq", "128"}}}}) {
        const auto fwd = load_workload(name, overrides);
        auto with = overrides;
        with["training"] = "adam";
        const auto tr = load_workload(name, with);
        const double ratio = tr.total().flops / fwd.total().flops;
        EXPECT_GT(ratio, 2.9) << name;
        EXPECT_LT(ratio, 3.2) << name;
        // Every matrix product here has both operands on the gradient path: backward MACs are exactly 2x.
        const auto p = by_phase(tr, true);
        EXPECT_DOUBLE_EQ(p.bwd, 2 * p.fwd) << name;
        EXPECT_DOUBLE_EQ(p.fwd, fwd.total().macs) << name;
        EXPECT_EQ(p.optimizer_ops, weight_tensors(fwd)) << name;
    }
}

TEST(training, convolutions_get_input_and_weight_gradients) {
    const auto fwd = load_workload("resnet18", {});
    const auto tr = load_workload("resnet18", {{"training", "sgd"}});
    int grad_input = 0, grad_weight = 0;
    for (const auto& op : tr.ops()) {
        grad_input += op.type == "conv2d_grad_input";
        grad_weight += op.type == "conv2d_grad_weight";
    }
    EXPECT_EQ(grad_weight, 20);  // every convolution
    EXPECT_EQ(grad_input, 19);   // all but conv1, whose input is the image
    // conv1: 112x112x64 outputs of 3*7*7 taps has no input gradient; the rest of the MACs are doubled.
    const double conv1 = 112.0 * 112 * 64 * 147;
    const auto p = by_phase(tr, true);
    EXPECT_DOUBLE_EQ(p.bwd, 2 * fwd.total().macs - conv1);
    // SGD keeps one momentum buffer per weight; batchnorm statistics are not trained.
    int momentum = 0;
    for (const auto& t : tr.tensors())
        momentum +=
            t.role == tensor_role::state && t.name.size() > 9 && t.name.compare(t.name.size() - 9, 9, ".momentum") == 0;
    EXPECT_EQ(momentum, weight_tensors(fwd));
}

TEST(training, mixed_precision_keeps_fp32_master_weights_and_state) {
    const auto half = load_workload("mlp", {{"training", "adam"}});
    const auto full = load_workload("mlp", {{"training", "adam"}, {"precision", "fp32"}});
    for (const auto& op : half.ops()) {
        if (op.phase != op_phase::optimizer) continue;
        EXPECT_EQ(op.compute_type, dtype::fp32) << op.name;
        ASSERT_EQ(op.inputs.size(), 5u);  // w, g, m, v, master
        EXPECT_EQ(half.tensor(op.inputs[0]).type, dtype::fp16);
        EXPECT_EQ(half.tensor(op.inputs[1]).type, dtype::fp16);
        for (size_t i = 2; i < 5; ++i) EXPECT_EQ(half.tensor(op.inputs[i]).type, dtype::fp32);
    }
    for (const auto& op : full.ops()) {
        if (op.phase != op_phase::optimizer) continue;
        EXPECT_EQ(op.inputs.size(), 4u);  // no master copy needed
    }
}

TEST(training, tied_weights_get_one_update_with_summed_gradients) {
    // GPT-2's token embedding is also its LM head.
    const auto tr = load_workload("gpt2", {{"layers", "1"}, {"seq", "16"}, {"training", "adam"}});
    int updates = 0;
    for (const auto& op : tr.ops())
        if (op.phase == op_phase::optimizer && tr.tensor(op.inputs[0]).name == "wte.weight") {
            ++updates;
            const auto& grad = tr.tensor(op.inputs[1]);
            ASSERT_GE(grad.producer, 0);
            EXPECT_EQ(tr.op(grad.producer).type, "add") << "the two gradients of wte are summed";
        }
    EXPECT_EQ(updates, 1);
}

TEST(training, onnx_models_train_too) {
    const auto fwd = load_workload("workloads/onnx/bert_tiny.onnx", {});
    const auto tr = load_workload("workloads/onnx/bert_tiny.onnx", {{"training", "adam"}});
    const auto p = by_phase(tr, true);
    EXPECT_DOUBLE_EQ(p.fwd, fwd.total().macs);
    EXPECT_DOUBLE_EQ(p.bwd, 2 * p.fwd);
    EXPECT_EQ(p.optimizer_ops, weight_tensors(fwd));
    EXPECT_NE(test::error_of([] {
                  load_workload("mlp", {{"training", "adagrad"}});
              }).find("expected one of: none, sgd, adam"),
              std::string::npos);
}

TEST(training, backward_ops_keep_what_autograd_saves) {
    // A GPT-2 layer with dropout: each "<type>_grad" op lists its forward op's inputs, but only what PyTorch's
    // autograd saves is needed from the forward pass (Korthikanti et al. 2022, Section 4.1).
    const auto g = load_workload("gpt2", {{"layers", "1"},
                                          {"hidden", "64"},
                                          {"heads", "8"},
                                          {"seq", "32"},
                                          {"vocab", "512"},
                                          {"dropout", "0.1"},
                                          {"attention_dropout", "0.1"},
                                          {"training", "adam"}});
    auto op_named = [&](const std::string& name) -> const op_node& {
        for (const auto& op : g.ops())
            if (op.name == name) return op;
        throw std::runtime_error("no op " + name);
    };
    auto saved = [&](const std::string& backward_op) {
        std::vector<std::pair<std::string, bool>> names;
        for (const auto& s : saved_for_backward(g, op_named(backward_op)))
            names.emplace_back(g.tensor(s.tensor).name, s.mask_only);
        return names;
    };
    auto forward_output = [&](const std::string& op) { return g.tensor(op_named(op).outputs[0]).name; };
    auto dy = [&](const std::string& backward_op) {
        return std::make_pair(g.tensor(op_named(backward_op).inputs[0]).name, false);
    };
    using saved_list = std::vector<std::pair<std::string, bool>>;
    // A residual add keeps nothing; softmax its output; a dropout a mask of its output's size; the scale (a division
    // by a constant) only the constant; the causal mask's where its condition; GELU its input.
    EXPECT_EQ(saved("h.0.attn.residual.grad"), saved_list{dy("h.0.attn.residual.grad")});
    EXPECT_EQ(saved("h.0.attn.softmax.grad"),
              (saved_list{dy("h.0.attn.softmax.grad"), {forward_output("h.0.attn.softmax"), false}}));
    EXPECT_EQ(saved("h.0.attn.attn_dropout.grad"),
              (saved_list{dy("h.0.attn.attn_dropout.grad"), {forward_output("h.0.attn.attn_dropout"), true}}));
    EXPECT_EQ(saved("h.0.attn.scale.grad"), (saved_list{dy("h.0.attn.scale.grad"), {"h.0.attn.sqrt_d", false}}));
    EXPECT_EQ(saved("h.0.attn.mask.grad"), (saved_list{dy("h.0.attn.mask.grad"), {"h.0.attn.causal_mask", false}}));
    const op_node& gelu = op_named("h.0.mlp.gelu");
    EXPECT_EQ(saved("h.0.mlp.gelu.grad"),
              (saved_list{dy("h.0.mlp.gelu.grad"), {g.tensor(gelu.inputs[0]).name, false}}));
    // Explicit backward ops (a matrix product's gradient GEMMs) need exactly what they read.
    const op_node& db = op_named("h.0.mlp.c_fc.grad.db");
    EXPECT_EQ(saved_for_backward(g, db).size(), db.inputs.size());
}
