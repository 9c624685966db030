// Activation memory as Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
// arXiv 2205.05198) count it: their Table 2, per transformer layer, for every combination of tensor and sequence
// parallelism and recomputation, reproduced on a small GPT; and the first pipeline stage of each model of their
// Table 3 (22B, 175B, 530B, 1T on 80 GB A100s, tp 8, sequence parallelism and selective recomputation, or full
// recomputation) worked out by hand from the paper's terms. Only the paper's memory analysis is used here.
#include <gtest/gtest.h>

#include <string>

#include "engine/system/memory.h"
#include "engine/system/partition.h"

using namespace tessel;

namespace {

// A small GPT with Megatron-LM's dropouts (hidden and attention, 0.1): s = 32, h = 64, a = 8 heads, L = 4 layers;
// microbatch b = 2, so s b h = 4096 elements and a s / h = 4.
std::map<std::string, std::string> small_gpt(int tp, bool sequence_parallel) {
    return {{"layers", "4"},
            {"hidden", "64"},
            {"heads", "8"},
            {"vocab", "512"},
            {"context", "128"},
            {"seq", "32"},
            {"batch", "8"},
            {"training", "adam"},
            {"dropout", "0.1"},
            {"attention_dropout", "0.1"},
            {"tp", std::to_string(tp)},
            {"sequence_parallel", sequence_parallel ? "true" : "false"}};
}

// Bytes one layer keeps: pp 4 puts one layer in chunk 1 and nothing else (chunk 0 has the embeddings, chunk 3 the
// head).
double one_layer(int tp, bool sequence_parallel, const std::string& recompute) {
    parallel_plan p;
    p.tp = tp;
    p.pp = 4;
    p.microbatch = 2;
    p.recompute = recompute;
    p.sequence_parallel = sequence_parallel;
    const partition_result r = partition("gpt2", small_gpt(tp, sequence_parallel), p);
    EXPECT_EQ(r.chunks.at(1).first_layer, 1);
    EXPECT_EQ(r.chunks.at(1).last_layer, 1);
    return r.chunks.at(1).activation_bytes;
}

constexpr double sbh = 2 * 32 * 64;  // s b h
constexpr double as_h = 8 * 32 / 64.0;

}  // namespace

TEST(activation_memory, korthikanti_table_2_per_layer) {
    const double t = 2;
    // No parallelism, Eq. 1: sbh (34 + 5 as/h) = 54 sbh = 221184 bytes. The terms: attention 11 sbh + 5 as^2 b
    // (QKV input 2, Q and K 4, V 2, projection input 2, its dropout mask 1; softmax output 2, its dropout mask 1 and
    // output 2 per score), MLP 19 sbh (inputs of the two linears 2 + 8, GeLU's input 8, the dropout mask 1), the
    // two layer norms' inputs 4 sbh.
    EXPECT_DOUBLE_EQ(one_layer(1, false, "none"), sbh * (34 + 5 * as_h));
    // Tensor parallel, Eq. 2: sbh (10 + 24/t + 5 as/(h t)) = 32 sbh; the layer norms, the QKV and h->4h inputs and
    // the two hidden dropout masks are replicated on the tp ranks.
    EXPECT_DOUBLE_EQ(one_layer(2, false, "none"), sbh * (10 + 24 / t + 5 * as_h / t));
    // Tensor + sequence parallel, Eq. 4: sbh/t (34 + 5 as/h) = 27 sbh. The column-parallel products keep their
    // input's shard and gather it again for the weight gradient.
    EXPECT_DOUBLE_EQ(one_layer(2, true, "none"), sbh / t * (34 + 5 * as_h));
    // Tensor parallel + selective recomputation: sbh (10 + 24/t) = 22 sbh (the 5 as/h term is re-created).
    EXPECT_DOUBLE_EQ(one_layer(2, false, "selective"), sbh * (10 + 24 / t));
    // Tensor + sequence parallel + selective, Eq. 6 per layer: 34 sbh / t = 17 sbh.
    EXPECT_DOUBLE_EQ(one_layer(2, true, "selective"), sbh * 34 / t);
    // Full recomputation: the layer's input, 2 sbh (replicated without sequence parallelism; a shard with it).
    EXPECT_DOUBLE_EQ(one_layer(2, false, "full"), sbh * 2);
    EXPECT_DOUBLE_EQ(one_layer(2, true, "full"), sbh * 2 / t);
    // Without dropout the masks (two hidden ones of sbh bytes, the attention one of a s^2 b) and the attention
    // dropout's output (2 a s^2 b) go: sbh (34 - 2 + (5 - 3) as/h) = sbh (32 + 2 as/h).
    parallel_plan p;
    p.pp = 4;
    p.microbatch = 2;
    auto plain = small_gpt(1, false);
    plain["dropout"] = "0";
    plain["attention_dropout"] = "0";
    EXPECT_DOUBLE_EQ(partition("gpt2", plain, p).chunks.at(1).activation_bytes, sbh * (32 + 2 * as_h));
}

namespace {

// A model of the paper's Table 3: s = 2048, v = 51200, tp 8, no data parallelism, fp16 with Adam.
struct paper_model {
    const char* name;
    double heads, hidden, layers, pp, batch, microbatch, interleave;
};

partition_result paper_partition(const paper_model& m, const std::string& recompute) {
    const std::map<std::string, std::string> w = {{"layers", std::to_string(static_cast<int>(m.layers))},
                                                  {"hidden", std::to_string(static_cast<int>(m.hidden))},
                                                  {"heads", std::to_string(static_cast<int>(m.heads))},
                                                  {"vocab", "51200"},
                                                  {"context", "2048"},
                                                  {"seq", "2048"},
                                                  {"batch", std::to_string(static_cast<int>(m.batch))},
                                                  {"training", "adam"},
                                                  {"precision", "fp16"},
                                                  {"dropout", "0.1"},
                                                  {"attention_dropout", "0.1"}};
    parallel_plan p;
    p.tp = 8;
    p.pp = static_cast<int>(m.pp);
    p.microbatch = static_cast<int>(m.microbatch);
    p.recompute = recompute;
    p.sequence_parallel = recompute == "selective";  // the paper's "present work"; its baseline has neither
    if (m.interleave > 1) {
        p.schedule = "interleaved_1f1b";
        p.interleave = static_cast<int>(m.interleave);
    }
    return partition("gpt2", w, p);
}

// Table 3 (interleaving with m = 3 for 175B and 530B, Section 6).
const paper_model k_22b{"22B", 64, 6144, 48, 1, 4, 4, 1};
const paper_model k_175b{"175B", 96, 12288, 96, 8, 64, 1, 3};
const paper_model k_530b{"530B", 128, 20480, 105, 35, 280, 1, 3};
const paper_model k_1t{"1T", 160, 25600, 128, 64, 512, 1, 1};

// The first stage's activations with sequence parallelism and selective recomputation, by the paper's terms:
// Eq. 6, 34 s b h / t per layer, for the layer-microbatches in flight (L with 1F1B, L (1 + (p - 1)/(p m))
// interleaved, Section 4.2.3), plus per microbatch of the first chunk in flight the embedding dropout's mask
// s b h / t (Section 4.3) and the token ids (s b int64), plus what tessel adds to the paper's count: one layer's
// attention core re-created during its backward (softmax output, dropout mask and output: 5 a s^2 b / t).
double first_stage_by_hand(const paper_model& m, double layer_microbatches, double first_chunks_in_flight) {
    const double s = 2048, t = 8, b = m.microbatch;
    const double per_layer = 34 * s * b * m.hidden / t;
    const double embedding = s * b * m.hidden / t + s * b * 8;
    const double recompute = 5 * m.heads * s * s * b / t;
    return per_layer * layer_microbatches + embedding * first_chunks_in_flight + recompute;
}

}  // namespace

TEST(activation_memory, korthikanti_models_first_stage_by_hand) {
    // 1T, 1F1B, p = 64: stage 0 holds 2 layers for 64 microbatches = L = 128 layer-microbatches (Eq. 5), and 64
    // microbatches of the embedding: 28521267200 + 64 x 6569984 + 419430400 = 29361176576 bytes.
    const memory_report t1 = memory_per_chip(paper_partition(k_1t, "selective"), 80e9);
    EXPECT_EQ(t1.stages[0].max_in_flight, 64);
    EXPECT_DOUBLE_EQ(t1.stages[0].activations, first_stage_by_hand(k_1t, 128, 64));
    EXPECT_DOUBLE_EQ(t1.stages[0].activations, 29361176576.0);
    // 175B, interleaved with m = 3, p = 8: the paper's factor 1 + (p - 1)/(p m) = 31/24 on L = 96 layers is 124
    // layer-microbatches, 31 chunk-microbatches of 4 layers, as the schedule walk finds them; 16 of them are of
    // chunk 0 (the first pp microbatches of its warm-up and those that follow it before the first backward).
    const memory_report t175 = memory_per_chip(paper_partition(k_175b, "selective"), 80e9);
    EXPECT_EQ(t175.stages[0].max_in_flight, 31);
    EXPECT_DOUBLE_EQ(96 * (1 + 7.0 / 24), 124);
    EXPECT_DOUBLE_EQ(t175.stages[0].activations, first_stage_by_hand(k_175b, 124, 16));
    // 22B, no pipeline (p = 1), one microbatch of 4: 48 layers, the embedding, and the output layer (Section 4.3):
    // the final layer norm's input and the LM head's input shard, 2 s b h / t each, and the logits; tessel keeps them
    // in fp16, 2 s b v / t, where Megatron-LM's cross-entropy keeps fp32 (4 s b v / t).
    const memory_report t22 = memory_per_chip(paper_partition(k_22b, "selective"), 80e9);
    const double s = 2048, b = 4, h = 6144, v = 51200 / 8.0;
    EXPECT_DOUBLE_EQ(t22.stages[0].activations,
                     first_stage_by_hand(k_22b, 48, 1) + 2 * 2 * s * b * h / 8 + 2 * s * b * v);
}

TEST(activation_memory, every_paper_configuration_fits_an_80_gb_a100) {
    // Each model of Table 3 ran on 80 GB A100s with the paper's present work (sequence parallelism and selective
    // recomputation) and with its full-recomputation baseline: the memory model accepts both.
    for (const paper_model& m : {k_22b, k_175b, k_530b, k_1t})
        for (const char* recompute : {"selective", "full"}) {
            const memory_report r = memory_per_chip(paper_partition(m, recompute), 80e9);
            EXPECT_TRUE(r.fits()) << m.name << " " << recompute << ": stage " << r.worst().stage << " needs "
                                  << r.worst().total << " bytes";
        }
}
