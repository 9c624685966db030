// Generators against published model sizes, and against parameter and MAC counts worked out by hand from
// each architecture's definition.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/workload/generators.h"
#include "engine/workload/load.h"
#include "workload_test_util.h"

using namespace tessel;

namespace {

workload_graph gen(const std::string& name, const std::map<std::string, std::string>& overrides = {}) {
    return load_workload(name, overrides);
}

double rel(double a, double b) { return std::fabs(a - b) / std::fabs(b); }

/// BERT with the Hugging Face layout, counted by hand: embeddings + LayerNorm, per layer Q, K, V and output
/// projections with biases, two LayerNorms, the feed-forward pair, and the pooler.
double bert_params(double vocab, double hidden, double layers, double ffn, double max_pos = 512, double types = 2) {
    const double embeddings = (vocab + max_pos + types) * hidden + 2 * hidden;
    const double layer =
        4 * (hidden * hidden + hidden) + 2 * (2 * hidden) + (hidden * ffn + ffn) + (ffn * hidden + hidden);
    const double pooler = hidden * hidden + hidden;
    return embeddings + layers * layer + pooler;
}

}  // namespace

TEST(generators, resnet_matches_torchvision_and_published_sizes) {
    // torchvision's model table: parameters and GFLOPS (which are multiply-accumulates) at 224x224.
    struct published {
        const char* name;
        double params, macs;
    };
    for (const auto& p : {published{"resnet18", 11689512, 1.81e9}, published{"resnet34", 21797672, 3.66e9},
                          published{"resnet50", 25557032, 4.09e9}, published{"resnet101", 44549160, 7.80e9}}) {
        const auto g = gen(p.name);
        EXPECT_DOUBLE_EQ(g.parameter_count(), p.params) << p.name;
        EXPECT_LT(rel(g.total().macs, p.macs), 0.01) << p.name << ": " << g.total().macs;
    }
    // The figures for ResNet-50: 25.56 M parameters, about 4.1 G MACs per image.
    const auto r50 = gen("resnet50");
    EXPECT_NEAR(r50.parameter_count() / 1e6, 25.56, 0.005);
    EXPECT_LT(rel(r50.total().macs, 4.1e9), 0.01);
    // MACs scale with the batch.
    EXPECT_DOUBLE_EQ(gen("resnet50", {{"batch", "8"}}).total().macs, 8 * r50.total().macs);
}

TEST(generators, resnet18_by_hand) {
    // conv1 7x7/2: 112x112x64 outputs of 3*49 taps; four stages of basic blocks on 56, 28, 14, 7; fc 512->1000.
    double macs = 112.0 * 112 * 64 * 3 * 49;
    const double sizes[4] = {56, 28, 14, 7};
    double in = 64;
    for (int s = 0; s < 4; ++s) {
        const double c = 64 << s, hw = sizes[s] * sizes[s];
        for (int b = 0; b < 2; ++b) {
            macs += hw * c * in * 9 + hw * c * c * 9;  // two 3x3 convolutions
            if (b == 0 && s > 0) macs += hw * c * in;  // 1x1 downsample
            in = c;
        }
    }
    macs += 512.0 * 1000;
    EXPECT_DOUBLE_EQ(gen("resnet18").total().macs, macs);
}

TEST(generators, mobilenet_v2_matches_torchvision) {
    const auto g = gen("mobilenet_v2");
    EXPECT_DOUBLE_EQ(g.parameter_count(), 3504872);  // torchvision
    EXPECT_LT(rel(g.total().macs, 300.8e6), 0.01);   // torchvision: 0.30 GFLOPS (MACs)
}

TEST(generators, bert_base_and_large) {
    const auto base = gen("bert-base");
    const auto large = gen("bert-large");
    EXPECT_DOUBLE_EQ(base.parameter_count(), bert_params(30522, 768, 12, 3072));
    EXPECT_DOUBLE_EQ(large.parameter_count(), bert_params(30522, 1024, 24, 4096));
    // Published (Devlin et al.): 110 M and 340 M, both rounded; the exact counts are 109.5 M and 335.1 M.
    EXPECT_LT(rel(base.parameter_count(), 110e6), 0.01);
    EXPECT_LT(rel(large.parameter_count(), 340e6), 0.02);
    // A forward pass is about 2 FLOPs per parameter per token, plus attention: MACs of the encoder's
    // projections are 12 * 128 tokens * (4*768^2 + 2*768*3072).
    const double proj = 12.0 * 128 * (4.0 * 768 * 768 + 2.0 * 768 * 3072);
    const double attn = 12.0 * 12 * 2 * 128 * 128 * 64;  // scores and context per head
    const double pooler = 768.0 * 768;
    EXPECT_DOUBLE_EQ(base.total().macs, proj + attn + pooler);
    // Sequence length and batch are parameters.
    EXPECT_DOUBLE_EQ(gen("bert-base", {{"batch", "4"}}).total().macs, 4 * (proj + attn + pooler));
}

TEST(generators, gpt2_small_124m) {
    const auto g = gen("gpt2");
    // wte + wpe + 12 layers (2 LayerNorms, c_attn, c_proj, c_fc, mlp proj) + ln_f; the LM head is wte again.
    const double h = 768, layer = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h);
    EXPECT_DOUBLE_EQ(g.parameter_count(), 50257 * h + 1024 * h + 12 * layer + 2 * h);
    EXPECT_LT(rel(g.parameter_count(), 124e6), 0.01);  // published: 124 M
    const auto medium = gen("gpt2", {{"variant", "medium"}});
    EXPECT_LT(rel(medium.parameter_count(), 355e6), 0.01);  // published: 355 M
}

TEST(generators, llama2_7b_prefill_and_decode) {
    const auto g = gen("llama2-7b");
    // 32 layers of 4 4096x4096 projections, the 3 SwiGLU matrices and 2 RMSNorm scales; embeddings, final
    // norm and the untied LM head.
    const double h = 4096, f = 11008, v = 32000;
    const double params = v * h + 32 * (4 * h * h + 3 * h * f + 2 * h) + h + h * v;
    EXPECT_DOUBLE_EQ(g.parameter_count(), params);
    EXPECT_NEAR(g.parameter_count() / 1e9, 6.74, 0.005);  // published: 6.74 B

    // Decode: one token over a 2048-token cache. Every matrix is used once per token; attention reads
    // 2049 keys and values in each of 32 heads of 128.
    const auto d = gen("llama2-7b", {{"mode", "decode"}});
    const double weights = 32 * (4 * h * h + 3 * h * f) + h * v;
    const double attention = 32 * 32 * 2 * 2049.0 * 128;
    EXPECT_DOUBLE_EQ(d.total().macs, weights + attention);
    // A longer cache costs only attention.
    const auto d4k = gen("llama2-7b", {{"mode", "decode"}, {"kv_cache", "4096"}});
    EXPECT_DOUBLE_EQ(d4k.total().macs - d.total().macs, 32 * 32 * 2 * 2048.0 * 128);
    // The KV cache is state, not parameters: 2 x 32 layers x 4096 values for each of the 2048 cached tokens and
    // the slot of the new one.
    double cache = 0;
    for (const auto& t : d.tensors())
        if (t.role == tensor_role::state) cache += static_cast<double>(t.elements());
    EXPECT_DOUBLE_EQ(cache, 2 * 32 * 2049 * h);
    // Prefill of 2048 tokens: the weights once per token, causal attention counted dense.
    EXPECT_DOUBLE_EQ(g.total().macs, 2048 * weights + 32 * 32 * 2 * 2048.0 * 2048 * 128);
    // Llama-2-70B has grouped-query attention with 8 key/value heads: 68.98 B parameters.
    EXPECT_NEAR(gen("llama", {{"variant", "70b"}}).parameter_count() / 1e9, 68.98, 0.01);
}

// The bytes the ops named `*<suffix>` read and write.
double bytes_of(const workload_graph& g, const std::string& suffix) {
    double b = 0;
    for (const auto& op : g.ops())
        if (op.name.size() > suffix.size() &&
            op.name.compare(op.name.size() - suffix.size(), suffix.size(), suffix) == 0)
            b += op.cost.bytes_in + op.cost.bytes_out;
    return b;
}

TEST(generators, llama_decode_appends_the_kv_cache_in_place_or_copies_it) {
    // Batch 4, one token over 2048 cached, 32 heads of 128, bf16 (2 bytes): 32 layers of a key and a value cache.
    const auto in_place = gen("llama2-7b", {{"mode", "decode"}, {"batch", "4"}});
    const double token = 4 * 32 * 128 * 2.0;  // one token's keys (or values) of the batch, per layer
    // In place: a copy kernel reads the new keys and writes them into their slot; the cache is a view after it.
    EXPECT_DOUBLE_EQ(bytes_of(in_place, "_cache_write"), 2 * 32 * 2 * token);
    EXPECT_DOUBLE_EQ(bytes_of(in_place, "_cache_append"), 0);
    // A copy (Hugging Face's torch.cat): the cache and the new token read, the whole cache written.
    const auto copy = gen("llama2-7b", {{"mode", "decode"}, {"batch", "4"}, {"kv_cache_update", "copy"}});
    EXPECT_DOUBLE_EQ(bytes_of(copy, "_cache_append"), 2 * 32 * (2049 * token + 2049 * token));
    EXPECT_DOUBLE_EQ(bytes_of(copy, "_cache_write"), 0);
    // The same arithmetic either way: attention reads 2049 keys and values.
    EXPECT_DOUBLE_EQ(in_place.total().macs, copy.total().macs);
    // Trained over a cached prefix, the new keys' gradient is their slot's share of the cache's gradient: a slice
    // of one token per layer, for keys and values.
    const auto trained = gen("llama2-7b", {{"mode", "decode"}, {"batch", "4"}, {"training", "sgd"}});
    int slices = 0;
    for (const auto& op : trained.ops())
        slices += op.type == "slice" && op.name.find("_cache_append") != std::string::npos;
    EXPECT_EQ(slices, 2 * 32);
}

TEST(generators, llama_mixed_step_packs_the_chunk_and_the_decodes_tokens) {
    // Chunked prefill's step: a chunk of 100 tokens over 50 cached, beside 3 sequences decoding over 200 each. Every
    // matrix runs once on all 103 tokens; attention per group: the chunk's 100 queries over 150 keys, each decode's
    // one query over 201.
    const auto g =
        gen("llama2-7b", {{"seq", "100"}, {"kv_cache", "50"}, {"decode_batch", "3"}, {"decode_kv_cache", "200"}});
    const double h = 4096, f = 11008, v = 32000, token = 32 * 128 * 2.0;  // a token's keys (or values), bf16
    const double weights = 32 * (4 * h * h + 3 * h * f) + h * v;
    const double chunk = 32 * 32 * 2 * 100 * 150.0 * 128, decodes = 32 * 32 * 2 * 3 * 201.0 * 128;
    EXPECT_DOUBLE_EQ(g.total().macs, 103 * weights + chunk + decodes);
    // Splitting and joining the packed tokens moves nothing; every new key and value is written once, by one kernel
    // per layer for the whole step.
    EXPECT_DOUBLE_EQ(bytes_of(g, ".unpack"), 0);
    EXPECT_DOUBLE_EQ(bytes_of(g, ".pack"), 0);
    EXPECT_DOUBLE_EQ(bytes_of(g, "_cache_write"), 2 * 32 * 2 * 103 * token);
    // The caches are state: the chunk's 150 tokens and each decode's 201, keys and values in every layer.
    double cache = 0;
    for (const auto& t : g.tensors())
        if (t.role == tensor_role::state) cache += static_cast<double>(t.elements());
    EXPECT_DOUBLE_EQ(cache, 2 * 32 * (150 + 3 * 201) * h);
    // The same step without the decodes is the plain prefill over a cached prefix.
    const auto alone = gen("llama2-7b", {{"seq", "100"}, {"kv_cache", "50"}});
    EXPECT_DOUBLE_EQ(alone.total().macs, 100 * weights + chunk);
    try {
        gen("llama2-7b", {{"decode_batch", "3"}});
        ADD_FAILURE() << "decodes need their cached tokens";
    } catch (const tessel::input_error& e) {
        EXPECT_NE(e.message().find("decode_kv_cache"), std::string::npos) << e.message();
    }
}

TEST(generators, llama_3_2_1b_is_the_published_model_with_its_head_untied) {
    // Llama 3.2 1B: 16 layers of attention (q and o 2048 x 2048, k and v 2048 x 512: 8 KV heads of 64), a SwiGLU
    // MLP of 3 x 2048 x 8192 and two RMSNorm scales; the embedding, and the head the real model ties to it (1.24 B
    // published; this generator keeps both, 128,256 x 2048 more).
    const auto g = gen("llama3.2-1b");  // workloads/llama3.2-1b.yaml
    const double h = 2048, f = 8192, v = 128256;
    EXPECT_DOUBLE_EQ(g.parameter_count(), 16 * (2 * h * h + 2 * h * 512 + 3 * h * f + 2 * h) + 2 * v * h + h);
    EXPECT_NEAR((g.parameter_count() - v * h) / 1e9, 1.24, 0.005);
}

TEST(generators, mixtral_routes_each_token_to_two_of_eight_experts) {
    // Mixtral 8x7B: per layer the attention (q and o 4096 x 4096, k and v 4096 x 1024), a router of 8 and 8 SwiGLU
    // experts of 3 x 4096 x 14,336, two RMSNorm scales; the embedding and the untied head. Published: 46.7 B.
    const auto g = gen("mixtral-8x7b");  // workloads/mixtral-8x7b.yaml
    const double h = 4096, f = 14336, v = 32000;
    const double attn = 2 * h * h + 2 * h * 1024, expert = 3 * h * f;
    EXPECT_DOUBLE_EQ(g.parameter_count(), 32 * (attn + 8 * h + 8 * expert + 2 * h) + 2 * v * h + h);
    EXPECT_NEAR(g.parameter_count() / 1e9, 46.7, 0.01);
    // One token decoding over 2048 cached: the attention, the router and two experts' matrices (every expert's
    // weights are held; only two are read), the LM head.
    const auto d = gen("mixtral-8x7b", {{"mode", "decode"}});
    EXPECT_DOUBLE_EQ(d.parameter_count(), g.parameter_count());
    EXPECT_DOUBLE_EQ(d.total().macs, 32 * (attn + 8 * h + 2 * expert + 32 * 2 * 2049.0 * 128) + h * v);
    // 8 tokens decoding on 8 ranks with expert parallelism: each rank routes 1 token, sends its 2 copies (2 x 4096
    // x 2 bytes) to their experts' ranks, runs its one expert on the 2 it receives, sends them back, and gathers
    // the 8 tokens again.
    const auto ep = gen("mixtral-8x7b", {{"mode", "decode"}, {"batch", "8"}, {"tp", "8"}, {"expert_parallel", "true"}});
    int dispatch = 0, combine = 0, gather = 0, experts = 0;
    for (const auto& op : ep.ops()) {
        if (op.name.find(".dispatch") != std::string::npos) {
            ++dispatch;
            EXPECT_EQ(op.type, "all_to_all");
            EXPECT_EQ(ep.tensor(op.inputs[0]).bytes(), 2u * 4096 * 2);
        }
        combine += op.name.find(".combine") != std::string::npos;
        gather += op.type == "all_gather";
        experts += op.name.find(".experts.0.w2") != std::string::npos;
    }
    EXPECT_EQ(dispatch, 32);
    EXPECT_EQ(combine, 32);
    EXPECT_EQ(gather, 32);
    EXPECT_EQ(experts, 32);
    EXPECT_DOUBLE_EQ(ep.parameter_count(), 32 * (attn / 8 + 8 * h + expert + 2 * h) + 2 * v / 8 * h + h);
    // Without expert parallelism the 8 ranks split every expert's width: the 8 tokens' 16 copies reach all 8
    // experts, 2 each, and one all-reduce sums the partial outputs.
    const auto tp = gen("mixtral-8x7b", {{"mode", "decode"}, {"batch", "8"}, {"tp", "8"}});
    int reduces = 0;
    for (const auto& op : tp.ops()) reduces += op.name.find("block_sparse_moe.all_reduce") != std::string::npos;
    EXPECT_EQ(reduces, 32);
    EXPECT_DOUBLE_EQ(tp.parameter_count(), ep.parameter_count());
}

TEST(generators, gemm_mlp_and_stencil_by_hand) {
    const auto gemm = gen("gemm");  // workloads/gemm.yaml
    EXPECT_DOUBLE_EQ(gemm.total().macs, 512.0 * 512 * 512);
    EXPECT_EQ(gemm.ops().size(), 1u);
    const auto mlp = gen("mlp");  // workloads/mlp.yaml: 4 layers of 1024 on 64 rows
    EXPECT_DOUBLE_EQ(mlp.total().macs, 4 * 64.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(mlp.parameter_count(), 4 * (1024.0 * 1024 + 1024));
    // The mlp generator (not the file) with its own sizes.
    workload_params p("mlp");
    const auto* info = find_generator("mlp");
    declare_generator_params(*info, p);
    p.apply_overrides({{"layers", "3"}, {"input", "784"}, {"hidden", "256"}, {"output", "10"}, {"batch", "32"}});
    const auto g = run_generator(*info, p);
    EXPECT_DOUBLE_EQ(g.total().macs, 32.0 * (784 * 256 + 256 * 256 + 256 * 10));
    // BiCGStab on 64^3: two 13-FLOP stencils, four 2-FLOP dot products and six 2-FLOP updates per point.
    const auto st = gen("stencil");
    const double points = 64.0 * 64 * 64;
    double grid_flops = 0;
    for (const auto& op : st.ops())
        if (st.tensor(op.outputs[0]).elements() > 1 || op.type == "dot") grid_flops += op.cost.flops;
    EXPECT_DOUBLE_EQ(grid_flops, points * (2 * 13 + 4 * 2 + 6 * 2));
    const auto sweeps = gen("stencil", {{"solver", "none"}, {"iterations", "10"}});
    EXPECT_DOUBLE_EQ(sweeps.total().flops, 10 * 13 * points);
}

TEST(generators, every_generator_builds_with_defaults_and_documents_its_parameters) {
    const std::string doc = test::read_file(std::string(TESSEL_SOURCE_DIR) + "/docs/workload-yaml.md");
    for (const auto& g : generators()) {
        const auto graph = gen(g.name);
        EXPECT_GT(graph.ops().size(), 0u) << g.name;
        for (const auto& op : graph.ops())
            EXPECT_EQ(op.compute_type, graph.parameters.at("precision") == "fp32" ? dtype::fp32 : dtype::fp16);
        EXPECT_NE(doc.find("`" + g.name + "`"), std::string::npos)
            << "docs/workload-yaml.md does not describe generator " << g.name;
        for (const auto& p : g.params)
            EXPECT_NE(doc.find("`" + p.name + "`"), std::string::npos)
                << "docs/workload-yaml.md does not describe " << g.name << "." << p.name;
    }
}

TEST(generators, bad_parameters_are_clear_errors) {
    EXPECT_NE(test::error_of([] {
                  gen("resnet", {{"depth", "51"}});
              }).find("depth must be 18, 34, 50, 101 or 152"),
              std::string::npos);
    EXPECT_NE(test::error_of([] {
                  gen("bert", {{"variant", "larg"}});
              }).find("did you mean 'large'"),
              std::string::npos);
    EXPECT_NE(test::error_of([] { gen("bert", {{"heads", "7"}}); }).find("multiple of heads"), std::string::npos);
    const std::string e = test::error_of([] { gen("bert-base", {{"sequence", "512"}}); });
    EXPECT_NE(e.find("has no parameter 'sequence'"), std::string::npos) << e;
    EXPECT_NE(test::error_of([] { gen("gpt2", {{"seq", "4096"}}); }).find("exceeds the context"), std::string::npos);
    EXPECT_NE(test::error_of([] { gen("llama", {{"batch", "0"}}); }).find("must be at least 1"), std::string::npos);
    EXPECT_NE(test::error_of([] { gen("resnt"); }).find("did you mean 'resnet'"), std::string::npos);
}
