// Transformer generators: BERT (Devlin et al. 2018, the Hugging Face layout: word, position and token-type
// embeddings, post-norm encoder layers, tanh pooler), GPT-2 (Radford et al. 2019: pre-norm decoder, fused
// QKV projection, LM head tied to the token embedding) and Llama 2 (Touvron et al. 2023: RMSNorm, rotary
// embeddings, SwiGLU MLP, grouped-query attention for 70B, an untied LM head; prefill or decode with a KV
// cache). Attention is either decomposed (matmul, scale, mask, softmax, matmul, as exported models have it)
// or one fused attention op.
//
// Tensor parallelism (parameter `tp`): the graph is ONE rank's shard, Megatron-LM style (Shoeybi et al. 2019).
// Attention splits by heads (Q, K, V column-parallel, the output projection row-parallel), the MLP by its width
// (first linear column-parallel, second row-parallel), the token embedding and the LM head by the vocabulary
// (padded up to a multiple of tp, as Megatron pads it). Collectives (op kind collective, attribute group "tp")
// sit where Megatron has them: an all_reduce after each row-parallel projection and after the vocab-parallel
// embedding (its `g`), and a grad_all_reduce (Megatron's `f`: identity forward, all-reduce of the gradient
// backward) before each column-parallel block. Biases of row-parallel layers are added after the all-reduce and
// are replicated, as are norms and the position embeddings. With `sequence_parallel` (Korthikanti et al. 2022)
// the all-reduces become reduce_scatter along the sequence and the f operators all_gather along the sequence,
// so norms, residual adds and the embedding sums work on seq/tp tokens. Left out: the vocab-parallel
// cross-entropy's two small all-reduces (the graphs end at the logits). Dropout (parameters `dropout` and
// `attention_dropout`, 0 by default) is replicated on the tp ranks where its input is.
//
// Every op carries int_attrs["layer"]: -1 for the embeddings, i for layer i, `layers` for the final norm, the
// pooler and the LM head; pipeline stages are cut by it. Ops of the attention core (scores, softmax, context)
// also carry int_attrs["attention_core"] = 1, what selective recomputation re-runs. tp = 1 builds exactly the
// unsplit graph.
#include <cmath>
#include <utility>

#include "engine/workload/generators.h"
#include "engine/workload/layers.h"

namespace tessel {

namespace {

/// Tags the ops added since the last call with int_attrs[key] = value.
class op_tagger {
public:
    op_tagger(graph_builder& b, std::string key) : m_b(b), m_key(std::move(key)), m_from(b.graph().ops().size()) {}
    void tag(std::int64_t value) {
        auto& ops = m_b.graph().ops();
        for (size_t i = m_from; i < ops.size(); ++i) ops[i].int_attrs[m_key] = {value};
        m_from = ops.size();
    }

private:
    graph_builder& m_b;
    std::string m_key;
    size_t m_from;
};

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
    double dropout = 0;   // dropout on the attention probabilities (decomposed attention only)
};

/// x after a dropout of `ratio` (x itself when the ratio is 0).
int dropout(graph_builder& b, const std::string& name, int x, double ratio) {
    return ratio > 0 ? b.add1("dropout", name, {x}, op_attrs().f("ratio", ratio)) : x;
}

/// Scaled dot-product attention of q [B, H, S, d] over k, v [B, Hkv, Skv, d] -> [B, H, S, d].
int attention_ops(graph_builder& b, const std::string& n, int q, int k, int v, const attention_config& cfg) {
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
            return b.add1("reshape", n + "." + what + ".groups", {e},
                          op_attrs().is("shape", {ks[0], heads, kv_seq, d}));
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
    const int p =
        dropout(b, n + ".attn_dropout", b.add1("softmax", n + ".softmax", {s}, op_attrs().i("axis", -1)), cfg.dropout);
    return b.add1("matmul", n + ".context", {p, v});
}

/// attention_ops with its ops tagged as the attention core (what selective recomputation re-runs).
int attention(graph_builder& b, const std::string& n, int q, int k, int v, const attention_config& cfg) {
    op_tagger core(b, "attention_core");
    const int out = attention_ops(b, n, q, k, v, cfg);
    core.tag(1);
    return out;
}

std::string attention_mode(const workload_params& p) { return p.choice("attention", {"decomposed", "fused"}); }

/// The probability of the hidden dropouts (0: none, as at inference).
double dropout_ratio(const workload_params& p, const std::string& generator, const std::string& key = "dropout") {
    const double r = p.number(key);
    if (!(r >= 0 && r < 1))
        fail("generator " + generator + ": " + key + " must be at least 0 and below 1, got " + format_number(r),
             p.find(key)->where);
    return r;
}

/// The attention of a generator with an `attention_dropout` parameter: its mode and its dropout.
attention_config attention_settings(const workload_params& p, const std::string& generator) {
    attention_config cfg;
    cfg.fused = attention_mode(p) == "fused";
    cfg.dropout = dropout_ratio(p, generator, "attention_dropout");
    if (cfg.fused && cfg.dropout > 0)
        fail("generator " + generator +
                 ": attention_dropout needs attention=decomposed (the fused attention op "
                 "has no dropout)",
             p.find("attention_dropout")->where);
    return cfg;
}

/// Tensor-parallel shape of a generated model (see the header comment).
struct tp_config {
    std::int64_t tp = 1;
    bool sp = false;  // sequence parallelism

    bool on() const { return tp > 1; }
    /// Rows of a vocab-parallel table on one rank: the vocabulary padded up to a multiple of tp, split.
    std::int64_t vocab(std::int64_t v) const { return (v + tp - 1) / tp; }
    /// Tokens of a sequence one rank holds between tensor-parallel blocks.
    std::int64_t seq(std::int64_t s) const { return sp ? s / tp : s; }

    static tp_config read(const workload_params& p, const std::string& gen, std::int64_t seq,
                          const std::vector<std::pair<std::string, std::int64_t>>& split) {
        tp_config c;
        c.tp = p.positive("tp");
        c.sp = p.boolean("sequence_parallel");
        for (const auto& [what, n] : split)
            if (n % c.tp)
                fail("generator " + gen + ": tp (" + std::to_string(c.tp) + ") must divide " +
                         std::string(what).append(" (").append(std::to_string(n)).append(")"),
                     p.find("tp")->where);
        if (c.sp && c.tp == 1)
            fail("generator " + gen + ": sequence_parallel needs tp > 1", p.find("sequence_parallel")->where);
        if (c.sp && seq % c.tp)
            fail("generator " + gen + ": sequence_parallel needs tp (" + std::to_string(c.tp) + ") to divide seq (" +
                     std::to_string(seq) + ")",
                 p.find("sequence_parallel")->where);
        return c;
    }
};

/// A collective over the tensor-parallel group; all_gather and reduce_scatter work along the sequence (axis 1).
int tp_collective(graph_builder& b, const tp_config& c, const std::string& type, const std::string& name, int x) {
    return b.add1(type, name, {x}, op_attrs().i("ranks", c.tp).i("axis", 1).s("group", "tp"));
}

/// Into a column-parallel block: Megatron's f (identity forward, gradient all-reduced backward), or with sequence
/// parallelism an all-gather of the sequence.
int enter_tp(graph_builder& b, const tp_config& c, const std::string& name, int x) {
    if (!c.on()) return x;
    if (c.sp) return tp_collective(b, c, "all_gather", name + ".all_gather", x);
    return b.add1("grad_all_reduce", name + ".grad_all_reduce", {x},
                  op_attrs().is("shape", b.shape(x)).i("ranks", c.tp).s("group", "tp"));
}

/// Out of a row-parallel block (Megatron's g): the partial sums all-reduced, or with sequence parallelism
/// reduce-scattered along the sequence.
int exit_tp(graph_builder& b, const tp_config& c, const std::string& name, int x) {
    if (!c.on()) return x;
    return c.sp ? tp_collective(b, c, "reduce_scatter", name + ".reduce_scatter", x)
                : tp_collective(b, c, "all_reduce", name + ".all_reduce", x);
}

/// A row-parallel linear layer: the weight's input rows are split, the partial products leave through exit_tp,
/// and the (replicated) bias is added after it. tp = 1: the ordinary linear layer.
int row_linear(graph_builder& b, const tp_config& c, const std::string& name, int x, std::int64_t out, bool bias) {
    if (!c.on()) return linear(b, name, x, out, bias);
    int y = exit_tp(b, c, name, linear(b, name, x, out, false));
    if (bias) y = b.add1("add", name + ".add_bias", {y, b.weight(name + ".bias", {out})});
    return y;
}

// The fewest ops any layer below builds (two norms, four projections, attention, two MLP matmuls, two residual
// adds): a lower bound, so refusing `layers` x this over the ops limit never refuses a graph that would fit.
constexpr double k_min_ops_per_layer = 10;

// ---------------------------------------------------------------------------------------------------- BERT

workload_graph build_bert(const workload_params& p) {
    const std::int64_t batch = p.positive("batch"), seq = p.positive("seq"),
                       layers = p.repeats("layers", k_min_ops_per_layer);
    const std::int64_t hidden = p.positive("hidden"), heads = p.positive("heads"), ffn = p.positive("ffn");
    const std::int64_t vocab = p.positive("vocab"), max_pos = p.positive("max_position"),
                       types = p.positive("type_vocab");
    if (hidden % heads)
        fail("generator bert: hidden (" + std::to_string(hidden) + ") must be a multiple of heads (" +
                 std::to_string(heads) + ")",
             p.find("heads")->where);
    if (seq > max_pos)
        fail("generator bert: seq (" + std::to_string(seq) + ") exceeds max_position (" + std::to_string(max_pos) + ")",
             p.find("seq")->where);
    const tp_config tp = tp_config::read(p, "bert", seq, {{"heads", heads}, {"ffn", ffn}});
    const attention_config cfg = attention_settings(p, "bert");
    const double drop = dropout_ratio(p, "bert");
    graph_builder b("bert", p.precision());
    op_tagger layer(b, "layer");
    const std::int64_t local_seq = tp.seq(seq);  // tokens per rank outside the tensor-parallel blocks
    const int ids = b.input("input_ids", {batch, seq}, dtype::int64);
    const int type_ids = b.input("token_type_ids", {batch, local_seq}, dtype::int64);
    const int pos_ids = b.constant("position_ids", {1, local_seq}, dtype::int64);
    const int word_embeddings = b.weight("embeddings.word_embeddings.weight", {tp.vocab(vocab), hidden});
    int x = b.add1("embedding", "embeddings.word", {word_embeddings, ids});
    x = exit_tp(b, tp, "embeddings.word", x);
    const int t = b.add1("embedding", "embeddings.token_type",
                         {b.weight("embeddings.token_type_embeddings.weight", {types, hidden}), type_ids});
    const int pe = b.add1("embedding", "embeddings.position",
                          {b.weight("embeddings.position_embeddings.weight", {max_pos, hidden}), pos_ids});
    x = b.add1("add", "embeddings.add_type", {x, t});
    x = b.add1("add", "embeddings.add_position", {x, pe});
    x = dropout(b, "embeddings.dropout", layer_norm(b, "embeddings.LayerNorm", x), drop);
    layer.tag(-1);
    const std::int64_t h_tp = hidden / tp.tp, heads_tp = heads / tp.tp;
    for (std::int64_t l = 0; l < layers; ++l) {
        const std::string n = "encoder.layer." + std::to_string(l);
        const int xin = enter_tp(b, tp, n + ".attention", x);
        const int q = split_heads(b, n + ".q", linear(b, n + ".attention.query", xin, h_tp, true), heads_tp);
        const int k = split_heads(b, n + ".k", linear(b, n + ".attention.key", xin, h_tp, true), heads_tp);
        const int v = split_heads(b, n + ".v", linear(b, n + ".attention.value", xin, h_tp, true), heads_tp);
        const int ctx = merge_heads(b, n + ".context", attention(b, n + ".attention", q, k, v, cfg));
        int y = dropout(b, n + ".attention.output.dropout",
                        row_linear(b, tp, n + ".attention.output.dense", ctx, hidden, true), drop);
        y = b.add1("add", n + ".attention.residual", {y, x});
        x = layer_norm(b, n + ".attention.output.LayerNorm", y);
        y = linear(b, n + ".intermediate.dense", enter_tp(b, tp, n + ".intermediate", x), ffn / tp.tp, true);
        y = b.add1("gelu", n + ".intermediate.gelu", {y});
        y = dropout(b, n + ".output.dropout", row_linear(b, tp, n + ".output.dense", y, hidden, true), drop);
        y = b.add1("add", n + ".output.residual", {y, x});
        x = layer_norm(b, n + ".output.LayerNorm", y);
        layer.tag(l);
    }
    if (p.boolean("pooler")) {
        // The pooler reads the first token's hidden state; it is replicated on the tensor-parallel ranks, so with
        // sequence parallelism the sequence is gathered first and the gradient only split back (grad_split).
        if (tp.sp)
            x = b.add1("all_gather", "pooler.all_gather", {x},
                       op_attrs().i("ranks", tp.tp).i("axis", 1).s("group", "tp").i("grad_split", 1));
        int first =
            b.add1("slice", "pooler.first_token", {x}, op_attrs().is("starts", {0}).is("ends", {1}).is("axes", {1}));
        first = b.add1("squeeze", "pooler.squeeze", {first}, op_attrs().is("axes", {1}));
        b.add1("tanh", "pooler.activation", {linear(b, "pooler.dense", first, hidden, true)});
    }
    if (p.boolean("mlm_head")) {
        // BertForMaskedLM's head over every token: dense, GELU, LayerNorm, then the decoder tied to the word
        // embeddings (vocab-parallel with tp: this rank's rows) plus a bias.
        int h = linear(b, "cls.predictions.transform.dense", x, hidden, true);
        h = layer_norm(b, "cls.predictions.transform.LayerNorm", b.add1("gelu", "cls.predictions.transform.gelu", {h}));
        h = enter_tp(b, tp, "cls.predictions", h);
        b.add1("matmul", "cls.predictions.decoder",
               {h, word_embeddings, b.weight("cls.predictions.bias", {tp.vocab(vocab)})},
               op_attrs().i("transpose_b", 1));
    }
    layer.tag(layers);
    return b.finish();
}

// ---------------------------------------------------------------------------------------------------- GPT-2

workload_graph build_gpt2(const workload_params& p) {
    const std::int64_t batch = p.positive("batch"), seq = p.positive("seq"),
                       layers = p.repeats("layers", k_min_ops_per_layer);
    const std::int64_t hidden = p.positive("hidden"), heads = p.positive("heads");
    const std::int64_t vocab = p.positive("vocab"), context = p.positive("context");
    if (hidden % heads)
        fail("generator gpt2: hidden (" + std::to_string(hidden) + ") must be a multiple of heads (" +
                 std::to_string(heads) + ")",
             p.find("heads")->where);
    if (seq > context)
        fail("generator gpt2: seq (" + std::to_string(seq) + ") exceeds the context (" + std::to_string(context) + ")",
             p.find("seq")->where);
    const tp_config tp =
        tp_config::read(p, "gpt2", seq, {{"heads", heads}, {"the feed-forward width 4 * hidden", 4 * hidden}});
    attention_config cfg = attention_settings(p, "gpt2");
    cfg.causal = true;
    const double drop = dropout_ratio(p, "gpt2");
    graph_builder b("gpt2", p.precision());
    op_tagger layer(b, "layer");
    const int ids = b.input("input_ids", {batch, seq}, dtype::int64);
    const int pos_ids = b.constant("position_ids", {1, tp.seq(seq)}, dtype::int64);
    const int wte = b.weight("wte.weight", {tp.vocab(vocab), hidden});
    int x = b.add1("embedding", "wte", {wte, ids});
    x = exit_tp(b, tp, "wte", x);
    x = b.add1("add", "add_position",
               {x, b.add1("embedding", "wpe", {b.weight("wpe.weight", {context, hidden}), pos_ids})});
    x = dropout(b, "drop", x, drop);
    layer.tag(-1);
    const std::int64_t h_tp = hidden / tp.tp, heads_tp = heads / tp.tp;
    for (std::int64_t l = 0; l < layers; ++l) {
        const std::string n = "h." + std::to_string(l);
        const int h = enter_tp(b, tp, n + ".attn", layer_norm(b, n + ".ln_1", x));
        const int qkv = linear(b, n + ".attn.c_attn", h, 3 * h_tp, true);
        const auto parts =
            b.add("split", n + ".attn.split", {qkv}, op_attrs().i("axis", -1).is("sizes", {h_tp, h_tp, h_tp}), 3);
        const int q = split_heads(b, n + ".q", parts[0], heads_tp);
        const int k = split_heads(b, n + ".k", parts[1], heads_tp);
        const int v = split_heads(b, n + ".v", parts[2], heads_tp);
        const int ctx = merge_heads(b, n + ".context", attention(b, n + ".attn", q, k, v, cfg));
        x = b.add1(
            "add", n + ".attn.residual",
            {x, dropout(b, n + ".attn.resid_dropout", row_linear(b, tp, n + ".attn.c_proj", ctx, hidden, true), drop)});
        int m = linear(b, n + ".mlp.c_fc", enter_tp(b, tp, n + ".mlp", layer_norm(b, n + ".ln_2", x)), 4 * h_tp, true);
        m = b.add1("gelu", n + ".mlp.gelu", {m}, op_attrs().s("approximate", "tanh"));
        x = b.add1("add", n + ".mlp.residual",
                   {x, dropout(b, n + ".mlp.dropout", row_linear(b, tp, n + ".mlp.c_proj", m, hidden, true), drop)});
        layer.tag(l);
    }
    x = enter_tp(b, tp, "lm_head", layer_norm(b, "ln_f", x));
    // The LM head reuses the token embedding (weight tying): logits = x . wte^T (vocab-parallel: this rank's rows).
    b.add1("matmul", "lm_head", {x, wte}, op_attrs().i("transpose_b", 1));
    layer.tag(layers);
    return b.finish();
}

// ---------------------------------------------------------------------------------------------------- Llama

/// Rotary position embedding: x * cos + rotate_half(x) * sin, rotate_half(x) = [-x2, x1].
int rotary(graph_builder& b, const std::string& n, int x, int cos, int sin) {
    const std::int64_t d = b.shape(x).back();
    const int x1 = b.add1("slice", n + ".x1", {x}, op_attrs().is("starts", {0}).is("ends", {d / 2}).is("axes", {-1}));
    const int x2 = b.add1("slice", n + ".x2", {x}, op_attrs().is("starts", {d / 2}).is("ends", {d}).is("axes", {-1}));
    const int rot =
        b.add1("concat", n + ".rotate_half", {b.add1("neg", n + ".neg", {x2}), x1}, op_attrs().i("axis", -1));
    return b.add1("add", n + ".rope", {b.add1("mul", n + ".cos", {x, cos}), b.add1("mul", n + ".sin", {rot, sin})});
}

/// Keys or values `x` ([batch, heads, new tokens, d]) appended to a cache of `cached` tokens of the same shape.
/// In place, the cache (a state tensor) has slots for the new tokens, a copy kernel writes them there, and the
/// result is a view of the cache; otherwise a concat copies the whole cache with them.
int cache_update(graph_builder& b, const std::string& name, int x, std::vector<std::int64_t> cached, bool in_place) {
    const std::int64_t fresh = b.shape(x)[2];
    if (!in_place) return b.add1("concat", name + "_append", {b.state(name, cached), x}, op_attrs().i("axis", 2));
    cached[2] += fresh;
    const int cache = b.state(name, cached);
    return b.add1("cache_append", name + "_append", {cache, b.add1("copy", name + "_write", {x})},
                  op_attrs().i("axis", 2));
}

/// A Llama layer's attention for one group of sequences: `batch` sequences of `seq` new tokens over `cached` tokens
/// each, from their projections split into heads (q [batch, heads, seq, d], k and v with kv_heads); returns the
/// context [batch, seq, heads x d]. `n` names the group's ops.
struct llama_attention {
    std::int64_t heads = 1, kv_heads = 1, d = 1;
    attention_config cfg;
    bool in_place = true;

    int operator()(graph_builder& b, const std::string& n, int q, int k, int v, std::int64_t cached, int cos,
                   int sin) const {
        const std::int64_t batch = b.shape(q)[0];
        q = rotary(b, n + ".q", q, cos, sin);
        k = rotary(b, n + ".k", k, cos, sin);
        if (cached > 0) {
            // The new keys and values join those cached by earlier steps: written into their slots of the
            // cache (vLLM's reshape_and_cache), or the cache copied with them (Hugging Face's dynamic cache).
            k = cache_update(b, n + ".k_cache", k, {batch, kv_heads, cached, d}, in_place);
            v = cache_update(b, n + ".v_cache", v, {batch, kv_heads, cached, d}, in_place);
        }
        return merge_heads(b, n + ".context", attention(b, n + ".self_attn", q, k, v, cfg));
    }

    /// Attention over the new keys and values (already written into their cache slots when in place) joined to
    /// `cached` cached ones: [batch, heads, seq, d].
    int core(graph_builder& b, const std::string& n, int q, int k, int v, std::int64_t cached) const {
        if (cached > 0) {
            // vLLM's paged cache: a view of the cache with the new entries in their slots; Hugging Face's dynamic
            // cache: the cache copied with them.
            const std::int64_t batch = b.shape(k)[0];
            k = join_cache(b, n + ".k_cache", k, {batch, kv_heads, cached, d});
            v = join_cache(b, n + ".v_cache", v, {batch, kv_heads, cached, d});
        }
        return attention(b, n + ".self_attn", q, k, v, cfg);
    }

private:
    int join_cache(graph_builder& b, const std::string& name, int x, std::vector<std::int64_t> cached) const {
        if (!in_place) return b.add1("concat", name + "_append", {b.state(name, cached), x}, op_attrs().i("axis", 2));
        cached[2] += b.shape(x)[2];
        return b.add1("cache_append", name + "_append", {b.state(name, cached), x}, op_attrs().i("axis", 2));
    }
};

/// A mixed step's two groups of sequences (chunked prefill: Sarathi-Serve, vLLM): the prefill chunks (`batch`
/// sequences of `seq` tokens over `cached` each) and `decodes` sequences of one token over `decode_cache`. Their
/// tokens are packed into one row that every layer runs on at once (projections, rotary, the cache write, the MLP),
/// so each weight is read once for both; only attention takes each group's part, as vLLM's kernels index the packed
/// batch.
struct llama_groups {
    std::int64_t batch = 1, seq = 1, cached = 0;
    std::int64_t decodes = 0, decode_cache = 0;

    bool mixed() const { return decodes > 0; }
    std::int64_t chunk_tokens() const { return batch * seq; }
    std::int64_t tokens() const { return chunk_tokens() + decodes; }

    /// The attention of both groups from the packed projections split into heads ([1, heads, tokens, d]).
    int attention(graph_builder& b, const std::string& n, const llama_attention& a, int q, int k, int v, int cos,
                  int sin) const {
        q = rotary(b, n + ".q", q, cos, sin);
        k = rotary(b, n + ".k", k, cos, sin);
        if (a.in_place) {
            // Every new key and value written into its cache slot by one kernel (vLLM's reshape_and_cache).
            k = b.add1("copy", n + ".k_cache_write", {k});
            v = b.add1("copy", n + ".v_cache_write", {v});
        }
        const auto [qc, qd] = unpack(b, n + ".q", q);
        const auto [kc, kd] = unpack(b, n + ".k", k);
        const auto [vc, vd] = unpack(b, n + ".v", v);
        const int chunk_ctx = a.core(b, n + ".chunk", qc, kc, vc, cached);
        const int decode_ctx = a.core(b, n + ".decode", qd, kd, vd, decode_cache);
        const std::int64_t heads = b.shape(chunk_ctx)[1], d = b.shape(chunk_ctx)[3];
        const int rows = b.add1(
            "concat", n + ".context.pack",
            {b.add1("reshape", n + ".context.chunks", {chunk_ctx},
                    op_attrs().is("shape", {1, heads, chunk_tokens(), d})),
             b.add1("reshape", n + ".context.decodes", {decode_ctx}, op_attrs().is("shape", {1, heads, decodes, d}))},
            op_attrs().i("axis", 2).i("packed", 1));
        return merge_heads(b, n + ".context", rows);
    }

private:
    /// A packed [1, heads, tokens, d] tensor as the groups' views: [batch, heads, seq, d] and [decodes, heads, 1, d].
    std::pair<int, int> unpack(graph_builder& b, const std::string& n, int x) const {
        const std::int64_t heads = b.shape(x)[1], d = b.shape(x)[3];
        const auto parts = b.add("split", n + ".unpack", {x},
                                 op_attrs().i("axis", 2).is("sizes", {chunk_tokens(), decodes}).i("packed", 1), 2);
        return {b.add1("reshape", n + ".chunks", {parts[0]}, op_attrs().is("shape", {batch, heads, seq, d})),
                b.add1("reshape", n + ".decodes", {parts[1]}, op_attrs().is("shape", {decodes, heads, 1, d}))};
    }
};

/// A mixture-of-experts MLP (Mixtral: Jiang et al. 2024, "Mixtral of Experts"): a router picks `top_k` of `experts`
/// SwiGLU experts per token and the token's output is their outputs weighted by the router. Routing is taken as
/// balanced (every expert equally loaded), and a step's tokens activate min(experts, tokens x top_k) experts, each
/// on ceil(tokens x top_k / active) of them: at batch 1 a decode reads two experts' weights, not eight.
/// Tensor parallelism splits each expert's width tp ways (vLLM's default; an all-reduce after). Expert parallelism
/// gives each of the tp ranks experts / tp whole experts: a rank routes its ceil(tokens / tp) share of the tokens,
/// sends each token's copies to the ranks of its experts (all-to-all dispatch), runs its experts on what it
/// received, sends the outputs back (all-to-all combine), and the ranks gather every token again (all-gather)
/// for the attention that follows.
struct moe_config {
    std::int64_t experts = 0, top_k = 2, ffn = 1;
    bool expert_parallel = false;

    bool on() const { return experts > 0; }

    int operator()(graph_builder& b, const tp_config& tp, const std::string& n, int x) const {
        const auto shape = b.shape(x);  // [batch, seq, hidden], every token on every rank
        const std::int64_t hidden = shape[2], tokens = shape[0] * shape[1];
        const bool ep = expert_parallel && tp.on();
        const std::int64_t ranks = ep ? tp.tp : 1, local_experts = experts / ranks;
        const std::int64_t width = ep ? ffn : ffn / tp.tp;       // of each expert on this rank
        const std::int64_t mine = (tokens + ranks - 1) / ranks;  // tokens this rank routes
        int h = b.add1("reshape", n + ".tokens", {x}, op_attrs().is("shape", {1, tokens, hidden}));
        if (ep && mine < tokens)
            h = b.add1("slice", n + ".share", {h}, op_attrs().is("starts", {0}).is("ends", {mine}).is("axes", {1}));
        const int router = b.add1("softmax", n + ".router.softmax", {linear(b, n + ".gate", h, experts, false)},
                                  op_attrs().i("axis", -1));
        // Each token's top_k copies, in expert order (the permutation kernel), sent to their experts' ranks.
        std::vector<int> copies(static_cast<std::size_t>(top_k), h);
        int routed = b.add1("concat", n + ".permute", copies, op_attrs().i("axis", 1));
        if (ep)
            routed = b.add1("all_to_all", n + ".dispatch", {routed},
                            op_attrs().i("ranks", tp.tp).i("axis", 1).s("group", "tp"));
        // This rank's experts on what they received: the busiest rank's share when routing is balanced.
        const std::int64_t received = mine * top_k;
        const std::int64_t active = std::min(local_experts, received);
        const std::int64_t per_expert = (received + active - 1) / active;
        std::vector<int> outs;
        for (std::int64_t e = 0; e < local_experts; ++e) {
            const std::string en = n + ".experts." + std::to_string(e);
            if (e >= active) {
                // Its weights are held but no token reaches it in this step.
                for (const char* w : {".w1.weight", ".w3.weight"}) b.weight(en + w, {hidden, width});
                b.weight(en + ".w2.weight", {width, hidden});
                continue;
            }
            const std::int64_t from = std::min(e * per_expert, received - per_expert);
            const int xe = b.add1("slice", en + ".tokens", {routed},
                                  op_attrs().is("starts", {from}).is("ends", {from + per_expert}).is("axes", {1}));
            const int gate = b.add1("silu", en + ".act", {linear(b, en + ".w1", xe, width, false)});
            const int up = linear(b, en + ".w3", xe, width, false);
            outs.push_back(linear(b, en + ".w2", b.add1("mul", en + ".gate_up", {gate, up}), hidden, false));
        }
        int y = outs.size() == 1 ? outs.front() : b.add1("concat", n + ".unpermute", outs, op_attrs().i("axis", 1));
        if (b.shape(y)[1] != received)
            y = b.add1("slice", n + ".routed", {y},
                       op_attrs().is("starts", {0}).is("ends", {received}).is("axes", {1}));
        if (ep)
            y = b.add1("all_to_all", n + ".combine", {y}, op_attrs().i("ranks", tp.tp).i("axis", 1).s("group", "tp"));
        // Each token's outputs weighted by the router and summed.
        const int weights = b.add1("reshape", n + ".router.weights",
                                   {b.add1("slice", n + ".router.top_k", {router},
                                           op_attrs().is("starts", {0}).is("ends", {top_k}).is("axes", {-1}))},
                                   op_attrs().is("shape", {1, mine, top_k, 1}));
        y = b.add1("reshape", n + ".by_token", {y}, op_attrs().is("shape", {1, mine, top_k, hidden}));
        y = b.add1("reduce_sum", n + ".weighted_sum", {b.add1("mul", n + ".weighted", {y, weights})},
                   op_attrs().is("axes", {2}).i("keepdims", 0));
        if (ep) {
            y = tp_collective(b, tp, "all_gather", n + ".all_gather", y);
            if (mine * ranks > tokens)
                y = b.add1("slice", n + ".all_tokens", {y},
                           op_attrs().is("starts", {0}).is("ends", {tokens}).is("axes", {1}));
        } else {
            y = exit_tp(b, tp, n, y);
        }
        return b.add1("reshape", n + ".out", {y}, op_attrs().is("shape", shape));
    }
};

workload_graph build_llama(const workload_params& p) {
    const std::int64_t batch = p.positive("batch"), seq = p.positive("seq"),
                       layers = p.repeats("layers", k_min_ops_per_layer);
    const std::int64_t hidden = p.positive("hidden"), heads = p.positive("heads"), kv_heads = p.positive("kv_heads");
    const std::int64_t ffn = p.positive("ffn"), vocab = p.positive("vocab"), cache = p.positive("kv_cache", 0);
    llama_groups groups{batch, seq, cache, p.positive("decode_batch", 0), p.positive("decode_kv_cache", 0)};
    if (hidden % heads || heads % kv_heads)
        fail("generator llama: hidden (" + std::to_string(hidden) + ") must be a multiple of heads (" +
                 std::to_string(heads) + "), and heads of kv_heads (" + std::to_string(kv_heads) + ")",
             p.find("heads")->where);
    const tp_config tp = tp_config::read(p, "llama", seq, {{"heads", heads}, {"kv_heads", kv_heads}, {"ffn", ffn}});
    if (groups.mixed() && groups.decode_cache < 1)
        fail(
            "generator llama: decode_batch needs decode_kv_cache of at least 1 (a decoding sequence has its prompt "
            "cached)",
            p.find("decode_batch")->where);
    if (groups.mixed() && tp.sp)
        fail("generator llama: decode_batch (a mixed step) needs sequence_parallel off", p.find("decode_batch")->where);
    // Every expert of every layer holds three weight tensors, whether or not a token reaches it.
    const moe_config moe{p.repeats("experts", 3.0 * static_cast<double>(layers), 0), p.positive("experts_per_token"),
                         ffn, p.boolean("expert_parallel")};
    if (moe.on() && (moe.top_k > moe.experts || (moe.expert_parallel && moe.experts % tp.tp)))
        fail("generator llama: experts (" + std::to_string(moe.experts) + ") must be at least experts_per_token (" +
                 std::to_string(moe.top_k) + ")" + (moe.expert_parallel ? " and a multiple of tp" : ""),
             p.find("experts")->where);
    if (moe.on() && tp.sp)
        fail("generator llama: experts (a mixture of experts) needs sequence_parallel off", p.find("experts")->where);
    const std::int64_t d = hidden / heads;
    llama_attention attend;
    attend.heads = heads / tp.tp;
    attend.kv_heads = kv_heads / tp.tp;
    attend.d = d;
    attend.cfg.fused = attention_mode(p) == "fused";
    attend.cfg.causal = true;
    attend.in_place = p.choice("kv_cache_update", {"in_place", "copy"}) == "in_place";
    graph_builder b("llama", p.precision());
    op_tagger layer(b, "layer");
    // Positions cache .. cache + seq - 1, or in a mixed step one row per packed token.
    const std::int64_t rows = groups.mixed() ? groups.tokens() : seq;
    const int ids = groups.mixed() ? b.input("input_ids", {1, rows}, dtype::int64)
                                   : b.input("input_ids", {batch, seq}, dtype::int64);
    // Rotary tables, shared by every layer.
    const int cos = b.constant("rope.cos", {rows, d}), sin = b.constant("rope.sin", {rows, d});
    int x = b.add1("embedding", "embed_tokens", {b.weight("embed_tokens.weight", {tp.vocab(vocab), hidden}), ids});
    x = exit_tp(b, tp, "embed_tokens", x);
    layer.tag(-1);
    for (std::int64_t l = 0; l < layers; ++l) {
        const std::string n = "layers." + std::to_string(l);
        const int h = enter_tp(b, tp, n + ".self_attn", rms_norm(b, n + ".input_layernorm", x));
        const int q =
            split_heads(b, n + ".q", linear(b, n + ".self_attn.q_proj", h, attend.heads * d, false), attend.heads);
        const int k = split_heads(b, n + ".k", linear(b, n + ".self_attn.k_proj", h, attend.kv_heads * d, false),
                                  attend.kv_heads);
        const int v = split_heads(b, n + ".v", linear(b, n + ".self_attn.v_proj", h, attend.kv_heads * d, false),
                                  attend.kv_heads);
        const int ctx =
            groups.mixed() ? groups.attention(b, n, attend, q, k, v, cos, sin) : attend(b, n, q, k, v, cache, cos, sin);
        x = b.add1("add", n + ".attn_residual", {x, row_linear(b, tp, n + ".self_attn.o_proj", ctx, hidden, false)});
        int m = -1;
        if (moe.on()) {
            // Mixtral's block_sparse_moe in place of the MLP.
            m = moe(b, tp, n + ".block_sparse_moe", rms_norm(b, n + ".post_attention_layernorm", x));
        } else {
            const int h2 = enter_tp(b, tp, n + ".mlp", rms_norm(b, n + ".post_attention_layernorm", x));
            const int gate = b.add1("silu", n + ".mlp.act", {linear(b, n + ".mlp.gate_proj", h2, ffn / tp.tp, false)});
            const int up = linear(b, n + ".mlp.up_proj", h2, ffn / tp.tp, false);
            m = row_linear(b, tp, n + ".mlp.down_proj", b.add1("mul", n + ".mlp.gate_up", {gate, up}), hidden, false);
        }
        x = b.add1("add", n + ".mlp_residual", {x, m});
        layer.tag(l);
    }
    x = enter_tp(b, tp, "lm_head", rms_norm(b, "norm", x));
    linear(b, "lm_head", x, tp.vocab(vocab), false);
    layer.tag(layers);
    return b.finish();
}

}  // namespace

// The tensor-parallel parameters every transformer generator takes (docs/parallelism.md).
const generator_param k_tp_param{"tp", "1",
                                 "tensor-parallel ranks: the graph is one rank's shard (heads, feed-forward width and "
                                 "vocabulary split tp ways, Megatron-LM collectives between)"};
// Hugging Face's hidden dropouts (BERT's hidden_dropout_prob, GPT-2's resid_pdrop and embd_pdrop).
const generator_param k_dropout_param{"dropout", "0",
                                      "probability of the hidden dropouts after the embeddings and each residual "
                                      "branch (0: none, as at inference; Hugging Face trains with 0.1); the "
                                      "attention probabilities' own dropout is attention_dropout"};
// Dropout on the attention probabilities (GPT-2's attn_pdrop, BERT's attention_probs_dropout_prob, Megatron-LM's
// attention_dropout; Korthikanti et al. 2022 count its mask and output per layer).
const generator_param k_attention_dropout_param{
    "attention_dropout", "0",
    "probability of the dropout on the attention probabilities, after the softmax (0: none; Hugging Face and "
    "Megatron-LM train with 0.1); needs attention=decomposed"};
const generator_param k_sequence_parallel_param{
    "sequence_parallel", "false",
    "with tp > 1: norms, residual adds and embeddings work on seq/tp tokens; all-reduces become "
    "reduce-scatter/all-gather pairs"};

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
                {"mlm_head", "false",
                 "include BertForMaskedLM's head (pre-training): dense, GELU and LayerNorm over every token, then "
                 "logits over the vocabulary from the tied word embeddings"},
                k_tp_param,
                k_sequence_parallel_param,
                k_dropout_param,
                k_attention_dropout_param,
                {"attention", "decomposed", "decomposed (matmul, scale, softmax, matmul) or fused (one attention op)"}};
    g.presets["variant"]["large"] = {{"layers", "24"}, {"hidden", "1024"}, {"heads", "16"}, {"ffn", "4096"}};
    g.build = build_bert;
    return g;
}

generator_info gpt2_generator() {
    generator_info g;
    g.name = "gpt2";
    g.doc = "GPT-2 decoder with causal attention and the LM head tied to the token embedding";
    g.params = {
        {"variant", "small",
         "small (124M), medium (355M), large (774M) or xl (1.5B); sets the sizes below unless given"},
        {"batch", "1", "sequences per step"},
        {"seq", "1024", "tokens per sequence"},
        {"layers", "12", "decoder layers"},
        {"hidden", "768", "model width"},
        {"heads", "12", "attention heads (hidden must be a multiple)"},
        {"vocab", "50257", "vocabulary size (byte-level BPE)"},
        {"context", "1024", "rows of the position embedding (longest sequence)"},
        k_tp_param,
        k_sequence_parallel_param,
        k_dropout_param,
        k_attention_dropout_param,
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
    g.doc =
        "Llama 2 and 3 decoder: RMSNorm, rotary embeddings, SwiGLU MLP, grouped-query attention (2-70b, 3); one step "
        "of "
        "prefill (seq new tokens) or decode (1 new token over a KV cache)";
    g.params = {
        {"variant", "7b",
         "Llama 2 7b (6.74B parameters), 13b or 70b, Llama 3 3-8b or 3-70b, Llama 3.2 3.2-1b, or Mixtral mixtral-8x7b; "
         "sets the "
         "sizes below unless given"},
        {"mode", "prefill", "prefill: seq tokens, empty cache; decode: seq 1 and kv_cache 2048 unless given"},
        {"batch", "1", "sequences per step"},
        {"seq", "2048", "new tokens per sequence in this step"},
        {"kv_cache", "0", "tokens already in the KV cache (their keys and values are read, not recomputed)"},
        {"decode_batch", "0",
         "sequences decoding one token each in the same step as the batch's prefill chunks (a mixed step, as "
         "chunked prefill runs them): every layer but attention runs on all the step's tokens at once"},
        {"decode_kv_cache", "0", "tokens already in the KV cache of each decoding sequence (with decode_batch)"},
        {"kv_cache_update", "in_place",
         "in_place: the new keys and values are written into the cache's slots (vLLM's paged cache); copy: the "
         "cache is copied with them every step (Hugging Face's dynamic cache, torch.cat)"},
        {"layers", "32", "decoder layers"},
        {"hidden", "4096", "model width"},
        {"heads", "32", "query heads"},
        {"kv_heads", "32", "key/value heads (fewer than heads is grouped-query attention)"},
        {"ffn", "11008", "width of the SwiGLU MLP (of each expert)"},
        {"vocab", "32000", "vocabulary size"},
        {"experts", "0",
         "a mixture of this many SwiGLU experts in place of the MLP (Mixtral); 0: the dense MLP. Routing is taken "
         "as balanced"},
        {"experts_per_token", "2", "experts each token is routed to (top-k)"},
        {"expert_parallel", "false",
         "with tp > 1: the tp ranks hold experts / tp whole experts each and exchange tokens by all-to-all; false: "
         "every expert's width is split tp ways"},
        k_tp_param,
        k_sequence_parallel_param,
        {"attention", "decomposed", "decomposed (matmul, scale, mask, softmax, matmul) or fused (one attention op)"}};
    g.presets["variant"]["13b"] = {
        {"layers", "40"}, {"hidden", "5120"}, {"heads", "40"}, {"kv_heads", "40"}, {"ffn", "13824"}};
    g.presets["variant"]["70b"] = {
        {"layers", "80"}, {"hidden", "8192"}, {"heads", "64"}, {"kv_heads", "8"}, {"ffn", "28672"}};
    // Llama 3 (Meta's model cards and Hugging Face configs): grouped-query attention with 8 KV heads at both
    // sizes, a 128,256-token vocabulary.
    g.presets["variant"]["3-8b"] = {{"layers", "32"},  {"hidden", "4096"}, {"heads", "32"},
                                    {"kv_heads", "8"}, {"ffn", "14336"},   {"vocab", "128256"}};
    g.presets["variant"]["3-70b"] = {{"layers", "80"},  {"hidden", "8192"}, {"heads", "64"},
                                     {"kv_heads", "8"}, {"ffn", "28672"},   {"vocab", "128256"}};
    // Llama 3.2 1B (Hugging Face config meta-llama/Llama-3.2-1B): a draft model for Llama 3's larger ones (the same
    // 128,256-token vocabulary). The model ties its LM head to its embedding; this generator keeps both, so it
    // counts 0.26 B parameters (525 MB in 16-bit) more than the 1.24 B the model has; the LM head is read every
    // step either way.
    g.presets["variant"]["3.2-1b"] = {{"layers", "16"},  {"hidden", "2048"}, {"heads", "32"},
                                      {"kv_heads", "8"}, {"ffn", "8192"},    {"vocab", "128256"}};
    // Mixtral 8x7B (Jiang et al. 2024; Hugging Face config): Mistral-7B's attention with 8 KV heads, 8 experts of
    // width 14,336, 2 per token; 46.7 B parameters.
    g.presets["variant"]["mixtral-8x7b"] = {{"layers", "32"},  {"hidden", "4096"},        {"heads", "32"},
                                            {"kv_heads", "8"}, {"ffn", "14336"},          {"vocab", "32000"},
                                            {"experts", "8"},  {"experts_per_token", "2"}};
    g.presets["mode"]["decode"] = {{"seq", "1"}, {"kv_cache", "2048"}};
    g.build = build_llama;
    return g;
}

}  // namespace tessel
