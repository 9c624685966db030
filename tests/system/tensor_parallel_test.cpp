// Tensor-parallel shards from the transformer generators (Megatron-LM): per-rank FLOPs and parameters worked out by
// hand for a small GPT, the collectives of the forward and backward passes, sequence parallelism, and layer tags.
#include <gtest/gtest.h>

#include "engine/workload/load.h"
#include "engine/workload/op_types.h"

using namespace tessel;

namespace {

// A small GPT: 4 layers, hidden 64, 8 heads (d = 8), ffn 256, vocab 512, context 128; batch 2 x seq 32.
std::map<std::string, std::string> small_gpt(int tp, bool sp = false, const std::string& training = "none") {
    return {{"layers", "4"},       {"hidden", "64"},           {"heads", "8"},
            {"vocab", "512"},      {"context", "128"},         {"seq", "32"},
            {"batch", "2"},        {"tp", std::to_string(tp)}, {"sequence_parallel", sp ? "true" : "false"},
            {"training", training}};
}

const op_node& find_op(const workload_graph& g, const std::string& name) {
    for (const auto& op : g.ops())
        if (op.name == name) return op;
    ADD_FAILURE() << "no op " << name;
    return g.ops().front();
}

int count(const workload_graph& g, const std::string& type, op_phase phase) {
    int n = 0;
    for (const auto& op : g.ops()) n += op.type == type && op.phase == phase;
    return n;
}

}  // namespace

TEST(tensor_parallel, gpt_matmul_flops_are_one_tp_th) {
    const workload_graph one = load_workload("gpt2", small_gpt(1));
    // By hand at tp = 1 (2 x 32 = 64 tokens): c_attn 64 x 64 x 192 = 786432 MACs, c_proj 64 x 64 x 64 = 262144,
    // c_fc 64 x 64 x 256 = 1048576, mlp.c_proj the same, scores and context 2 x 8 heads x 32 x 32 x 8 = 131072 each,
    // lm_head 64 x 64 x 512 = 2097152.
    EXPECT_DOUBLE_EQ(find_op(one, "h.0.attn.c_attn").cost.macs, 786432);
    EXPECT_DOUBLE_EQ(find_op(one, "h.0.attn.c_proj").cost.macs, 262144);
    EXPECT_DOUBLE_EQ(find_op(one, "h.0.mlp.c_fc").cost.macs, 1048576);
    EXPECT_DOUBLE_EQ(find_op(one, "h.0.mlp.c_proj").cost.macs, 1048576);
    EXPECT_DOUBLE_EQ(find_op(one, "h.0.attn.scores").cost.macs, 131072);
    EXPECT_DOUBLE_EQ(find_op(one, "h.0.attn.context").cost.macs, 131072);
    EXPECT_DOUBLE_EQ(find_op(one, "lm_head").cost.macs, 2097152);
    for (int tp : {2, 4, 8}) {
        const workload_graph g = load_workload("gpt2", small_gpt(tp));
        for (int l = 0; l < 4; ++l) {
            const std::string n = "h." + std::to_string(l);
            // Every matmul of a layer and the LM head is split: exactly 1/tp of the MACs.
            for (const std::string& m : {n + ".attn.c_attn", n + ".attn.c_proj", n + ".mlp.c_fc", n + ".mlp.c_proj",
                                         n + ".attn.scores", n + ".attn.context"})
                EXPECT_DOUBLE_EQ(find_op(g, m).cost.macs * tp, find_op(one, m).cost.macs) << m << " tp " << tp;
            // Column-parallel layers keep their (split) bias in the matmul: FLOPs 1/tp too.
            for (const std::string& m : {n + ".attn.c_attn", n + ".mlp.c_fc"})
                EXPECT_DOUBLE_EQ(find_op(g, m).cost.flops * tp, find_op(one, m).cost.flops) << m << " tp " << tp;
            // Row-parallel layers add their replicated bias after the all-reduce: 2 FLOPs per MAC in the matmul,
            // and one add of 64 x 64 = 4096 elements on every rank.
            EXPECT_DOUBLE_EQ(find_op(g, n + ".attn.c_proj").cost.flops, 2 * 262144.0 / tp);
            EXPECT_DOUBLE_EQ(find_op(g, n + ".attn.c_proj.add_bias").cost.flops, 4096);
        }
        EXPECT_DOUBLE_EQ(find_op(g, "lm_head").cost.macs * tp, find_op(one, "lm_head").cost.macs);
    }
}

TEST(tensor_parallel, gpt_parameters_per_rank) {
    // Split: wte 512 x 64 = 32768, and per layer c_attn 64 x 192 + 192, c_proj weight 64 x 64, c_fc 64 x 256 + 256,
    // mlp.c_proj weight 256 x 64: 12480 + 4096 + 16640 + 16384 = 49600, so 32768 + 4 x 49600 = 231168.
    // Replicated: wpe 128 x 64 = 8192, per layer ln_1, ln_2 (2 x 128) and the two row-parallel biases (2 x 64) = 384,
    // ln_f 128: 8192 + 4 x 384 + 128 = 9856. tp = 1: 241024.
    EXPECT_DOUBLE_EQ(load_workload("gpt2", small_gpt(1)).parameter_count(), 241024);
    for (int tp : {2, 4, 8})
        EXPECT_DOUBLE_EQ(load_workload("gpt2", small_gpt(tp)).parameter_count(), 231168.0 / tp + 9856) << tp;
}

TEST(tensor_parallel, gpt_collectives_forward_and_backward) {
    const workload_graph g = load_workload("gpt2", small_gpt(4, false, "adam"));
    // Forward: all_reduce after the vocab-parallel embedding and after each row-parallel projection (1 + 2 x 4 = 9),
    // an f (grad_all_reduce, a free view) before each column-parallel block and the LM head (2 x 4 + 1 = 9).
    EXPECT_EQ(count(g, "all_reduce", op_phase::forward), 9);
    EXPECT_EQ(count(g, "grad_all_reduce", op_phase::forward), 9);
    // Backward: g's gradient is the identity, f's is an all_reduce: 9 all_reduce, nothing else.
    EXPECT_EQ(count(g, "all_reduce", op_phase::backward), 9);
    EXPECT_EQ(count(g, "reduce_scatter", op_phase::backward) + count(g, "all_gather", op_phase::backward), 0);
    const op_node& ar = find_op(g, "h.1.attn.c_proj.all_reduce");
    EXPECT_EQ(ar.kind, op_kind::collective);
    EXPECT_EQ(attr_text(ar, "group"), "tp");
    EXPECT_EQ(attr_int(ar, "ranks"), 4);
    // 2 x 32 x 64 fp16 = 8192 bytes in and out.
    EXPECT_DOUBLE_EQ(g.tensor(ar.inputs[0]).bytes(), 8192);
    const op_node& f = find_op(g, "h.1.mlp.grad_all_reduce");
    EXPECT_TRUE(is_view(f));
    const op_node& fb = find_op(g, "h.1.mlp.grad_all_reduce.grad");
    EXPECT_EQ(fb.type, "all_reduce");
    EXPECT_EQ(fb.phase, op_phase::backward);
    EXPECT_EQ(attr_text(fb, "group"), "tp");
    EXPECT_DOUBLE_EQ(g.tensor(fb.inputs[0]).bytes(), 8192);
}

TEST(tensor_parallel, sequence_parallel_pairs) {
    const workload_graph g = load_workload("gpt2", small_gpt(4, true, "adam"));
    // Forward: reduce_scatter after the embedding and each row-parallel block (9), all_gather before each
    // column-parallel block and the LM head (9); backward the other way round, plus each gathered matrix-product
    // input gathered again for its weight gradient (9: Megatron-LM keeps only the shard); no all_reduce at all.
    EXPECT_EQ(count(g, "reduce_scatter", op_phase::forward), 9);
    EXPECT_EQ(count(g, "all_gather", op_phase::forward), 9);
    EXPECT_EQ(count(g, "all_gather", op_phase::backward), 9 + 9);
    EXPECT_EQ(count(g, "reduce_scatter", op_phase::backward), 9);
    EXPECT_EQ(count(g, "all_reduce", op_phase::forward) + count(g, "all_reduce", op_phase::backward), 0);
    // Norms and residual adds work on seq / tp = 8 tokens: ln_1's input is [2, 8, 64].
    const op_node& ln = find_op(g, "h.2.ln_1");
    EXPECT_EQ(g.tensor(ln.inputs[0]).shape, (std::vector<std::int64_t>{2, 8, 64}));
    const op_node& ag = find_op(g, "h.2.attn.all_gather");
    EXPECT_EQ(g.tensor(ag.outputs[0]).shape, (std::vector<std::int64_t>{2, 32, 64}));
    // The weight gradient of c_attn reads the re-gathered input, made from the same shard in the backward pass.
    const op_node& again = find_op(g, "h.2.attn.all_gather.regather");
    EXPECT_EQ(again.phase, op_phase::backward);
    EXPECT_EQ(again.inputs, ag.inputs);
    EXPECT_EQ(g.tensor(again.outputs[0]).shape, (std::vector<std::int64_t>{2, 32, 64}));
    EXPECT_EQ(g.tensor(again.outputs[0]).consumers.size(), 1u);
    // The same parameters as without sequence parallelism.
    EXPECT_DOUBLE_EQ(g.parameter_count(), load_workload("gpt2", small_gpt(4)).parameter_count());
    // The residual stream between layers: 2 x 8 x 64 fp16 = 2048 bytes per rank.
    EXPECT_DOUBLE_EQ(g.tensor(find_op(g, "h.2.mlp.residual").outputs[0]).bytes(), 2048);
}

TEST(tensor_parallel, bert_and_llama_shards) {
    // BERT-base at tp 4: 12 heads -> 3 per rank; query [768, 192] with bias [192]; output dense [192, 768].
    const workload_graph b = load_workload("bert", {{"layers", "2"}, {"tp", "4"}, {"training", "sgd"}});
    EXPECT_EQ(b.tensor(find_op(b, "encoder.layer.0.attention.query").inputs[1]).shape,
              (std::vector<std::int64_t>{768, 192}));
    EXPECT_EQ(b.tensor(find_op(b, "encoder.layer.0.attention.output.dense").inputs[1]).shape,
              (std::vector<std::int64_t>{192, 768}));
    EXPECT_EQ(count(b, "all_reduce", op_phase::forward), 1 + 2 * 2);
    EXPECT_EQ(count(b, "all_reduce", op_phase::backward), 2 * 2);  // the f in front of attention and intermediate
    // With sequence parallelism the pooler gathers the sequence; its gradient is only split back (a slice).
    const workload_graph bs =
        load_workload("bert", {{"layers", "2"}, {"tp", "4"}, {"sequence_parallel", "true"}, {"training", "sgd"}});
    EXPECT_EQ(find_op(bs, "pooler.all_gather.grad").type, "slice");
    // Llama 2 70B shapes at tp 8: 64 heads -> 8, 8 key/value heads -> 1, ffn 28672 -> 3584, vocab 32000 -> 4000.
    const workload_graph l = load_workload("llama", {{"variant", "70b"}, {"layers", "1"}, {"seq", "16"}, {"tp", "8"}});
    EXPECT_EQ(l.tensor(find_op(l, "layers.0.self_attn.q_proj").inputs[1]).shape,
              (std::vector<std::int64_t>{8192, 1024}));
    EXPECT_EQ(l.tensor(find_op(l, "layers.0.self_attn.k_proj").inputs[1]).shape,
              (std::vector<std::int64_t>{8192, 128}));
    EXPECT_EQ(l.tensor(find_op(l, "layers.0.mlp.down_proj").inputs[1]).shape, (std::vector<std::int64_t>{3584, 8192}));
    EXPECT_EQ(l.tensor(find_op(l, "lm_head").inputs[1]).shape, (std::vector<std::int64_t>{8192, 4000}));
    // tp must divide the heads; the vocabulary is padded instead (50257 -> 2 x 25129 rows).
    EXPECT_THROW(load_workload("gpt2", {{"layers", "1"}, {"tp", "5"}}), input_error);
    EXPECT_THROW(load_workload("llama", {{"variant", "70b"}, {"layers", "1"}, {"tp", "16"}}), input_error);
    const workload_graph gp = load_workload("gpt2", {{"layers", "1"}, {"seq", "16"}, {"tp", "2"}});
    EXPECT_EQ(gp.tensor(find_op(gp, "wte").inputs[0]).shape, (std::vector<std::int64_t>{25129, 768}));
}

TEST(tensor_parallel, layer_tags_reach_backward_and_optimizer) {
    const workload_graph g = load_workload("gpt2", small_gpt(2, false, "adam"));
    auto layer = [&](const std::string& name) { return attr_int(find_op(g, name), "layer", -99); };
    EXPECT_EQ(layer("wte"), -1);
    EXPECT_EQ(layer("wte.all_reduce"), -1);
    EXPECT_EQ(layer("h.0.ln_1"), 0);
    EXPECT_EQ(layer("h.3.mlp.c_proj.all_reduce"), 3);
    EXPECT_EQ(layer("ln_f"), 4);
    EXPECT_EQ(layer("lm_head"), 4);
    EXPECT_EQ(layer("lm_head.loss_grad"), 4);
    EXPECT_EQ(layer("h.2.attn.c_attn.grad.db"), 2);
    EXPECT_EQ(layer("h.2.attn.grad_all_reduce.grad"), 2);
    EXPECT_EQ(layer("h.2.attn.c_attn.weight.adam"), 2);
    // The tied embedding is updated with the embedding (its earliest reader); its gradient sum too.
    EXPECT_EQ(layer("wte.weight.adam"), -1);
    EXPECT_EQ(layer("wte.weight.grad_sum"), -1);
    // The gradient of a layer's input is summed in that layer (so a pipeline sends one tensor back).
    EXPECT_EQ(layer("h.1.mlp.residual.grad_sum"), 2);
    for (const auto& op : g.ops()) EXPECT_TRUE(op.int_attrs.count("layer")) << op.name;
    // The attention core is tagged for selective recomputation.
    EXPECT_EQ(attr_int(find_op(g, "h.0.attn.softmax"), "attention_core"), 1);
    EXPECT_EQ(attr_int(find_op(g, "h.0.attn.c_attn"), "attention_core"), 0);
}
