// The BSP mapper on a tiny IPU (4 tiles), checked against supersteps computed by hand: one matrix product split
// 2 x 2 over the tiles (exchange, compute, sync), the planner's choice of a K split for a matrix-vector product,
// a model too large for the tiles (the error says by how much and which tensor), and the fallbacks to streaming
// memory when the platform has some (weights, then activations the backward pass reads).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/mappers/bsp/bsp_mapper.h"
#include "engine/report/explain/explainer.h"
#include "engine/report/summary.h"
#include "engine/system/partition.h"
#include "engine/workload/load.h"
#include "tests/support/harness.h"

using namespace tessel;
using test::ns;

namespace {

// 1 GHz; tiles as in components_test; the exchange moves 4 B/cycle per tile with a 10-cycle latency and one
// packet per message; a sync takes 100 cycles. 64 KiB per tile, 48 KiB for tensors after the 25% code reserve.
const std::string tiles_yaml = R"(
  tiles:
    kind: ipu_tiles
    params: {width: 2, height: 2, threads: 6, amp_macs_per_cycle: {fp32: 16, fp16: 64},
             vector_ops_per_cycle: {fp32: 2, fp16: 4}, memory: 64KiB, load_bandwidth: 16B/cycle,
             store_bandwidth: 8B/cycle, memory_latency: 0cycles}
  exchange:
    kind: ipu_exchange
    params: {tiles: 4, external_ports: 1, tile_bandwidth: 4B/cycle, external_bandwidth: 64B/cycle, latency: 10cycles,
             packet_bytes: 64KiB, header_bytes: 0B, max_outstanding: 4}
  sync:
    kind: barrier
    params: {latency: 100cycles}
)";

const std::string tiny_yaml = "platform: tiny\nclock: 1GHz\ncomponents:" + tiles_yaml +
                              "connections:\n  - tiles[x,y] -> exchange[x + 2 * y]\nmapper:\n  impl: bsp\n";

const std::string stream_yaml = "platform: tiny_stream\nclock: 1GHz\ncomponents:" + tiles_yaml + R"(
  link:
    kind: chip_link
    params: {lanes: 1, lane_bandwidth: 8GB/s, latency: 100ns, packet_bytes: 4KiB, header_bytes: 0B, max_outstanding: 16}
  ddr:
    kind: hbm
    preset: ddr4_3200
    params: {channels: 1, capacity: 1GiB}
connections:
  - tiles[x,y] -> exchange[x + 2 * y]
  - link[0] -> exchange[4]
  - ddr -> link[1]
mapper:
  impl: bsp
)";

// SystemC elaborates once per process: both platforms are built before the first run.
struct benches {
    test::bench tiny{tiny_yaml, "tiny"};
    test::bench streaming{stream_yaml, "tiny_stream"};
    // A second copy: a bench's statistics (and so the physical-bound check) accumulate over its runs.
    test::bench streaming2{"platform: tiny_stream2" + stream_yaml.substr(stream_yaml.find('\n')), "tiny_stream2"};
    test::bench streaming3{"platform: tiny_stream3" + stream_yaml.substr(stream_yaml.find('\n')), "tiny_stream3"};
    test::bench streaming4{"platform: tiny_stream4" + stream_yaml.substr(stream_yaml.find('\n')), "tiny_stream4"};
    test::bench streaming5{"platform: tiny_stream5" + stream_yaml.substr(stream_yaml.find('\n')), "tiny_stream5"};
    test::bench in_place{"platform: in_place" + tiny_yaml.substr(tiny_yaml.find('\n')), "in_place"};
    // One per reduction run, for the same reason.
    test::bench red[3] = {test::bench{"platform: red0" + tiny_yaml.substr(tiny_yaml.find('\n')), "red0"},
                          test::bench{"platform: red1" + tiny_yaml.substr(tiny_yaml.find('\n')), "red1"},
                          test::bench{"platform: red2" + tiny_yaml.substr(tiny_yaml.find('\n')), "red2"}};
};
benches& b() {
    static benches x;
    return x;
}

std::string workload_file(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::temp_directory_path() / "tessel_ipu_test";
    std::filesystem::create_directories(dir);
    const auto path = dir / (name + ".yaml");
    std::ofstream(path) << text;
    return path.string();
}

bsp_mapper make_mapper(const std::string& opts) {
    param_context ctx;
    bsp_mapper::options o;
    param_decl d(yaml_node::load_string(opts, "mapper"), &ctx, "mapper", "mapper 'bsp'");
    o.declare(d);
    d.finish();
    return bsp_mapper(o);
}

struct outcome {
    mapping m;
    executor::result r;
    run_summary s;
};

outcome run(test::bench& bench, const bsp_mapper& mp, const workload_graph& g) {
    outcome o;
    o.m = mp.map(g, *bench.plat);
    o.r = bench.exec->run(o.m.prog);
    o.s = summarise(*bench.plat, o.r, o.m.prog, g.total().flops, o.m.samples);
    explain_run("bsp", o.m, *bench.plat, o.r, o.s);
    return o;
}

/// The supersteps the mapping recorded (its bsp_record).
const std::vector<bsp_mapper::superstep>& supersteps(const outcome& o) {
    const bsp_record* rec = o.m.record_as<bsp_record>();
    if (!rec) throw std::logic_error("the bsp mapping holds no bsp_record");
    return rec->steps;
}

outcome run(test::bench& bench, const bsp_mapper& mp, const std::string& workload) {
    return run(bench, mp, load_workload(workload, {}));
}

}  // namespace

TEST(bsp_mapper, one_matmul_on_four_tiles_matches_the_supersteps_by_hand) {
    benches& bb = b();
    // C[48,64] = A[48,64] . B[64,64] in fp16, split 2 x 2 (M x N). A starts spread by rows over the 4 tiles (12 rows
    // each); B's home is this split's blocks, each halved along K between the two tiles that use it.
    // Tile (i,j) = tile 2i + j needs A rows 24i..24i+23 (12 of them from its neighbour: 1536 B) and B columns
    // 32j..32j+31 (half from the tile holding the other K half: 2048 B). Each tile sends 1536 B and 2048 B.
    // The mapper emits the A messages first (1->0, 0->1, 3->2, 2->3), then the B messages (2->0, 0->2, 3->1, 1->3),
    // all ready at time 0, so every tile sends its A piece, then its B piece.
    // Exchange, per message: send side at 4 B/cycle (the sender's SRAM reads 16 B/cycle, faster), 10 cycles of
    // latency, receive side at 4 B/cycle, cut through:
    //   A: every send side 0..384; every receive side 10..394.
    //   B: every send side 384..896; it reaches its receiver at 394, whose receive side is free then: 394..906.
    // Compute: 24 x 32 x 64 per tile; the 32 columns over 6 workers, the busiest gets 6: 6 x 24 x 64 = 9216 MACs
    // x 6 / 64 = 864 cycles (operand loads 7168 B / 16 = 448 cycles, hidden). Every tile ends at 906 + 864 = 1770.
    // The sync releases 100 cycles after the last: 1870.
    bsp_mapper mp = make_mapper("{matmul_split: 2x2x1}");
    const auto o =
        run(bb.tiny, mp,
            workload_file("mm",
                          "workload: mm\ntensors:\n  a: {shape: [48, 64], role: input}\n"
                          "  b: {shape: [64, 64], role: weight}\nops:\n  - {name: c, op: matmul, inputs: [a, b]}\n"));
    EXPECT_EQ(o.r.duration(), 1870 * ns);
    ASSERT_EQ(supersteps(o).size(), 1u);
    const auto& st = o.s.details["supersteps"][0];
    EXPECT_NEAR(st["exchange_s"].get<double>(), 906e-9, 1e-15);
    EXPECT_NEAR(st["compute_s"].get<double>(), 864e-9, 1e-15);
    EXPECT_NEAR(st["sync_s"].get<double>(), 100e-9, 1e-15);
    EXPECT_DOUBLE_EQ(st["exchange_bytes"].get<double>(), 4 * (1536 + 2048));
}

TEST(bsp_mapper, a_matrix_vector_product_splits_k) {
    benches& bb = b();
    // y[1,64] = x[1,1024] . W[1024,64]: every split over the 4 tiles reads the same 32 KiB of weights per tile
    // (2048 cycles at 16 B/cycle), so the split that moves the fewest bytes wins. Splitting N sends each tile all of
    // x (2048 B, 512 cycles); splitting K sends it a quarter (512 B, 128 cycles) and costs a reduce-scatter of
    // 64 fp32 partial sums (192 B per tile, 48 cycles) plus a sync: K wins.
    bsp_mapper mp = make_mapper("{}");
    const auto o =
        run(bb.tiny, mp,
            workload_file("mv",
                          "workload: mv\ntensors:\n  x: {shape: [1, 1024], role: input}\n"
                          "  w: {shape: [1024, 64], role: weight}\nops:\n  - {name: y, op: matmul, inputs: [x, w]}\n"));
    ASSERT_FALSE(o.m.details["ops"].empty());
    EXPECT_EQ(o.m.details["ops"][0]["split"].get<std::string>(), "1x1x1x4");
    EXPECT_EQ(supersteps(o).size(), 2u) << "partial products, then their reduce-scatter";
}

TEST(bsp_mapper, a_model_too_large_for_the_tiles_says_by_how_much_and_which_tensor) {
    benches& bb = b();
    // 256 x 512 fp16 weights = 256 KiB; 4 tiles x 48 KiB = 192 KiB: short by 64 KiB, and no streaming memory.
    bsp_mapper mp = make_mapper("{}");
    const std::string w =
        workload_file("big",
                      "workload: big\ntensors:\n  x: {shape: [4, 256], role: input}\n"
                      "  w: {shape: [256, 512], role: weight}\nops:\n  - {name: y, op: matmul, inputs: [x, w]}\n");
    try {
        run(bb.tiny, mp, w);
        FAIL() << "expected an input_error";
    } catch (const input_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("256 KiB"), std::string::npos) << m;
        EXPECT_NE(m.find("192 KiB"), std::string::npos) << m;
        EXPECT_NE(m.find("short by 64 KiB"), std::string::npos) << m;
        EXPECT_NE(m.find("w 256 KiB"), std::string::npos) << m;
        EXPECT_NE(m.find("no streaming memory"), std::string::npos) << m;
    }
    // With streaming memory the same model runs, and the notes say the weights came from there.
    bsp_mapper ms = make_mapper("{}");
    const auto o = run(bb.streaming, ms, w);
    ASSERT_FALSE(o.m.notes.empty());
    EXPECT_NE(o.m.notes[0].find("fallback"), std::string::npos) << o.m.notes[0];
    EXPECT_GE(o.m.details["streamed_bytes"].get<double>(), 256.0 * 1024);
    // Every weight byte crosses the 8 GB/s link: at least 32.8 us.
    EXPECT_GE(o.r.duration(), seconds_to_ticks(256.0 * 1024 / 8e9));
}

TEST(bsp_mapper, an_elementwise_op_that_reads_its_source_for_the_last_time_overwrites_it) {
    benches& bb = b();
    // x: 128 x 512 fp16 = 128 KiB, 32 KiB on each of the 4 tiles, which have 48 KiB each for tensors. relu(x) is x's
    // last reader and runs on x's pieces, so its output overwrites x there: 32 KiB a tile, it fits, and so does
    // relu(y) after it.
    bsp_mapper mp = make_mapper("{}");
    const auto o = run(bb.in_place, mp,
                       workload_file("in_place",
                                     "workload: in_place\ntensors:\n  x: {shape: [128, 512], role: input}\n"
                                     "ops:\n  - {name: y, op: relu, inputs: [x]}\n"
                                     "  - {name: z, op: relu, inputs: [y]}\n"));
    EXPECT_GT(o.r.duration(), 0);
    // Where x is read again later (z = y + x), y needs 32 KiB a tile of its own beside x's: 64 KiB, short by 16 KiB
    // (and this IPU has no streaming memory to send anything to).
    try {
        run(bb.in_place, mp,
            workload_file("not_in_place",
                          "workload: not_in_place\ntensors:\n  x: {shape: [128, 512], role: input}\n"
                          "ops:\n  - {name: y, op: relu, inputs: [x]}\n"
                          "  - {name: z, op: add, inputs: [y, x]}\n"));
        FAIL() << "expected an input_error";
    } catch (const input_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("op 'y'"), std::string::npos) << m;
        EXPECT_NE(m.find("short by 16 KiB"), std::string::npos) << m;
    }
}

TEST(bsp_mapper, the_fallback_streams_only_what_does_not_fit) {
    benches& bb = b();
    // 256 x 512 fp16 (256 KiB) and 512 x 32 fp16 (32 KiB) weights against 192 KiB of tiles: streaming the large one
    // leaves 32 KiB that fits, so only it streams; the small one stays resident and never crosses the link.
    bsp_mapper mp = make_mapper("{}");
    const std::string w = workload_file(
        "two",
        "workload: two\ntensors:\n  x: {shape: [4, 256], role: input}\n"
        "  big: {shape: [256, 512], role: weight}\n  small: {shape: [512, 32], role: weight}\n"
        "ops:\n  - {name: y, op: matmul, inputs: [x, big]}\n  - {name: z, op: matmul, inputs: [y, small]}\n");
    const auto o = run(bb.streaming2, mp, w);
    EXPECT_EQ(o.m.details["streamed_tensors"].get<int>(), 1);
    const double streamed = o.m.details["streamed_bytes"];
    EXPECT_GE(streamed, 256.0 * 1024);
    EXPECT_LT(streamed, (256.0 + 32) * 1024) << "the small weight must not stream";
    bool said = false;
    for (const auto& n : o.m.notes) said = said || n.find("1 of 2 weight and state tensors") != std::string::npos;
    EXPECT_TRUE(said);
}

TEST(bsp_mapper, reductions_split_over_the_tiles_like_every_other_op) {
    benches& bb = b();
    // x[64, 256] fp32 (64 KiB) starts in row bands of 16 rows (16 KiB) on the 4 tiles; a tile holds 48 KiB of
    // tensors. Summing over the rows used to put all of x on the one tile of the 1 KiB output (65 KiB: no fit).
    // Now every tile reduces its own rows to 256 fp32 partials (1 KiB), and a second superstep sums them on 2 tiles
    // (about the square root of the 4 bands), 128 columns each: each receives 3 partial halves of 512 B = 1536 B.
    const std::string x =
        "workload: red\ntensors:\n  x: {shape: [64, 256], role: input}\nparameters: {precision: fp32}\n";
    bsp_mapper cols = make_mapper("{}");
    const auto o = run(
        bb.red[0], cols,
        workload_file("colsum", x + "ops:\n  - {name: s, op: reduce_sum, inputs: [x], axes: [0], keepdims: false}\n"));
    ASSERT_EQ(supersteps(o).size(), 2u);
    EXPECT_EQ(supersteps(o)[0].exchange_bytes, 0) << "each tile reduces the rows it holds";
    EXPECT_EQ(supersteps(o)[1].name, "s combine");
    EXPECT_EQ(supersteps(o)[1].exchange_bytes, 2 * 1536);
    EXPECT_EQ(supersteps(o)[1].tiles, 2u);
    EXPECT_EQ(o.m.details["ops"][0]["reduction"],
              "partials of 4 row bands where the input lies, combined on 2 tile(s)");
    // A mean over everything: 4 partials of one element, summed on one tile (3 x 4 B arrive).
    bsp_mapper all = make_mapper("{}");
    const auto a =
        run(bb.red[1], all,
            workload_file("mean", x + "ops:\n  - {name: m, op: reduce_mean, inputs: [x], keepdims: false}\n"));
    ASSERT_EQ(supersteps(a).size(), 2u);
    EXPECT_EQ(supersteps(a)[1].exchange_bytes, 3 * 4);
    EXPECT_EQ(supersteps(a)[1].tiles, 1u);
    // Over the last axis only: each output element is one input row, so each tile reduces its own 16 rows into
    // its 16 outputs, one superstep with nothing to exchange.
    bsp_mapper last = make_mapper("{}");
    const auto l = run(
        bb.red[2], last,
        workload_file("rowsum", x + "ops:\n  - {name: r, op: reduce_sum, inputs: [x], axes: [1], keepdims: true}\n"));
    ASSERT_EQ(supersteps(l).size(), 1u);
    EXPECT_EQ(supersteps(l)[0].exchange_bytes, 0);
    EXPECT_EQ(l.m.details["ops"][0]["reduction"], "bands of output elements on 4 tiles");
}

TEST(bsp_mapper, bad_options_are_input_errors) {
    benches& bb = b();
    const std::string w =
        workload_file("mm2",
                      "workload: mm2\ntensors:\n  a: {shape: [8, 8], role: input}\n"
                      "  b: {shape: [8, 8], role: weight}\nops:\n  - {name: c, op: matmul, inputs: [a, b]}\n");
    bsp_mapper too_many = make_mapper("{matmul_split: 4x4x1}");
    EXPECT_THROW(run(bb.tiny, too_many, w), input_error);
    bsp_mapper garbled = make_mapper("{matmul_split: two}");
    EXPECT_THROW(run(bb.tiny, garbled, w), input_error);
    EXPECT_THROW(make_mapper("{weights: sometimes}"), input_error);
}

/// y = x . w with w[256, 64] fp16, trained with one Adam step in mixed precision.
static std::string adam_step_file(const std::string& name) {
    return workload_file(name, "workload: " + name +
                                   "\nparameters: {precision: fp16, training: adam}\ntensors:\n"
                                   "  x: {shape: [4, 256], role: input}\n  w: {shape: [256, 64], role: weight}\n"
                                   "ops:\n  - {name: y, op: matmul, inputs: [x, w]}\n");
}

TEST(bsp_mapper, an_optimizer_step_rewrites_streamed_state_in_place_in_slices_that_fit) {
    benches& bb = b();
    // y = x . w with w[256, 64] fp16 (32 KiB), one Adam step in mixed precision: m, v and the fp32 master copy are
    // 64 KiB each, and with weights: streaming all four live in streaming memory. The update reads 224 KiB and
    // writes the same back (in place: the outputs take no tile memory), more than the 4 tiles' free room at once,
    // so it runs in serial slices of rows. Streamed bytes: the forward pass reads w once (32 KiB), the update reads
    // and writes 224 KiB: 480 KiB, all over the 8 GB/s link.
    bsp_mapper mp = make_mapper("{weights: streaming}");
    const std::string w = adam_step_file("adam");
    const auto o = run(bb.streaming3, mp, w);
    EXPECT_DOUBLE_EQ(o.m.details["streamed_bytes"].get<double>(), 480.0 * 1024);
    size_t slices = 0;
    for (const auto& st : o.s.details["supersteps"])
        if (st["name"].get<std::string>().find("w.adam") == 0) ++slices;
    EXPECT_GE(slices, 2u) << "224 KiB of state cannot be on the tiles at once";
    bool said = false;
    for (const auto& n : o.s.notes)
        said = said || n.find("optimizer updates: " + std::to_string(slices) + " supersteps") == 0;
    EXPECT_TRUE(said);
    EXPECT_GE(o.r.duration(), seconds_to_ticks(480.0 * 1024 / 8e9));
}

TEST(bsp_mapper, returned_gradients_leave_the_tiles_for_streaming_memory) {
    benches& bb = b();
    // Four products y1..y4 = x . w of [96, 256] fp16 (48 KiB each) that nothing reads, marked as gradients: the
    // results a pipeline stage's backward program returns for its optimizer program. With w streamed, the tiles'
    // 192 KiB for tensors would have to hold x (48 KiB) and all four (192 KiB) by the end; instead each leaves for
    // streaming memory in a superstep of its own right after its op, 48 KiB each, and frees its tiles.
    bsp_mapper mp = make_mapper("{weights: streaming}");
    std::string text =
        "workload: results\nparameters: {precision: fp16}\ntensors:\n  x: {shape: [96, 256], role: input}\n"
        "  w: {shape: [256, 256], role: weight}\nops:\n";
    for (int i = 1; i <= 4; ++i) text += "  - {name: y" + std::to_string(i) + ", op: matmul, inputs: [x, w]}\n";
    workload_graph g = load_workload(workload_file("results", text), {});
    for (int i = 1; i <= 4; ++i)
        g.tensors()[static_cast<size_t>(g.find_tensor("y" + std::to_string(i)))].grad_of = g.find_tensor("w");
    const auto o = run(bb.streaming4, mp, g);
    int written = 0;
    for (const auto& st : o.s.details["supersteps"]) {
        const std::string name = st["name"].get<std::string>();
        if (name.find(" (to streaming memory)") == std::string::npos) continue;
        ++written;
        EXPECT_EQ(name, "y" + std::to_string(written) + " (to streaming memory)");
        EXPECT_DOUBLE_EQ(st["streamed_bytes"].get<double>(), 48.0 * 1024) << st.dump();
    }
    EXPECT_EQ(written, 4);
    // Every byte written crossed the 8 GB/s link.
    EXPECT_GE(o.r.duration(), seconds_to_ticks(4 * 48.0 * 1024 / 8e9));
}

TEST(bsp_mapper, an_optimizer_program_reads_its_weight_gradients_back_from_streaming_memory) {
    benches& bb = b();
    // The optimizer program of a pipeline stage (the system mapper's split of a training step): the Adam update of
    // w[256, 64] fp16 alone, its gradient an input. With streaming memory in use, that gradient is where the
    // backward program wrote it (write_out above), so the update reads it over the link too: w (32 KiB), its
    // gradient (32 KiB), m, v and the master copy (64 KiB each) in, the four rewritten ones (224 KiB) out: 480 KiB.
    // Were the gradient taken as already on the tiles, 448 KiB.
    bsp_mapper mp = make_mapper("{weights: streaming}");
    const std::string w = adam_step_file("adam_only");
    const workload_graph step = load_workload(w, {});
    std::vector<int> update;
    for (int o = 0; o < static_cast<int>(step.ops().size()); ++o)
        if (step.op(o).phase == op_phase::optimizer) update.push_back(o);
    ASSERT_EQ(update.size(), 1u);
    const workload_graph g = subgraph(step, update, "adam_only.optimizer");
    const int grad = g.op(0).inputs[1];  // (weight, gradient, m, v, master)
    ASSERT_GE(grad, 0);
    ASSERT_EQ(g.tensor(grad).role, tensor_role::input);
    ASSERT_EQ(g.tensor(grad).grad_of, g.find_tensor("w"));
    const auto o = run(bb.streaming3, mp, g);
    EXPECT_DOUBLE_EQ(o.m.details["streamed_bytes"].get<double>(), 480.0 * 1024);
    EXPECT_GE(o.r.duration(), seconds_to_ticks(480.0 * 1024 / 8e9));
}

TEST(bsp_mapper, activations_the_tiles_cannot_hold_wait_for_the_backward_pass_in_streaming_memory) {
    benches& bb = b();
    // Training h = x . w0 (x[128, 8], w0[8, 128]), five relus, y = a5 . w (w[128, 8]); fp16. The backward pass reads
    // x (h's weight gradient), h and a1..a4 (each relu's gradient reads its input), a5 (y's weight gradient) and y
    // (the loss gradient): six [128, 128] tensors of 32 KiB and two of 2 KiB, 196 KiB, more than the 4 tiles hold
    // for tensors (48 KiB each). On the tiles it does not fit; with activations in streaming memory each leaves the
    // tiles after its last forward reader, in a superstep of its own: x after h, h after a1, ..., a5 and y after y.
    std::string text =
        "workload: saved\nparameters: {precision: fp16, training: sgd}\ntensors:\n"
        "  x: {shape: [128, 8], role: input}\n  w0: {shape: [8, 128], role: weight}\n"
        "  w: {shape: [128, 8], role: weight}\nops:\n  - {name: h, op: matmul, inputs: [x, w0]}\n";
    std::string in = "h";
    for (int i = 1; i <= 5; ++i) {
        text += "  - {name: a" + std::to_string(i) + ", op: relu, inputs: [" + in + "]}\n";
        in = "a" + std::to_string(i);
    }
    text += "  - {name: y, op: matmul, inputs: [a5, w]}\n";
    const std::string path = workload_file("saved", text);
    try {
        (void)make_mapper("{activations: tiles}").map(load_workload(path, {}), *bb.streaming5.plat);
        ADD_FAILURE() << "196 KiB of saved activations fit 192 KiB of tiles";
    } catch (const input_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("workload does not fit", 0), 0u) << e.what();
    }
    const auto o = run(bb.streaming5, make_mapper("{}"), path);
    const double saved = 6 * 32.0 * 1024 + 2 * 2.0 * 1024;
    EXPECT_DOUBLE_EQ(o.m.details["spilled_activations"].get<double>(), 8);
    EXPECT_DOUBLE_EQ(o.m.details["spilled_activation_bytes"].get<double>(), saved);
    std::vector<std::string> spills;
    double written = 0;
    for (const auto& st : o.s.details["supersteps"]) {
        const std::string name = st["name"].get<std::string>();
        if (name.find(" (activations to streaming memory)") == std::string::npos) continue;
        spills.push_back(name.substr(0, name.find(' ')));
        written += st["streamed_bytes"].get<double>();
    }
    EXPECT_EQ(spills, (std::vector<std::string>{"h", "a1", "a2", "a3", "a4", "a5", "y"}));
    EXPECT_DOUBLE_EQ(written, saved);
    bool said = false;
    for (const auto& n : o.m.notes) said = said || n.find("activations in streaming memory: 8 tensors, 196 KiB") == 0;
    EXPECT_TRUE(said) << o.m.notes.front();
    // Written and read back over the 8 GB/s link, at least once each.
    EXPECT_GE(o.r.duration(), seconds_to_ticks(2 * saved / 8e9));
}
