// The wafer mappers on the teaching wafer (16 x 16 PEs, 1 GHz, 4 fp16 MACs per PE per cycle, MemoryX at 16 GB/s,
// 4 KiB per PE reserved by the mappers), with values worked out by hand:
//   - the layer-pipelined and weight-streaming mappers never place more data on a PE than its SRAM holds, keep
//     every weight somewhere (what they place adds up to the model's weights), keep each op's compute inside the
//     op's own rectangle, and neither lose nor invent a multiply-accumulate;
//   - shrinking the SRAM forces weight streaming, then micro-batches, then an error, and each step is slower,
//     never faster, with the streaming time above its hand-computed MemoryX bound;
//   - a model that does not fit a mode is one input_error that says what and by how much;
//   - the stencil mapper's SpMV sweep takes at least the PE's hand-counted cycles.
// Every platform is built before the first simulation (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>

#include "engine/mappers/mapper.h"
#include "engine/workload/load.h"
#include "models/spatial/wafer_pe_array.h"
#include "tests/support/harness.h"
#include "tests/wafer/checks.h"

using namespace tessel;

namespace {

struct chip {
    sim_context sim;
    param_context ctx;
    std::unique_ptr<platform> plat;
    std::unique_ptr<executor> exec;
    chip(const yaml_node& root, const std::string& name, const std::map<std::string, std::string>& sets) {
        for (const auto& [k, v] : sets) ctx.add_override(k, v);
        plat = std::make_unique<platform>(name.c_str(), root, ctx, sim);
        exec = std::make_unique<executor>((name + "_exec").c_str(), *plat);
    }
    wafer_pe_array& pes() const {
        return dynamic_cast<wafer_pe_array&>(plat->comp(plat->find_group("pe")->ids.front()));
    }
};

// A 4 x 4 wafer without MemoryX, for the error a weight-streaming plan gives without one.
const char* k_no_memoryx = R"(
platform: bare
clock: 1GHz
components:
  pe:
    kind: wafer_pe_array
    params: {width: 4, height: 4}
  fabric:
    kind: mesh_noc
    params: {width: 4, height: 4, link_bandwidth: 4B/cycle, router_latency: 1cycle, link_latency: 0cycles,
             packet_bytes: 4KiB, header_bytes: 0B, routing: {impl: yx}}
connections:
  - pe[x,y] -> fabric[x,y]
mapper:
  impl: wafer_streaming
)";

/// Every chip of this test, built on first use and before any run.
chip& get(const std::string& name) {
    static const std::map<std::string, std::unique_ptr<chip>> all = [] {
        std::map<std::string, std::unique_ptr<chip>> m;
        const yaml_node w16 = yaml_node::load_file("platforms/wafer/wafer16.yaml");
        for (const char* sram : {"48KiB", "16KiB", "12KiB", "4352B", "4224B", "4160B"})
            m[std::string("w16_") + sram] = std::make_unique<chip>(
                w16, std::string("w16_") + sram, std::map<std::string, std::string>{{"pe.sram", sram}});
        m["w16_check"] = std::make_unique<chip>(w16, "w16_check", std::map<std::string, std::string>{});
        m["w16_stencil"] = std::make_unique<chip>(w16, "w16_stencil", std::map<std::string, std::string>{});
        m["bare"] = std::make_unique<chip>(yaml_node::load_string(k_no_memoryx, "bare.yaml"), "bare",
                                           std::map<std::string, std::string>{});
        return m;
    }();
    return *all.at(name);
}

std::unique_ptr<mapper> mapper_for(chip& c, const std::map<std::string, std::string>& sets) {
    param_context ctx;
    for (const auto& [k, v] : sets) ctx.add_override("mapper." + k, v);
    return create_mapper(*c.plat, ctx);
}

struct outcome {
    mapping m;
    double seconds = 0;
    std::string mode;
};

outcome run(chip& c, const workload_graph& g, const std::map<std::string, std::string>& msets = {}) {
    auto mp = mapper_for(c, msets);
    outcome o;
    o.m = mp->map(g, *c.plat);
    o.mode = o.m.details.value("mode", std::string());
    o.seconds = ticks_to_seconds(c.exec->run(o.m.prog).duration());
    return o;
}

// The 4-layer MLP of workloads/mlp.yaml at batch 32, width 512, fp16: 4 x (512 x 512 + 512) parameters.
constexpr double k_mlp_weight_bytes = 4.0 * (512 * 512 + 512) * 2;  // 2,101,248 B
constexpr double k_memoryx_bps = 16e9;

workload_graph mlp() { return load_workload("mlp", {{"batch", "32"}, {"width", "512"}}); }

workload_graph small_bert() {
    return load_workload(
        "bert", {{"layers", "1"}, {"hidden", "128"}, {"heads", "2"}, {"ffn", "512"}, {"vocab", "1000"}, {"seq", "64"}});
}

}  // namespace

TEST(wafer_mapper, never_places_more_on_a_pe_than_it_holds) {
    chip& c = get("w16_check");
    const double reserved = 4096;  // mapper.reserved's default
    std::vector<workload_graph> graphs;
    graphs.push_back(mlp());
    graphs.push_back(small_bert());
    for (const workload_graph& g : graphs) {
        SCOPED_TRACE(g.name);
        auto pipe = mapper_for(c, {});
        const mapping m = pipe->map(g, *c.plat);
        EXPECT_EQ(m.details.value("mode", std::string()), "layer-pipelined");
        test::check_wafer_mapping(m, g, c.pes(), reserved);
        auto stream = mapper_for(c, {{"impl", "wafer_streaming"}});
        const mapping s = stream->map(g, *c.plat);
        EXPECT_EQ(s.details.value("mode", std::string()), "weight streaming");
        test::check_wafer_mapping(s, g, c.pes(), reserved);
        // Streaming keeps only activations on the wafer: the peak of them, spread over the PEs it uses.
        EXPECT_LE(s.details["activation_bytes_per_pe"].get<double>(), 48 * 1024 - reserved);
    }
    // A model far larger than the wafer (BERT-base's 47 MB word embedding alone against 12 MiB of SRAM)
    // falls back to weight streaming, which places only activations.
    const workload_graph big = load_workload("bert-base", {{"layers", "1"}, {"seq", "32"}});
    const mapping m = mapper_for(c, {})->map(big, *c.plat);
    EXPECT_EQ(m.details.value("mode", std::string()), "weight streaming");
    test::check_wafer_mapping(m, big, c.pes(), reserved);
}

TEST(wafer_mapper, shrinking_sram_forces_streaming_and_is_slower_never_faster) {
    const workload_graph g = mlp();
    // 48 KiB and 16 KiB hold the weights (2,101,248 B = 8,208 B per PE on 256 PEs; 16 KiB leaves 12,288 B for
    // data): layer-pipelined.
    const outcome a = run(get("w16_48KiB"), g);
    const outcome b = run(get("w16_16KiB"), g);
    EXPECT_EQ(a.mode, "layer-pipelined");
    EXPECT_EQ(b.mode, "layer-pipelined");
    // 12 KiB leaves 8,192 B per PE, 16 B short of the weights' 8,208: weight streaming, every weight through
    // MemoryX once (>= 131.3 us at 16 GB/s).
    const outcome c = run(get("w16_12KiB"), g);
    EXPECT_EQ(c.mode, "weight streaming");
    EXPECT_NE(c.m.notes.front().find("does not fit"), std::string::npos) << c.m.notes.front();
    EXPECT_GE(c.seconds, k_mlp_weight_bytes / k_memoryx_bps);
    // 4352 B leaves 256 B per PE: the peak activations (x and fc1's output, 2 x 32 x 512 x 2 B = 64 KiB) just
    // fit on 256 PEs, in one pass.
    const outcome d = run(get("w16_4352B"), g);
    EXPECT_EQ(d.mode, "weight streaming");
    EXPECT_EQ(d.m.details["microbatches"].get<int>(), 1);
    // 4224 B leaves 128 B: two micro-batches, each streaming every weight again (>= 262.6 us).
    const outcome e = run(get("w16_4224B"), g);
    EXPECT_EQ(e.mode, "weight streaming");
    EXPECT_EQ(e.m.details["microbatches"].get<int>(), 2);
    EXPECT_GE(e.seconds, 2 * k_mlp_weight_bytes / k_memoryx_bps);
    // Slower, never faster, at every step down.
    EXPECT_LE(a.seconds, b.seconds);
    EXPECT_LT(b.seconds, c.seconds);
    EXPECT_LE(c.seconds, d.seconds);
    EXPECT_LT(d.seconds, e.seconds);
    // And the pipelined run computes at most at the wafer's peak: 33.55 M MACs over 1,024 MACs per ns.
    EXPECT_GE(a.seconds, 32 * 512.0 * 512 * 4 / (256 * 4 * 1e9));
    // 4160 B leaves 64 B: even 16 rows per micro-batch need 128 B per PE: an error that says by how much.
    try {
        mapper_for(get("w16_4160B"), {})->map(g, *get("w16_4160B").plat);
        FAIL() << "mapped activations that do not fit";
    } catch (const input_error& err) {
        const std::string msg = err.message();
        EXPECT_NE(msg.find("128 B per PE"), std::string::npos) << msg;
        EXPECT_NE(msg.find("64 B short"), std::string::npos) << msg;
        EXPECT_NE(msg.find("does not fit"), std::string::npos) << msg;
        EXPECT_EQ(msg.find("a limit of tessel's mapper"), std::string::npos) << msg;  // the wafer's own limit
    }
    // 4224 B with at most one micro-batch: the two that fit are the mapper's cap away, which it says (a system's
    // plan search then tries fewer sequences per microbatch).
    try {
        mapper_for(get("w16_4224B"), {{"impl", "wafer_streaming"}, {"max_microbatches", "1"}})
            ->map(g, *get("w16_4224B").plat);
        FAIL() << "mapped activations that need two micro-batches in one";
    } catch (const input_error& err) {
        const std::string msg = err.message();
        EXPECT_NE(msg.find("does not fit"), std::string::npos) << msg;
        EXPECT_NE(msg.find("with mapper.max_microbatches = 1 micro-batches"), std::string::npos) << msg;
        EXPECT_NE(msg.find("2 micro-batches would fit, a limit of tessel's mapper"), std::string::npos) << msg;
    }
}

TEST(wafer_mapper, a_model_that_does_not_fit_a_mode_says_what_and_by_how_much) {
    chip& c = get("w16_check");
    // Layer-pipelined without the fallback: BERT-base's word embedding (30522 x 768 x 2 B = 46.9 MB) against the
    // wafer's 256 x 44 KiB = 11.5 MB for data.
    const workload_graph big = load_workload("bert-base", {{"layers", "1"}, {"seq", "32"}});
    try {
        mapper_for(c, {{"fallback", "none"}})->map(big, *c.plat);
        FAIL() << "pipelined a model four times the wafer's SRAM";
    } catch (const input_error& e) {
        const std::string msg = e.message();
        EXPECT_NE(msg.find("does not fit"), std::string::npos) << msg;
        EXPECT_NE(msg.find("embeddings.word"), std::string::npos) << msg;
        EXPECT_NE(msg.find("46.88 MB"), std::string::npos) << msg;
        EXPECT_NE(msg.find("weight streaming"), std::string::npos) << msg;
    }
    // With the fallback (the default), the same model runs weight streaming and says why.
    const mapping m = mapper_for(c, {})->map(big, *c.plat);
    ASSERT_FALSE(m.notes.empty());
    EXPECT_NE(m.notes.front().find("does not fit"), std::string::npos) << m.notes.front();
    EXPECT_NE(m.notes.front().find("running weight streaming instead"), std::string::npos) << m.notes.front();
    // Weight streaming needs somewhere to stream from.
    chip& bare = get("bare");
    try {
        mapper_for(bare, {})->map(mlp(), *bare.plat);
        FAIL() << "streamed weights without a MemoryX";
    } catch (const input_error& e) {
        EXPECT_NE(e.message().find("needs a wafer_memoryx"), std::string::npos) << e.message();
    }
    // A stencil grid whose column does not fit a PE: 13 vectors (6 of BiCGStab, 7 diagonals) x 1024 points x
    // 4 B = 52 KiB against 44 KiB: 8 KiB short.
    const workload_graph grid =
        load_workload("stencil", {{"nx", "16"}, {"ny", "16"}, {"nz", "1024"}, {"solver", "bicgstab"}});
    try {
        mapper_for(c, {{"impl", "wafer_stencil"}})->map(grid, *c.plat);
        FAIL() << "placed 52 KiB columns on 48 KiB PEs";
    } catch (const input_error& e) {
        EXPECT_NE(e.message().find("52 KiB per PE"), std::string::npos) << e.message();
        EXPECT_NE(e.message().find("8 KiB short"), std::string::npos) << e.message();
    }
    // With the coefficients in registers the same grid fits: 6 x 4 KiB = 24 KiB.
    const mapping ok = mapper_for(c, {{"impl", "wafer_stencil"}, {"matrix", "constant"}})->map(grid, *c.plat);
    EXPECT_DOUBLE_EQ(ok.details["bytes_per_pe"].get<double>(), 6 * 1024 * 4.0);
    // The stencil mapper runs stencil codes only.
    try {
        mapper_for(c, {{"impl", "wafer_stencil"}})->map(mlp(), *c.plat);
        FAIL() << "stencil-mapped an MLP";
    } catch (const input_error& e) {
        EXPECT_NE(e.message().find("no nx x ny x nz grid"), std::string::npos) << e.message();
    }
}

TEST(wafer_mapper, a_stencil_sweep_takes_at_least_the_hand_counted_cycles) {
    chip& c = get("w16_stencil");
    // One 7-point sweep of a 16 x 16 x 64 fp32 grid: one column of 64 points per PE, cut into 4 z pieces of 16.
    // A piece costs the PE 6 x 16 MACs + 16 adds at 1 fp32 op per cycle = 112 cycles (its SRAM traffic,
    // 16 x 16 x 4 B read at 16 B/cycle = 64 cycles, its halo, 4 x 16 x 4 B in at 4 B/cycle = 64 cycles, and
    // 7 x 16 x 4 B written at 8 B/cycle = 56 cycles, hide under it): 448 cycles for the sweep. Before the
    // first piece the halo crosses the 15 hops of a row: 16 x 4 B at 4 B/cycle = 16 cycles + 15 router cycles.
    // Later pieces' halos arrive while the PE computes.
    const workload_graph g = load_workload("stencil", {{"nx", "16"}, {"ny", "16"}, {"nz", "64"}});
    const outcome o = run(c, g, {{"impl", "wafer_stencil"}});
    EXPECT_EQ(o.mode, "stencil");
    const double ns = 1e-9;
    EXPECT_GE(o.seconds, (448 + 16 + 15) * ns);
    // No upper bound yet: the run takes 1.77 us against 0.49 us counted by hand (the 4 pieces' halo
    // transfers all start at once and share the row links); not yet explained, see the report.
}
