// The dense generators: one GEMM, and a multi-layer perceptron of chained GEMMs with activations.
#include "engine/workload/generators.h"
#include "engine/workload/layers.h"

namespace tessel {

namespace {

workload_graph build_gemm(const workload_params& p) {
    const std::int64_t batch = p.positive("batch"), m = p.positive("m"), n = p.positive("n"), k = p.positive("k");
    graph_builder b("gemm", p.precision());
    const int a = b.input("a", batch == 1 ? shape_t{m, k} : shape_t{batch, m, k});
    const int w = b.weight("b", {k, n});
    b.add1("matmul", "c", {a, w});
    return b.finish();
}

workload_graph build_mlp(const workload_params& p) {
    const std::int64_t batch = p.positive("batch"), layers = p.repeats("layers", 1);  // one matmul per layer at least
    const std::int64_t in = p.positive("input"), hidden = p.positive("hidden"), out = p.positive("output");
    const std::string act = p.choice("activation", {"relu", "gelu", "silu", "tanh", "sigmoid"});
    const bool bias = p.boolean("bias");
    graph_builder b("mlp", p.precision());
    int x = b.input("x", {batch, in});
    for (std::int64_t l = 1; l <= layers; ++l) {
        const std::string name = "fc" + std::to_string(l);
        x = linear(b, name, x, l == layers ? out : hidden, bias);
        if (l < layers) x = b.add1(act, "act" + std::to_string(l), {x});
    }
    return b.finish();
}

}  // namespace

generator_info gemm_generator() {
    generator_info g;
    g.name = "gemm";
    g.doc = "one matrix product c[m, n] = a[m, k] x b[k, n] (a batch of them when batch > 1); b is a weight";
    g.params = {{"batch", "1", "independent products sharing b (a becomes [batch, m, k])"},
                {"m", "512", "rows of a and c"},
                {"n", "512", "columns of b and c"},
                {"k", "512", "columns of a, rows of b (the reduction)"}};
    g.build = build_gemm;
    return g;
}

generator_info mlp_generator() {
    generator_info g;
    g.name = "mlp";
    g.doc = "a multi-layer perceptron: `layers` linear layers with an activation between them";
    g.params = {{"batch", "64", "rows of the input"},
                {"input", "1024", "input features"},
                {"hidden", "1024", "width of the hidden layers"},
                {"output", "1024", "output features"},
                {"layers", "4", "number of linear layers (at least 1)"},
                {"activation", "relu", "relu, gelu, silu, tanh or sigmoid"},
                {"bias", "true", "linear layers add a bias"}};
    g.build = build_mlp;
    return g;
}

}  // namespace tessel
