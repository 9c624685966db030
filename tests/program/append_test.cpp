// Joining programs (program::append): how the systems mapper will put per-chip programs side by side. Steps,
// dependencies, works, op names, payloads and SRAM placements move with their program; component ids are
// re-bound.
#include <gtest/gtest.h>

#include "engine/program/program.h"
#include "models/baseline/kernel_device.h"
#include "models/core/grid_span.h"
#include "models/streaming/tsp.h"

using namespace tessel;

namespace {

program chip_program(const std::string& name, std::uint32_t comp) {
    program p;
    p.name = name;
    work w;
    w.macs = 100;
    const std::uint32_t a = p.add_compute(p.intern_op("load"), endpoint{comp, 0, 0}, p.add_work(w), {});
    work w2 = w;
    w2.macs = 200;  // a work of its own (add_work shares a run of identical ones)
    const std::uint32_t b = p.add_compute(p.intern_op(name + "_only"), endpoint{comp, 1, 0}, p.add_work(w2), {a});
    auto in = std::make_shared<tsp::instruction>();
    in->producer[0] = a;
    in->after = a;
    in->name = "uses a";
    p.set_payload(b, in);
    p.add_transfer(p.intern_op("load"), endpoint{comp, 0, 0}, endpoint{comp + 1, 0, 0}, 64, {b});
    return p;
}

}  // namespace

TEST(program_append, steps_dependencies_and_payloads_move_with_their_program) {
    program joined = chip_program("chip0", 3);
    const program second = chip_program("chip1", 3);
    const std::uint32_t off = joined.append(second, [](std::uint32_t c) { return c + 10; });
    ASSERT_EQ(off, 3u);
    ASSERT_EQ(joined.size(), 6u);
    // Op names are interned: "load" once, each program's own op kept.
    EXPECT_EQ(joined.op_names, (std::vector<std::string>{"load", "chip0_only", "chip1_only"}));
    EXPECT_EQ(joined.op_names[joined.steps[4].op], "chip1_only");
    // Components re-bound, the first program untouched.
    EXPECT_EQ(joined.steps[0].at.comp, 3u);
    EXPECT_EQ(joined.steps[3].at.comp, 13u);
    EXPECT_EQ(joined.steps[5].to.comp, 14u);
    // Dependencies point at the appended steps.
    ASSERT_EQ(joined.steps[4].dep_count, 1u);
    EXPECT_EQ(joined.deps_of(4)[0], 3u);
    EXPECT_EQ(joined.deps_of(5)[0], 4u);
    EXPECT_EQ(joined.deps_of(1)[0], 0u);
    // Works are copied and indexed anew.
    EXPECT_EQ(joined.works.size(), 4u);
    EXPECT_EQ(joined.steps[4].work, 3u);
    // The instruction names its producer by step: moved by the offset; the first program's is unchanged.
    const auto* first = payload_as<tsp::instruction>(joined.payload_of(1));
    const auto* moved = payload_as<tsp::instruction>(joined.payload_of(4));
    ASSERT_TRUE(first && moved);
    EXPECT_EQ(first->producer[0], 0u);
    EXPECT_EQ(moved->producer[0], 3u);
    EXPECT_EQ(moved->after, 3u);
    EXPECT_EQ(moved->producer[1], ~0u);
    EXPECT_EQ(payload_as<kernel_desc>(joined.payload_of(4)), nullptr);
}

TEST(program_append, a_kernel_payload_is_shared_not_copied) {
    program a, b;
    work w;
    const std::uint32_t s = b.add_compute(b.intern_op("k"), endpoint{0, 0, 0}, b.add_work(w), {});
    auto k = std::make_shared<kernel_desc>();
    k->name = "gemm";
    b.set_payload(s, k);
    a.append(b);
    EXPECT_EQ(a.payload_of(0), k.get());
}

TEST(program_append, payloads_only_on_compute_steps) {
    program p;
    const std::uint32_t d = p.add_delay(p.intern_op("wait"), 10, {});
    EXPECT_THROW(p.set_payload(d, std::make_shared<kernel_desc>()), std::logic_error);
}

TEST(program_append, spans_stay_shared_and_placements_are_re_bound) {
    // Two steps on one span (two chunks of an op on the same line of PEs) and the op's weights on that line.
    program b;
    work w;
    const std::uint32_t op = b.intern_op("fc1");
    const std::uint32_t wi = b.add_work(w);
    const std::uint32_t line = b.add_payload(std::make_shared<grid_span>(grid_rect{0, 0, 4, 1}));
    const std::uint32_t s0 = b.add_compute(op, endpoint{2, 0, 0}, wi, {});
    const std::uint32_t s1 = b.add_compute(op, endpoint{2, 0, 0}, wi, {s0});
    b.use_payload(s0, line);
    b.use_payload(s1, line);
    b.placements.push_back(placement{2, grid_placement{{0, 0, 4, 1}, 1024, "op 'fc1' (weights)"}});
    program a;
    a.add_delay(a.intern_op("start"), 5, {});
    a.placements.push_back(placement{7, grid_placement{{0, 0, 1, 1}, 8, "a flag"}});
    a.append(b, [](std::uint32_t c) { return c + 10; });
    // One span, carried by both appended steps.
    ASSERT_EQ(a.payloads.size(), 1u);
    EXPECT_EQ(a.steps[1].payload, 0u);
    EXPECT_EQ(a.steps[2].payload, 0u);
    EXPECT_EQ(payload_as<grid_span>(a.payload_of(2))->rect.x1, 4);
    // The first program's placement untouched, the second's on the re-bound component.
    ASSERT_EQ(a.placements.size(), 2u);
    EXPECT_EQ(a.placements[0].comp, 7u);
    EXPECT_EQ(a.placements[1].comp, 12u);
    EXPECT_EQ(a.placements[1].data.what, "op 'fc1' (weights)");
    EXPECT_DOUBLE_EQ(a.placements[1].data.bytes_per_pe, 1024);
    // A payload index past the table is the caller's bug.
    EXPECT_THROW(a.use_payload(2, 5), std::logic_error);
}

TEST(program_works, identical_works_are_stored_once) {
    // Every PCU of an RDU stage, tile after tile, does one of a few works: one copy serves each, wherever it
    // comes again; a different work gets its own entry.
    program p;
    work a, b;
    a.macs = 100;
    b.macs = 100;
    b.bytes_in = 64;
    EXPECT_EQ(p.add_work(a), 0u);
    EXPECT_EQ(p.add_work(a), 0u);
    EXPECT_EQ(p.add_work(b), 1u);
    EXPECT_EQ(p.add_work(a), 0u);
    EXPECT_EQ(p.works.size(), 2u);
    EXPECT_EQ(p.works[1].bytes_in, 64);
    // Works added directly (an append, a reader) are found too, and a table changed behind the index is re-read.
    work c = a;
    c.vector_ops = 7;
    p.works.push_back(c);
    EXPECT_EQ(p.add_work(c), 2u);
    p.works[0] = b;
    EXPECT_EQ(p.add_work(a), 3u);
    EXPECT_EQ(p.add_work(b), 0u);
}
