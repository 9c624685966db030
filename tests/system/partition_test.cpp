// Partitioning a small GPT by a parallel plan: chunk graphs, bytes crossing the pipeline boundary, recomputation,
// ZeRO, gradient synchronisation and memory per chip, each worked out by hand.
#include <gtest/gtest.h>

#include "engine/system/memory.h"
#include "engine/system/partition.h"
#include "engine/system/pipeline_schedule.h"
#include "engine/workload/op_types.h"
#include "engine/workload/source.h"

using namespace tessel;

namespace {

// A small GPT: 4 layers, hidden 64, 8 heads (d = 8), ffn 256, vocab 512, context 128, seq 32; global batch 8;
// fp16 training with Adam (fp32 master weights and moments).
std::map<std::string, std::string> small_gpt() {
    return {{"layers", "4"},    {"hidden", "64"}, {"heads", "8"}, {"vocab", "512"},
            {"context", "128"}, {"seq", "32"},    {"batch", "8"}, {"training", "adam"}};
}

parallel_plan plan(int dp, int tp, int pp, int microbatch, const std::string& recompute = "none") {
    parallel_plan p;
    p.dp = dp;
    p.tp = tp;
    p.pp = pp;
    p.microbatch = microbatch;
    p.recompute = recompute;
    return p;
}

int count_kind(const workload_graph& g, op_phase phase) {
    int n = 0;
    for (const auto& op : g.ops()) n += op.phase == phase;
    return n;
}

// Activations one GPT layer keeps for its backward pass, per microbatch of 2 sequences (b s h = 2 x 32 x 64 = 4096
// elements, scores b x heads x s x s = 2 x 8 x 32 x 32 = 16384), fp16: what autograd saves (Korthikanti et al.
// 2022, Section 4.1, without dropout):
//   ln_1's input x, the c_attn input (ln_1's output), q, k, v (the transposed heads), the context (transposed back;
//   c_proj's input), ln_2's input (the residual), the c_fc input (ln_2's output), gelu's input (c_fc's output) and
//   mlp.c_proj's input (gelu's output): 1 + 1 + 3 + 1 + 1 + 1 + 4 + 4 = 16 x 4096;
//   the softmax output (its own backward and the context product's read it): 1 x 16384.
//   The residual adds, the scale (a division by a constant) and the mask (a where) save nothing score-sized.
//   (16 x 4096 + 16384) x 2 bytes = 163840 bytes = b s h (32 + 2 a s / h) bytes, the paper's 34 + 5as/h less
//   its three dropouts.
constexpr double layer_kept = 163840;
// Chunk 0 also keeps the token ids (2 x 32 int64 = 512 bytes); add_position saves nothing.
constexpr double embedding_kept = 512;
// The head keeps ln_f's input (4096 elements), the LM head's input (4096) and the logits for the loss gradient
// (2 x 32 x 512 = 32768): (4096 + 4096 + 32768) x 2 = 81920 bytes.
constexpr double head_kept = 81920;

}  // namespace

TEST(partition, chunks_by_layer_and_boundary_bytes) {
    // dp 1, tp 1, pp 2, microbatch 2: 8 / 2 = 4 microbatches; chunk 0 = embedding + layers 0-1, chunk 1 = layers 2-3
    // + ln_f + LM head.
    const partition_result r = partition("gpt2", small_gpt(), plan(1, 1, 2, 2));
    EXPECT_EQ(r.microbatches, 4);
    EXPECT_EQ(r.layers, 4);
    ASSERT_EQ(r.chunks.size(), 2u);
    const auto& c0 = r.chunks[0];
    const auto& c1 = r.chunks[1];
    EXPECT_EQ(c0.first_layer, -1);
    EXPECT_EQ(c0.last_layer, 1);
    EXPECT_EQ(c1.first_layer, 2);
    EXPECT_EQ(c1.last_layer, 4);
    EXPECT_EQ(c1.stage, 1);
    // The residual stream crosses the boundary: microbatch x seq x hidden x 2 bytes = 2 x 32 x 64 x 2 = 8192, and
    // its gradient (summed in layer 2) comes back the same size.
    ASSERT_EQ(c0.sends_forward.size(), 1u);
    EXPECT_EQ(c0.sends_forward[0].name, "h.1.mlp.residual");
    EXPECT_DOUBLE_EQ(c0.send_forward_bytes, 8192);
    EXPECT_DOUBLE_EQ(c1.send_backward_bytes, 8192);
    ASSERT_EQ(c1.sends_backward.size(), 1u);
    EXPECT_EQ(c1.sends_backward[0].to_chunk, 0);
    EXPECT_DOUBLE_EQ(c1.send_forward_bytes, 0);
    EXPECT_DOUBLE_EQ(c0.send_backward_bytes, 0);  // the tied embedding's gradient is not pipeline traffic
    // The graphs: forward ops only in forward, and the batch is the microbatch.
    EXPECT_EQ(count_kind(c0.forward, op_phase::backward), 0);
    EXPECT_EQ(count_kind(c0.backward, op_phase::forward), 0);  // recompute none
    EXPECT_EQ(c0.forward.tensor(c0.forward.find_tensor("input_ids")).shape, (std::vector<std::int64_t>{2, 32}));
    // The boundary tensor is an output of chunk 0's forward graph and an input of chunk 1's.
    EXPECT_EQ(c0.forward.tensor(c0.forward.find_tensor("h.1.mlp.residual")).role, tensor_role::output);
    EXPECT_EQ(c1.forward.tensor(c1.forward.find_tensor("h.1.mlp.residual")).role, tensor_role::input);
    // Parameters: chunk 0 = wte 32768 + wpe 8192 + 2 layers x 49984 = 140928; chunk 1 = 2 x 49984 + ln_f 128 + the
    // tied wte 32768 = 132864. Both update wte (Megatron keeps a copy on the first and last stage) and all-reduce
    // its gradient between them: 32768 x 2 bytes.
    EXPECT_DOUBLE_EQ(c0.params, 140928);
    EXPECT_DOUBLE_EQ(c1.params, 132864);
    ASSERT_EQ(c1.grad_sync.size(), 1u);
    EXPECT_EQ(c1.grad_sync[0].group, "embedding");
    EXPECT_DOUBLE_EQ(c1.grad_sync[0].bytes, 65536);
    EXPECT_NE(c1.optimizer.find_tensor("wte.weight.m"), -1);
    // Kept activations per microbatch with no recomputation.
    EXPECT_DOUBLE_EQ(c0.activation_bytes, embedding_kept + 2 * layer_kept);  // 328192
    EXPECT_DOUBLE_EQ(c1.activation_bytes, 2 * layer_kept + head_kept);       // 409600
    EXPECT_DOUBLE_EQ(c0.recompute_bytes, 0);
}

TEST(partition, recompute_full_and_selective_layer_by_layer) {
    parallel_plan by_layer = plan(1, 1, 2, 2, "full");  // recompute_layers 1, the default
    EXPECT_EQ(by_layer.recompute_layers, 1);
    const partition_result full = partition("gpt2", small_gpt(), by_layer);
    const auto& c0 = full.chunks[0];
    const auto& c1 = full.chunks[1];
    // Full, one layer at a time: each layer keeps only its input. Chunk 0: the token ids (512 bytes) for the
    // embeddings, and the residual stream (2 x 32 x 64 x 2 = 8192 bytes) into layers 0 and 1; chunk 1: the residual
    // stream into layers 2, 3 and the head (ln_f).
    EXPECT_DOUBLE_EQ(c0.activation_bytes, 512 + 2 * 8192);
    EXPECT_DOUBLE_EQ(c1.activation_bytes, 3 * 8192);
    // The backward pass re-creates one layer's activations at a time: the largest is a layer's, less its input
    // (kept already); the embeddings re-create nothing and the head 81920 - 8192, less.
    EXPECT_DOUBLE_EQ(c0.recompute_bytes, layer_kept - 8192);
    EXPECT_DOUBLE_EQ(c1.recompute_bytes, layer_kept - 8192);
    EXPECT_LT(embedding_kept - 512, layer_kept - 8192);
    EXPECT_LT(head_kept - 8192, layer_kept - 8192);
    // The backward graph runs every forward op of the chunk again, tp collectives included, but the last residual
    // add of layers 2 and 3 (it only makes the next layer's input, which is kept). Each layer's forward runs just
    // before its first backward op: the head's first, layer 2's last.
    EXPECT_EQ(count_kind(c1.backward, op_phase::forward), static_cast<int>(c1.forward.ops().size()) - 2);
    for (const auto& op : c1.backward.ops())
        EXPECT_EQ(attr_int(op, "recompute"), op.phase == op_phase::forward ? 1 : 0) << op.name;
    std::vector<std::int64_t> layers_in_order;  // the layer of each op, runs merged
    for (const auto& op : c1.backward.ops()) {
        const std::int64_t l = attr_int(op, "layer");
        if (layers_in_order.empty() || layers_in_order.back() != l) layers_in_order.push_back(l);
    }
    EXPECT_EQ(layers_in_order, (std::vector<std::int64_t>{4, 3, 2}));
    EXPECT_EQ(c1.backward.ops().front().phase, op_phase::forward);
    // Selective: the attention core (scores, scale, mask, softmax, context) is re-run; what it produced is not kept
    // but its inputs q, k, v are (they are kept anyway): each layer saves the softmax output, 16384 x 2 = 32768
    // bytes.
    by_layer.recompute = "selective";
    const partition_result sel = partition("gpt2", small_gpt(), by_layer);
    EXPECT_DOUBLE_EQ(sel.chunks[1].activation_bytes, 2 * (layer_kept - 32768) + head_kept);
    EXPECT_DOUBLE_EQ(sel.chunks[1].recompute_bytes, 32768);                   // one layer's at a time
    EXPECT_EQ(count_kind(sel.chunks[1].backward, op_phase::forward), 2 * 5);  // 5 core ops per layer
    // recompute_layers 0: the whole chunk's attention cores are re-created at once.
    by_layer.recompute_layers = 0;
    const partition_result sel0 = partition("gpt2", small_gpt(), by_layer);
    EXPECT_DOUBLE_EQ(sel0.chunks[1].activation_bytes, 2 * (layer_kept - 32768) + head_kept);
    EXPECT_DOUBLE_EQ(sel0.chunks[1].recompute_bytes, 2 * 32768);
}

TEST(partition, recompute_blocks_of_layers) {
    // recompute_layers 2: blocks of layers 0-1 and 2-3, the embeddings and the head blocks of their own. Chunk 0
    // keeps the token ids and layer 0's input; chunk 1 the residual stream into layer 2 and into the head. A
    // backward re-creates a block of two layers at a time, less its kept input: 2 x 163840 - 8192.
    parallel_plan blocks = plan(1, 1, 2, 2, "full");
    blocks.recompute_layers = 2;
    const partition_result two = partition("gpt2", small_gpt(), blocks);
    EXPECT_DOUBLE_EQ(two.chunks[0].activation_bytes, 512 + 8192);
    EXPECT_DOUBLE_EQ(two.chunks[1].activation_bytes, 2 * 8192);
    EXPECT_DOUBLE_EQ(two.chunks[0].recompute_bytes, 2 * layer_kept - 8192);
    EXPECT_DOUBLE_EQ(two.chunks[1].recompute_bytes, 2 * layer_kept - 8192);
    // Only layer 3's last residual add makes a kept tensor (the head's input) and is not re-run.
    EXPECT_EQ(count_kind(two.chunks[1].backward, op_phase::forward),
              static_cast<int>(two.chunks[1].forward.ops().size()) - 1);

    // recompute_layers 0: the whole chunk is one block. Only the chunk's input is kept (the token ids, 512 bytes;
    // the residual stream, 8192) and its whole forward, every op, is re-run at once before the backward.
    blocks.recompute_layers = 0;
    const partition_result whole = partition("gpt2", small_gpt(), blocks);
    const auto& c0 = whole.chunks[0];
    const auto& c1 = whole.chunks[1];
    EXPECT_DOUBLE_EQ(c0.activation_bytes, 512);
    EXPECT_DOUBLE_EQ(c1.activation_bytes, 8192);
    EXPECT_DOUBLE_EQ(c0.recompute_bytes, embedding_kept + 2 * layer_kept - 512);
    EXPECT_DOUBLE_EQ(c1.recompute_bytes, 2 * layer_kept + head_kept - 8192);
    EXPECT_EQ(count_kind(c1.backward, op_phase::forward), static_cast<int>(c1.forward.ops().size()));
    for (size_t i = 0; i < c1.forward.ops().size(); ++i) EXPECT_EQ(c1.backward.ops()[i].phase, op_phase::forward);
    EXPECT_EQ(whole.plan.str(), "dp=1 tp=1 pp=2 microbatch=2 recompute_layers=0");
    EXPECT_EQ(two.plan.str(), "dp=1 tp=1 pp=2 microbatch=2 recompute_layers=2");
    EXPECT_EQ(partition("gpt2", small_gpt(), plan(1, 1, 2, 2, "full")).plan.str(), "dp=1 tp=1 pp=2 microbatch=2");
}

TEST(partition, tensor_and_sequence_parallel_boundaries_and_collectives) {
    // tp 2 with sequence parallelism: the boundary carries seq / tp tokens, 2 x 16 x 64 x 2 = 4096 bytes.
    parallel_plan p = plan(1, 2, 2, 2);
    p.sequence_parallel = true;
    const partition_result r = partition("gpt2", small_gpt(), p);
    EXPECT_DOUBLE_EQ(r.chunks[0].send_forward_bytes, 4096);
    EXPECT_DOUBLE_EQ(r.chunks[1].send_backward_bytes, 4096);
    // Chunk 1 (2 layers + head): forward 2 x (all_gather + reduce_scatter) x 2 blocks + the LM head's all_gather = 9;
    // backward the mirror images = 9, and the 5 gathered matrix-product inputs (c_attn's and c_fc's per layer, the
    // LM head's) gathered again for their weight gradients, as Megatron-LM keeps only the shard: 14. Each moves the
    // full [2, 32, 64] fp16 tensor: 8192 bytes.
    int fwd = 0, bwd = 0;
    for (const auto& c : r.chunks[1].collectives) {
        fwd += c.when == "forward";
        bwd += c.when == "backward";
        EXPECT_EQ(c.group, "tp");
        EXPECT_DOUBLE_EQ(c.bytes, 8192) << c.name;
    }
    EXPECT_EQ(fwd, 9);
    EXPECT_EQ(bwd, 14);
    // Replicated weights applied to the sequence shard (ln_1, ln_2, the two row biases per layer, ln_f) have their
    // gradients all-reduced over tp: 2 x 384 + 128 = 896 parameters x 2 bytes = 1792.
    bool found = false;
    for (const auto& s : r.chunks[1].grad_sync)
        if (s.group == "tp") {
            found = true;
            EXPECT_DOUBLE_EQ(s.bytes, 1792);
        }
    EXPECT_TRUE(found);
    // Without sequence parallelism the boundary is the whole residual stream on every tp rank.
    const partition_result q = partition("gpt2", small_gpt(), plan(1, 2, 2, 2));
    EXPECT_DOUBLE_EQ(q.chunks[0].send_forward_bytes, 8192);
}

TEST(partition, data_parallel_grad_sync_and_zero) {
    // dp 2, pp 2: 8 / (2 x 2) = 2 microbatches. Chunk 0 all-reduces 140928 fp16 gradients = 281856 bytes.
    const partition_result r = partition("gpt2", small_gpt(), plan(2, 1, 2, 2));
    EXPECT_EQ(r.microbatches, 2);
    EXPECT_DOUBLE_EQ(r.chunks[0].dp_grad_bytes, 281856);
    ASSERT_FALSE(r.chunks[0].grad_sync.empty());
    EXPECT_EQ(r.chunks[0].grad_sync[0].kind, "all_reduce");
    EXPECT_EQ(r.chunks[0].grad_sync[0].group, "dp");
    // ZeRO-1: reduce-scatter of the gradients, all-gather of the updated weights; the optimizer graph updates half of
    // every tensor: Adam with a master copy costs 12 FLOPs per parameter, 140928 / 2 x 12 = 845568.
    parallel_plan z = plan(2, 1, 2, 2);
    z.zero = 1;
    const partition_result rz = partition("gpt2", small_gpt(), z);
    EXPECT_EQ(rz.chunks[0].grad_sync[0].kind, "reduce_scatter");
    EXPECT_EQ(rz.chunks[0].grad_sync[1].kind, "all_gather");
    EXPECT_DOUBLE_EQ(rz.chunks[0].optimizer.total().flops, 140928.0 / 2 * 12);
    EXPECT_DOUBLE_EQ(r.chunks[0].optimizer.total().flops, 140928 * 12);
}

TEST(partition, memory_per_chip_by_schedule) {
    // 1F1B, pp 2, 4 microbatches, no recomputation. Weights fp16 2 + gradients fp16 2 + Adam m, v and fp32 master 12
    // = 16 bytes per parameter. Stage 0 holds pp - 0 = 2 microbatches, stage 1 one.
    //   stage 0: 140928 x 16 + 2 x 328192 = 2254848 + 656384 = 2911232 bytes
    //   stage 1: 132864 x 16 + 409600 = 2125824 + 409600 = 2535424 bytes
    const partition_result r = partition("gpt2", small_gpt(), plan(1, 1, 2, 2));
    const memory_report m = memory_per_chip(r, 2.9e6);
    ASSERT_EQ(m.stages.size(), 2u);
    EXPECT_DOUBLE_EQ(m.stages[0].weights, 140928 * 2);
    EXPECT_DOUBLE_EQ(m.stages[0].gradients, 140928 * 2);
    EXPECT_DOUBLE_EQ(m.stages[0].optimizer_state, 140928 * 12);
    EXPECT_EQ(m.stages[0].max_in_flight, 2);
    EXPECT_EQ(m.stages[1].max_in_flight, 1);
    EXPECT_DOUBLE_EQ(m.stages[0].total, 2911232);
    EXPECT_DOUBLE_EQ(m.stages[1].total, 2535424);
    EXPECT_FALSE(m.fits());
    EXPECT_EQ(m.worst().stage, 0);
    // The error names the stage, the bytes against the capacity and the largest items.
    try {
        require_fit(m, r.plan);
        ADD_FAILURE() << "expected does not fit";
    } catch (const input_error& e) {
        const std::string w = e.what();
        EXPECT_NE(
            w.find("does not fit in memory: stage 0 (1 chip: every dp and tp rank of pipeline stage 0) needs "
                   "2.911 MB (2911232 B) but a chip has 2.9 MB; largest: optimizer state 1.691 MB, activations (2 "
                   "microbatch-chunks in flight) 641 KiB, weights 281.9 KB"),
            std::string::npos)
            << w;
        EXPECT_EQ(w.find("stage 1"), std::string::npos) << w;
    }
    EXPECT_NO_THROW(require_fit(memory_per_chip(r, 4e6), r.plan));

    // GPipe holds all 4 microbatches: 4 x 328192 = 1312768 on stage 0.
    parallel_plan g = plan(1, 1, 2, 2);
    g.schedule = "gpipe";
    EXPECT_DOUBLE_EQ(memory_per_chip(partition("gpt2", small_gpt(), g), 0).stages[0].activations, 4 * 328192.0);

    // Full recomputation, 1F1B, the whole chunk as one block: stage 0 keeps 2 x 512 bytes of token ids and
    // re-creates the chunk's activations during each backward: peak 1024 + (328192 - 512) = 328704.
    parallel_plan whole = plan(1, 1, 2, 2, "full");
    whole.recompute_layers = 0;
    const partition_result f = partition("gpt2", small_gpt(), whole);
    EXPECT_DOUBLE_EQ(memory_per_chip(f, 0).stages[0].activations, 328704);
    EXPECT_DOUBLE_EQ(memory_per_chip(f, 0).stages[1].activations, 409600);
    // Layer by layer (recompute_layers 1, the default): stage 0 keeps its layers' inputs for 2 microbatches,
    // 2 x (512 + 2 x 8192) = 33792, and re-creates one layer at a time: peak 33792 + (163840 - 8192) = 189440.
    // Stage 1 (one microbatch in flight): 3 x 8192 + 155648 = 180224.
    const partition_result fl = partition("gpt2", small_gpt(), plan(1, 1, 2, 2, "full"));
    EXPECT_DOUBLE_EQ(memory_per_chip(fl, 0).stages[0].activations, 189440);
    EXPECT_DOUBLE_EQ(memory_per_chip(fl, 0).stages[1].activations, 180224);

    // ZeRO-1 with dp 2 halves the optimizer state: 140928 x (2 + 2 + 12 / 2) = 1409280 bytes of model state.
    parallel_plan z = plan(2, 1, 2, 2);
    z.zero = 1;
    const memory_report mz = memory_per_chip(partition("gpt2", small_gpt(), z), 0);
    EXPECT_DOUBLE_EQ(mz.stages[0].weights + mz.stages[0].gradients + mz.stages[0].optimizer_state, 1409280);
    z.zero = 3;
    const memory_report m3 = memory_per_chip(partition("gpt2", small_gpt(), z), 0);
    EXPECT_DOUBLE_EQ(m3.stages[0].weights + m3.stages[0].gradients + m3.stages[0].optimizer_state, 140928 * 8);
}

TEST(partition, interleaved_chunks_and_memory) {
    // pp 2, interleave 2: 4 chunks of one layer; chunk c on stage c % 2. 4 microbatches (a multiple of pp).
    parallel_plan p = plan(1, 1, 2, 2);
    p.schedule = "interleaved_1f1b";
    p.interleave = 2;
    const partition_result r = partition("gpt2", small_gpt(), p);
    ASSERT_EQ(r.chunks.size(), 4u);
    EXPECT_EQ(r.chunks[2].stage, 0);
    EXPECT_EQ(r.chunks[2].virtual_index, 1);
    EXPECT_EQ(r.chunks[2].first_layer, 2);
    EXPECT_EQ(r.chunks[2].last_layer, 2);
    for (int c = 0; c < 3; ++c) EXPECT_DOUBLE_EQ(r.chunks[static_cast<size_t>(c)].send_forward_bytes, 8192) << c;
    // Stage 0 runs F0.c0 F1.c0 F0.c2 F1.c2 F2.c0 B0.c2 F3.c0 ... (warm-up (2-0-1) x 2 + (2-1) x 2 = 4): at most 5
    // chunk-microbatches in flight, at F3.c0 (after B0.c2): four of chunk 0 (embedding + layer 0: 512 + 163840 =
    // 164352 bytes) and one of chunk 2 (163840): 4 x 164352 + 163840 = 821248 bytes.
    const memory_report m = memory_per_chip(r, 0);
    EXPECT_EQ(m.stages[0].max_in_flight, 5);
    EXPECT_DOUBLE_EQ(m.stages[0].activations, 4 * 164352.0 + 163840.0);
    // The tied embedding lives on chunk 0 and chunk 3, both on different stages: one copy per stage.
    EXPECT_DOUBLE_EQ(m.stages[1].weights, (49984 * 2 + 128 + 32768) * 2.0);
}

TEST(partition, invalid_plan_and_inference) {
    // pp 8 on 4 layers. On the same 8 chips, the |log2| distance is 2 for dp=2 pp=4 (tp kept, preferred) and for
    // tp=2 pp=4.
    try {
        partition("gpt2", small_gpt(), plan(1, 1, 8, 2));
        ADD_FAILURE() << "expected an error";
    } catch (const input_error& e) {
        const std::string w = e.what();
        EXPECT_NE(w.find("pp x interleave = 8 x 1 = 8 chunks, but the model has only 4 layers"), std::string::npos)
            << w;
        EXPECT_NE(w.find("nearest valid: dp=2 tp=1 pp=4 microbatch=2, dp=1 tp=2 pp=4 microbatch=2"), std::string::npos)
            << w;
    }
    // Inference: forward graphs only, nothing kept.
    auto inf = small_gpt();
    inf["training"] = "none";
    const partition_result r = partition("gpt2", inf, plan(1, 1, 2, 2));
    EXPECT_FALSE(r.training);
    EXPECT_TRUE(r.chunks[0].backward.ops().empty());
    EXPECT_DOUBLE_EQ(r.chunks[0].send_forward_bytes, 8192);
    EXPECT_DOUBLE_EQ(memory_per_chip(r, 0).stages[0].activations, 0);
}

// Llama-2-70B's shapes (hidden 8192, 64 heads of 128, 8 key/value heads, ffn 28672, vocabulary 32000, fp16) with 4
// layers. A layer at tp t holds (2 x 8192 x 8192 + 2 x 8192 x 1024 + 3 x 8192 x 28672) / t = 855,638,016 / t
// parameters plus its two norms (2 x 8192, on every rank); the embedding and the head 32000 x 8192 / t each, on the
// first and last stage, the final norm (8192) on the last. 2 bytes a parameter.
TEST(partition, smallest_replica_that_holds_the_weights) {
    workload_overrides ov;
    ov.layers = 4;
    ov.batch = 1;
    ov.seq = 1;
    ov.kv_cache = 64;
    const auto src = make_workload_source("llama2-70b");
    const double layer8 = 2 * (855638016.0 / 8 + 16384), table8 = 2 * (32000.0 * 8192 / 8);
    // 1 GB a chip: nothing on 1, 2 or 4 chips holds it; of the 8-chip plans, tp 8 pp 1 (fewer stages first) holds
    // all 4 layers, the embedding, the head and the final norm: 986,857,472 B.
    holding_plan h = smallest_holding_plan(*src, ov, 1e9);
    EXPECT_TRUE(h.found);
    EXPECT_EQ(h.plan.tp, 8);
    EXPECT_EQ(h.plan.pp, 1);
    EXPECT_DOUBLE_EQ(h.stage_weights, 4 * layer8 + 2 * table8 + 2 * 8192);
    EXPECT_DOUBLE_EQ(h.stage_weights, 986857472);
    // 100 MB: tp stops at the 8 key/value heads and pp at the 4 layers; the last stage of tp 8 x pp 4 still needs a
    // layer, the head and the final norm (the first, a layer and the embedding: 16 KB less).
    h = smallest_holding_plan(*src, ov, 1e8);
    EXPECT_FALSE(h.found);
    EXPECT_EQ(h.plan.tp, 8);
    EXPECT_EQ(h.plan.pp, 4);
    EXPECT_DOUBLE_EQ(h.stage_weights, layer8 + table8 + 2 * 8192);
}

// An inference step that does not fit is told what helps inference (no recomputation or ZeRO to suggest).
TEST(partition, inference_does_not_fit_names_what_helps) {
    auto inf = small_gpt();
    inf["training"] = "none";
    const partition_result r = partition("gpt2", inf, plan(1, 1, 2, 2));
    try {
        require_fit(memory_per_chip(r, 1000), r.plan);
        ADD_FAILURE() << "expected does not fit";
    } catch (const input_error& e) {
        const std::string w = e.what();
        EXPECT_NE(w.find("(try more tp or pp, a smaller workload.batch, or a narrower workload.precision)"),
                  std::string::npos)
            << w;
        EXPECT_EQ(w.find("zero="), std::string::npos) << w;
    }
}
