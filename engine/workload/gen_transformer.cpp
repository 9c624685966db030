// Transformer generators: BERT (Devlin et al. 2018, the Hugging Face layout: word, position and token-type
// embeddings, post-norm encoder layers, tanh pooler), GPT-2 (Radford et al. 2019: pre-norm decoder, fused
// QKV projection, LM head tied to the token embedding) and Llama 2 (Touvron et al. 2023: RMSNorm, rotary
// embeddings, SwiGLU MLP, grouped-query attention for 70B, an untied LM head; prefill or decode with a KV
// cache). Attention is either decomposed (matmul, scale, mask, softmax, matmul, as exported models have it)
// or one fused attention op.
#include <cmath>

#include "engine/workload/generators.h"
#include "engine/workload/layers.h"

namespace tessel {

namespace {

/// [B, S, heads*d] -> [B, heads, S, d]
int split_heads(graph_builder& b, const std::string& name, int x, std::int64_t heads) {
    const auto s = b.shape(x);
    const int r = b.add1("reshape", name + ".view", {x}, op_attrs().is("shape", {s[0], s[1], heads, s[2] / heads}));
    return b.add1("transpose", name + ".heads", {r}, op_attrs().is("perm", {0, 2, 1, 3}));
}

/// [B, H, S, d] -> [B, S, H*d]
int merge_heads(graph_builder& b, const std::string& name, int x) {
    const auto s = b.shape(x);
    const int t = b.add1("transpose", name + ".transpose", {x}, op_attrs().is("perm", {0, 2, 1, 3}));
    return b.add1("reshape", name + ".merge", {t}, op_attrs().is("shape", {s[0], s[2], s[1] * s[3]}));
}

struct attention_config {
    bool fused = false;
    bool causal = false;  // mask future positions (the mask covers cached positions too)
};

/// Scaled dot-product attention of q [B, H, S, d] over k, v [B, Hkv, Skv, d] -> [B, H, S, d].
int attention(graph_builder& b, const std::string& n, int q, int k, int v, const attention_config& cfg) {
    const auto qs = b.shape(q), ks = b.shape(k);
    const std::int64_t heads = qs[1], kv_heads = ks[1], seq = qs[2], kv_seq = ks[2], d = qs[3];
    const bool causal = cfg.causal && seq > 1;
    if (cfg.fused) return b.add1("attention", n + ".attention", {q, k, v}, op_attrs().i("causal", causal ? 1 : 0));
    if (kv_heads != heads) {
        // Grouped-query attention: repeat each key/value head for its group of query heads.
        const std::int64_t rep = heads / kv_heads;
        auto repeat = [&](int t, const std::string& what) {
            const int u = b.add1("unsqueeze", n + "." + what + ".unsqueeze", {t}, op_attrs().is("axes", {2}));
            const int e = b.add1("expand", n + "." + what + ".repeat", {u},
                                 op_attrs().is("shape", {ks[0], kv_heads, rep, kv_seq, d}));
            return b.add1("reshape", n + "." + what + ".groups", {e}, op_attrs().is("shape", {ks[0], heads, kv_seq, d}));
        };
        k = repeat(k, "k");
        v = repeat(v, "v");
    }
    int s = b.add1("matmul", n + ".scores", {q, k}, op_attrs().i("transpose_b", 1));
    s = b.add1("div", n + ".scale", {s, b.constant(n + ".sqrt_d", {})});
    if (causal) {
        const int mask = b.constant(n + ".causal_mask", {seq, kv_seq}, dtype::boolean);
        s = b.add1("where", n + ".mask", {mask, s, b.constant(n + ".mask_value", {})});
    }
    const int p = b.add1("softmax", n + ".softmax", {s}, op_attrs().i("axis", -1));
    return b.add1("matmul", n + ".context", {p, v});
}

std::string attention_mode(const workload_params& p) { return p.choice("attention", {"decomposed", "fused"}); }

// ---------------------------------------------------------------------------------------------------- BERT

workload_graph build_bert(const workload_params& p) {
    const std::int64_t batch = p.positive("batch"), seq = p.positive("seq"), layers = p.positive("layers");
    const std::int64_t hidden = p.positive("hidden"), heads = p.positive("heads"), ffn = p.positive("ffn");
    const std::int64_t vocab = p.positive("vocab"), max_pos = p.positive("max_position"), types = p.positive("type_vocab");
    if (hidden % heads) fail("generator bert: hidden (" + std::to_string(hidden) + ") must be a multiple of heads (" + std::to_string(heads) + ")", p.find("heads")->where);
    if (seq > max_pos) fail("generator bert: seq (" + std::to_string(seq) + ") exceeds max_position (" + std::to_string(max_pos) + ")", p.find("seq")->where);
    attention_config cfg;
    cfg.fused = attention_mode(p) == "fused";
    graph_builder b("bert", p.precision());
    const int ids = b.input("input_ids", {batch, seq}, dtype::int64);
    const int type_ids = b.input("token_type_ids", {batch, seq}, dtype::int64);
    const int pos_ids = b.constant("position_ids", {1, seq}, dtype::int64);
    int x = b.add1("embedding", "embeddings.word", {b.weight("embeddings.word_embeddings.weight", {vocab, hidden}), ids});
    const int t = b.add1("embedding", "embeddings.token_type", {b.weight("embeddings.token_type_embeddings.weight", {types, hidden}), type_ids});
    const int pe = b.add1("embedding", "embeddings.position", {b.weight("embeddings.position_embeddings.weight", {max_pos, hidden}), pos_ids});
    x = b.add1("add", "embeddings.add_type", {x, t});
    x = b.add1("add", "embeddings.add_position", {x, pe});
    x = layer_norm(b, "embeddings.LayerNorm", x);
    for (std::int64_t l = 0; l < layers; ++l) {
        const std::string n = "encoder.layer." + std::to_string(l);
        const int q = split_heads(b, n + ".q", linear(b, n + ".attention.query", x, hidden, true), heads);
        const int k = split_heads(b, n + ".k", linear(b, n + ".attention.key", x, hidden, true), heads);
        const int v = split_heads(b, n + ".v", linear(b, n + ".attention.value", x, hidden, true), heads);
        const int ctx = merge_heads(b, n + ".context", attention(b, n + ".attention", q, k, v, cfg));
        int y = linear(b, n + ".attention.output.dense", ctx, hidden, true);
        y = b.add1("add", n + ".attention.residual", {y, x});
        x = layer_norm(b, n + ".attention.output.LayerNorm", y);
        y = linear(b, n + ".intermediate.dense", x, ffn, true);
        y = b.add1("gelu", n + ".intermediate.gelu", {y});
        y = linear(b, n + ".output.dense", y, hidden, true);
        y = b.add1("add", n + ".output.residual", {y, x});
        x = layer_norm(b, n + ".output.LayerNorm", y);
    }
    if (p.boolean("pooler")) {
        // The pooler reads the first token's hidden state.
        int first = b.add1("slice", "pooler.first_token", {x}, op_attrs().is("starts", {0}).is("ends", {1}).is("axes", {1}));
        first = b.add1("squeeze", "pooler.squeeze", {first}, op_attrs().is("axes", {1}));
        b.add1("tanh", "pooler.activation", {linear(b, "pooler.dense", first, hidden, true)});
    }
    return b.finish();
}

// ---------------------------------------------------------------------------------------------------- GPT-2

workload_graph build_gpt2(const workload_params& p) {
    const std::int64_t batch = p.positive("batch"), seq = p.positive("seq"), layers = p.positive("layers");
    const std::int64_t hidden = p.positive("hidden"), heads = p.positive("heads");
    const std::int64_t vocab = p.positive("vocab"), context = p.positive("context");
    if (hidden % heads) fail("generator gpt2: hidden (" + std::to_string(hidden) + ") must be a multiple of heads (" + std::to_string(heads) + ")", p.find("heads")->where);
    if (seq > context) fail("generator gpt2: seq (" + std::to_string(seq) + ") exceeds the context (" + std::to_string(context) + ")", p.find("seq")->where);
    attention_config cfg;
    cfg.fused = attention_mode(p) == "fused";
    cfg.causal = true;
    graph_builder b("gpt2", p.precision());
    const int ids = b.input("input_ids", {batch, seq}, dtype::int64);
    const int pos_ids = b.constant("position_ids", {1, seq}, dtype::int64);
    const int wte = b.weight("wte.weight", {vocab, hidden});
    int x = b.add1("embedding", "wte", {wte, ids});
    x = b.add1("add", "add_position", {x, b.add1("embedding", "wpe", {b.weight("wpe.weight", {context, hidden}), pos_ids})});
    for (std::int64_t l = 0; l < layers; ++l) {
        const std::string n = "h." + std::to_string(l);
        const int h = layer_norm(b, n + ".ln_1", x);
        const int qkv = linear(b, n + ".attn.c_attn", h, 3 * hidden, true);
        const auto parts = b.add("split", n + ".attn.split", {qkv}, op_attrs().i("axis", -1).is("sizes", {hidden, hidden, hidden}), 3);
        const int q = split_heads(b, n + ".q", parts[0], heads);
        const int k = split_heads(b, n + ".k", parts[1], heads);
        const int v = split_heads(b, n + ".v", parts[2], heads);
        const int ctx = merge_heads(b, n + ".context", attention(b, n + ".attn", q, k, v, cfg));
        x = b.add1("add", n + ".attn.residual", {x, linear(b, n + ".attn.c_proj", ctx, hidden, true)});
        int m = linear(b, n + ".mlp.c_fc", layer_norm(b, n + ".ln_2", x), 4 * hidden, true);
        m = b.add1("gelu", n + ".mlp.gelu", {m});
        x = b.add1("add", n + ".mlp.residual", {x, linear(b, n + ".mlp.c_proj", m, hidden, true)});
    }
    x = layer_norm(b, "ln_f", x);
    // The LM head reuses the token embedding (weight tying): logits = x . wte^T.
    b.add1("matmul", "lm_head", {x, wte}, op_attrs().i("transpose_b", 1));
    return b.finish();
}

// ---------------------------------------------------------------------------------------------------- Llama

/// Rotary position embedding: x * cos + rotate_half(x) * sin, rotate_half(x) = [-x2, x1].
int rotary(graph_builder& b, const std::string& n, int x, int cos, int sin) {
    const std::int64_t d = b.shape(x).back();
    const int x1 = b.add1("slice", n + ".x1", {x}, op_attrs().is("starts", {0}).is("ends", {d / 2}).is("axes", {-1}));
    const int x2 = b.add1("slice", n + ".x2", {x}, op_attrs().is("starts", {d / 2}).is("ends", {d}).is("axes", {-1}));
    const int rot = b.add1("concat", n + ".rotate_half", {b.add1("neg", n + ".neg", {x2}), x1}, op_attrs().i("axis", -1));
    return b.add1("add", n + ".rope", {b.add1("mul", n + ".cos", {x, cos}), b.add1("mul", n + ".sin", {rot, sin})});
}

workload_graph build_llama(const workload_params& p) {
    const std::int64_t batch = p.positive("batch"), seq = p.positive("seq"), layers = p.positive("layers");
    const std::int64_t hidden = p.positive("hidden"), heads = p.positive("heads"), kv_heads = p.positive("kv_heads");
    const std::int64_t ffn = p.positive("ffn"), vocab = p.positive("vocab"), cache = p.positive("kv_cache", 0);
    if (hidden % heads || heads % kv_heads)
        fail("generator llama: hidden (" + std::to_string(hidden) + ") must be a multiple of heads (" + std::to_string(heads) +
                 "), and heads of kv_heads (" + std::to_string(kv_heads) + ")",
             p.find("heads")->where);
    const std::int64_t d = hidden / heads;
    attention_config cfg;
    cfg.fused = attention_mode(p) == "fused";
    cfg.causal = true;
    graph_builder b("llama", p.precision());
    const int ids = b.input("input_ids", {batch, seq}, dtype::int64);
    // Rotary tables for positions cache .. cache + seq - 1, shared by every layer.
    const int cos = b.constant("rope.cos", {seq, d}), sin = b.constant("rope.sin", {seq, d});
    int x = b.add1("embedding", "embed_tokens", {b.weight("embed_tokens.weight", {vocab, hidden}), ids});
    for (std::int64_t l = 0; l < layers; ++l) {
        const std::string n = "layers." + std::to_string(l);
        const int h = rms_norm(b, n + ".input_layernorm", x);
        int q = split_heads(b, n + ".q", linear(b, n + ".self_attn.q_proj", h, hidden, false), heads);
        int k = split_heads(b, n + ".k", linear(b, n + ".self_attn.k_proj", h, kv_heads * d, false), kv_heads);
        int v = split_heads(b, n + ".v", linear(b, n + ".self_attn.v_proj", h, kv_heads * d, false), kv_heads);
        q = rotary(b, n + ".q", q, cos, sin);
        k = rotary(b, n + ".k", k, cos, sin);
        if (cache > 0) {
            // The new keys and values join those cached by earlier steps.
            const int kc = b.state(n + ".k_cache", {batch, kv_heads, cache, d});
            const int vc = b.state(n + ".v_cache", {batch, kv_heads, cache, d});
            k = b.add1("concat", n + ".k_cache_append", {kc, k}, op_attrs().i("axis", 2));
            v = b.add1("concat", n + ".v_cache_append", {vc, v}, op_attrs().i("axis", 2));
        }
        const int ctx = merge_heads(b, n + ".context", attention(b, n + ".self_attn", q, k, v, cfg));
        x = b.add1("add", n + ".attn_residual", {x, linear(b, n + ".self_attn.o_proj", ctx, hidden, false)});
        const int h2 = rms_norm(b, n + ".post_attention_layernorm", x);
        const int gate = b.add1("silu", n + ".mlp.act", {linear(b, n + ".mlp.gate_proj", h2, ffn, false)});
        const int up = linear(b, n + ".mlp.up_proj", h2, ffn, false);
        const int m = linear(b, n + ".mlp.down_proj", b.add1("mul", n + ".mlp.gate_up", {gate, up}), hidden, false);
        x = b.add1("add", n + ".mlp_residual", {x, m});
    }
    x = rms_norm(b, "norm", x);
    linear(b, "lm_head", x, vocab, false);
    return b.finish();
}

}  // namespace

generator_info bert_generator() {
    generator_info g;
    g.name = "bert";
    g.doc = "BERT encoder (Hugging Face layout) with embeddings, post-norm layers and the tanh pooler";
    g.params = {{"variant", "base", "base (110M parameters) or large (340M); sets the sizes below unless given"},
                {"batch", "1", "sequences per step"},
                {"seq", "128", "tokens per sequence"},
                {"layers", "12", "encoder layers"},
                {"hidden", "768", "model width"},
                {"heads", "12", "attention heads (hidden must be a multiple)"},
                {"ffn", "3072", "width of the feed-forward layer"},
                {"vocab", "30522", "vocabulary size (WordPiece, uncased)"},
                {"max_position", "512", "rows of the position embedding"},
                {"type_vocab", "2", "rows of the token-type embedding"},
                {"pooler", "true", "include the pooler (dense + tanh on the first token)"},
                {"attention", "decomposed", "decomposed (matmul, scale, softmax, matmul) or fused (one attention op)"}};
    g.presets["variant"]["large"] = {{"layers", "24"}, {"hidden", "1024"}, {"heads", "16"}, {"ffn", "4096"}};
    g.build = build_bert;
    return g;
}

generator_info gpt2_generator() {
    generator_info g;
    g.name = "gpt2";
    g.doc = "GPT-2 decoder with causal attention and the LM head tied to the token embedding";
    g.params = {{"variant", "small", "small (124M), medium (355M), large (774M) or xl (1.5B); sets the sizes below unless given"},
                {"batch", "1", "sequences per step"},
                {"seq", "1024", "tokens per sequence"},
                {"layers", "12", "decoder layers"},
                {"hidden", "768", "model width"},
                {"heads", "12", "attention heads (hidden must be a multiple)"},
                {"vocab", "50257", "vocabulary size (byte-level BPE)"},
                {"context", "1024", "rows of the position embedding (longest sequence)"},
                {"attention", "decomposed", "decomposed (matmul, scale, mask, softmax, matmul) or fused (one attention op)"}};
    g.presets["variant"]["medium"] = {{"layers", "24"}, {"hidden", "1024"}, {"heads", "16"}};
    g.presets["variant"]["large"] = {{"layers", "36"}, {"hidden", "1280"}, {"heads", "20"}};
    g.presets["variant"]["xl"] = {{"layers", "48"}, {"hidden", "1600"}, {"heads", "25"}};
    g.build = build_gpt2;
    return g;
}

generator_info llama_generator() {
    generator_info g;
    g.name = "llama";
    g.doc = "Llama 2 decoder: RMSNorm, rotary embeddings, SwiGLU MLP, grouped-query attention (70b); one step of "
            "prefill (seq new tokens) or decode (1 new token over a KV cache)";
    g.params = {{"variant", "7b", "7b (6.74B parameters), 13b or 70b; sets the sizes below unless given"},
                {"mode", "prefill", "prefill: seq tokens, empty cache; decode: seq 1 and kv_cache 2048 unless given"},
                {"batch", "1", "sequences per step"},
                {"seq", "2048", "new tokens per sequence in this step"},
                {"kv_cache", "0", "tokens already in the KV cache (their keys and values are read, not recomputed)"},
                {"layers", "32", "decoder layers"},
                {"hidden", "4096", "model width"},
                {"heads", "32", "query heads"},
                {"kv_heads", "32", "key/value heads (fewer than heads is grouped-query attention)"},
                {"ffn", "11008", "width of the SwiGLU MLP"},
                {"vocab", "32000", "vocabulary size"},
                {"attention", "decomposed", "decomposed (matmul, scale, mask, softmax, matmul) or fused (one attention op)"}};
    g.presets["variant"]["13b"] = {{"layers", "40"}, {"hidden", "5120"}, {"heads", "40"}, {"kv_heads", "40"}, {"ffn", "13824"}};
    g.presets["variant"]["70b"] = {{"layers", "80"}, {"hidden", "8192"}, {"heads", "64"}, {"kv_heads", "8"}, {"ffn", "28672"}};
    g.presets["mode"]["decode"] = {{"seq", "1"}, {"kv_cache", "2048"}};
    g.build = build_llama;
    return g;
}

}  // namespace tessel
