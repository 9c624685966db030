// The rdu mapper never places more work or data on a unit than it holds: on the bundled Plasticine, SN10 and
// SN40L netlists and real models, every section uses each PCU for at most one stage and each PMU for at most
// one stage's bytes (weights, whole operands, input buffers) within its capacity; every compute step of the
// program runs on a PCU of its own stage in its own section; no multiply-accumulate is lost or invented.
// Also: what does not fit says so, with numbers. Mapping only: nothing is simulated here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "engine/mappers/rdu/rdu_mapper.h"
#include "engine/workload/load.h"
#include "tests/support/harness.h"

using namespace tessel;

namespace {

struct loaded {
    sim_context sim;
    param_context ctx;
    std::unique_ptr<platform> plat;
    explicit loaded(const std::string& file) { plat = platform::load(file, ctx, sim); }
};

loaded& chip(const std::string& name) {
    // One platform of each name per process (SystemC module names are unique).
    static std::map<std::string, std::unique_ptr<loaded>> chips;
    auto& c = chips[name];
    if (!c) c = std::make_unique<loaded>("platforms/rdu/" + name + ".yaml");
    return *c;
}

std::unique_ptr<mapper> make_mapper(platform& plat, const std::map<std::string, std::string>& sets = {}) {
    param_context ctx;
    for (const auto& [k, v] : sets) ctx.add_override("mapper." + k, v);
    return create_mapper(plat, ctx);
}

/// Every unit holds at most one stage per section, within its capacity; every stage is placed once.
void check_plan(const rdu_plan& plan, const workload_graph& g) {
    ASSERT_FALSE(plan.sections.empty());
    std::vector<int> placed(plan.stages.size(), 0);
    for (size_t s = 0; s < plan.sections.size(); ++s) {
        const rdu_section& sec = plan.sections[s];
        std::set<int> pcus, pmus;
        double weights = 0;
        for (const rdu_placed& p : sec.stages) {
            const rdu_stage& st = plan.stages[static_cast<size_t>(p.stage)];
            ++placed[static_cast<size_t>(p.stage)];
            EXPECT_EQ(plan.section_of[static_cast<size_t>(p.stage)], static_cast<int>(s));
            for (int u : p.pcus) {
                EXPECT_GE(u, 0);
                EXPECT_LT(u, plan.pcu_count);
                EXPECT_TRUE(pcus.insert(u).second) << "PCU " << u << " holds two stages in section " << s;
            }
            for (int u : p.pmus) {
                EXPECT_GE(u, 0);
                EXPECT_LT(u, plan.pmu_count);
                EXPECT_TRUE(pmus.insert(u).second) << "PMU " << u << " holds two stages in section " << s;
            }
            if (st.computes) {
                EXPECT_GE(p.pcus.size(), 1u) << st.name;
                EXPECT_GE(p.pmus.size(), p.pcus.size()) << st.name << ": every PCU streams from its own PMU";
            } else {
                EXPECT_TRUE(p.pcus.empty()) << st.name;
                EXPECT_GE(p.pmus.size(), 1u) << st.name;
            }
            // What the stage keeps on chip: at least its weights and whole operands; spread over its PMUs it fits.
            double whole = 0;
            for (const auto& in : st.inputs)
                if (in.whole) whole += in.bytes;
            EXPECT_GE(p.resident_bytes + 1e-6, st.weight_bytes + whole) << st.name;
            EXPECT_LE(p.resident_bytes / static_cast<double>(p.pmus.size()),
                      static_cast<double>(plan.pmu_capacity) * (1 + 1e-12))
                << st.name << " puts more on a PMU than it holds";
            weights += st.weight_bytes;
            EXPECT_GE(p.tiles, 1);
            EXPECT_EQ(p.tiles & (p.tiles - 1), 0) << "tiles are a power of two";
        }
        EXPECT_LE(static_cast<int>(pcus.size()), plan.pcu_count);
        EXPECT_LE(weights, static_cast<double>(pmus.size()) * static_cast<double>(plan.pmu_capacity));
        EXPECT_EQ(static_cast<int>(pcus.size()), sec.pcus);
        EXPECT_EQ(static_cast<int>(pmus.size()), sec.pmus);
    }
    for (size_t i = 0; i < placed.size(); ++i)
        EXPECT_EQ(placed[i], 1) << plan.stages[i].name << " placed " << placed[i] << " times";
    // Chunks split columns or batch items: their MACs add up to the op's.
    double macs = 0;
    for (const auto& st : plan.stages) macs += st.whole.macs;
    EXPECT_NEAR(macs, g.total().macs, 1e-9 * g.total().macs);
}

/// The program: every compute step on a PCU of its own stage, in its own section; MACs conserved.
void check_program(const rdu_plan& plan, const mapping& m, const workload_graph& g) {
    std::map<std::string, int> stage_of;
    for (size_t i = 0; i < plan.stages.size(); ++i) stage_of[plan.stages[i].name] = static_cast<int>(i);
    std::map<int, const rdu_placed*> placed;
    for (const auto& sec : plan.sections)
        for (const auto& p : sec.stages) placed[p.stage] = &p;
    double macs = 0;
    size_t computes = 0;
    for (const step& st : m.prog.steps) {
        if (st.kind != step_kind::compute) continue;
        ++computes;
        const auto it = stage_of.find(m.prog.op_names[st.op]);
        ASSERT_NE(it, stage_of.end()) << "compute step of unknown stage " << m.prog.op_names[st.op];
        const rdu_placed& p = *placed.at(it->second);
        bool mine = false;
        for (int u : p.pcus) mine = mine || plan.pcu_ids[static_cast<size_t>(u)] == st.at.comp;
        EXPECT_TRUE(mine) << m.prog.op_names[st.op] << " computes on a PCU it was not given";
        macs += m.prog.works[st.work].macs;
    }
    EXPECT_GT(computes, 0u);
    EXPECT_NEAR(macs, g.total().macs, 1e-6 * g.total().macs);
}

void map_and_check(const std::string& platform_name, const std::string& workload,
                   const std::map<std::string, std::string>& wsets, size_t min_sections = 1) {
    SCOPED_TRACE(platform_name + " / " + workload);
    loaded& c = chip(platform_name);
    const workload_graph g = load_workload(workload, wsets);
    auto mp = make_mapper(*c.plat);
    auto* rdu = dynamic_cast<rdu_mapper*>(mp.get());
    ASSERT_NE(rdu, nullptr);
    const rdu_plan plan = rdu->plan(g, *c.plat);
    check_plan(plan, g);
    EXPECT_GE(plan.sections.size(), min_sections);
    const mapping m = rdu->map(g, *c.plat);
    check_program(plan, m, g);
    EXPECT_FALSE(m.regions.empty()) << "--floorplan gets the placed stages";
}

}  // namespace

TEST(rdu_mapper, plasticine_resnet50_fits_every_unit) {
    // 51 MB of weights against 16 MiB on chip: many sections.
    map_and_check("plasticine", "resnet50", {}, 4);
}

TEST(rdu_mapper, plasticine_gpt2_chunks_the_tied_lm_head) {
    // The 77 MB LM head (the tied token embedding) is more than half of 16 MiB: it is split into column chunks.
    loaded& c = chip("plasticine");
    const workload_graph g = load_workload("gpt2", {{"layers", "1"}, {"seq", "128"}});
    auto mp = make_mapper(*c.plat);
    const rdu_plan plan = dynamic_cast<rdu_mapper&>(*mp).plan(g, *c.plat);
    check_plan(plan, g);
    int chunks = 0;
    for (const auto& st : plan.stages)
        if (st.name.rfind("lm_head#", 0) == 0) ++chunks;
    // 50257 x 768 x 2 B = 77.2 MB over half of 16 MiB (8.39 MB): at least 10 chunks.
    EXPECT_GE(chunks, 10);
}

TEST(rdu_mapper, plasticine_attention_too_big_for_the_chip_splits_its_batch_items_and_its_tiles) {
    // GPT-2 (12 heads of 64) at seq 1024, batch 8, one layer, on Plasticine's 16 MiB of PMUs.
    loaded& c = chip("plasticine");
    auto mp = make_mapper(*c.plat);
    auto& rdu = dynamic_cast<rdu_mapper&>(*mp);
    {
        // Fused attention: its keys and values, needed whole, are 8 x 12 x 1024 x 64 x 2 B = 12 MiB each, and an
        // attention op has no columns to split. It splits its 96 batch items (sequences x heads): with the
        // query's buffers (12 MiB x 2 tiles deep / 16 tiles = 1.5 MiB), ceil(25.5 MiB / 8 MiB) = 4 chunks of 24.
        const workload_graph g =
            load_workload("gpt2", {{"layers", "1"}, {"seq", "1024"}, {"batch", "8"}, {"attention", "fused"}});
        const rdu_plan plan = rdu.plan(g, *c.plat);
        check_plan(plan, g);
        int chunks = 0;
        for (const auto& st : plan.stages)
            if (st.name.rfind("h.0.attn.attention#", 0) == 0) {
                ++chunks;
                EXPECT_TRUE(st.by_batch) << st.name;
                EXPECT_EQ(st.whole.batch, 24) << st.name;
            }
        EXPECT_EQ(chunks, 4);
        check_program(plan, rdu.map(g, *c.plat), g);
    }
    {
        // Decomposed: the scores are 8 x 12 x 1024 x 1024 x 2 B = 192 MiB. Streamed in 16 tiles, two deep, a
        // reader's buffers would take 24 MiB, more than the chip; in 64 tiles 6 MiB, within half of it (32: 12 MiB).
        const workload_graph g = load_workload("gpt2", {{"layers", "1"}, {"seq", "1024"}, {"batch", "8"}});
        const rdu_plan plan = rdu.plan(g, *c.plat);
        check_plan(plan, g);
        int softmax = 0;
        for (const auto& st : plan.stages)
            if (st.name == "h.0.attn.softmax") {
                ++softmax;
                EXPECT_EQ(st.own_tiles, 64);
            }
        EXPECT_EQ(softmax, 1);
        check_program(plan, rdu.map(g, *c.plat), g);
    }
}

TEST(rdu_mapper, plasticine_streams_reductions_and_weight_updates_it_cannot_hold_whole) {
    // GPT-2 (one layer) at seq 1024, batch 2, trained with SGD on Plasticine's 16 MiB of PMUs.
    loaded& c = chip("plasticine");
    auto mp = make_mapper(*c.plat);
    auto& rdu = dynamic_cast<rdu_mapper&>(*mp);
    const workload_graph g =
        load_workload("gpt2", {{"layers", "1"}, {"seq", "1024"}, {"batch", "2"}, {"training", "sgd"}});
    const rdu_plan plan = rdu.plan(g, *c.plat);
    check_plan(plan, g);
    std::map<std::string, const rdu_stage*> by_name;
    for (const auto& st : plan.stages) by_name[st.name] = &st;
    // A bias gradient sums 2,048 tokens into one row: 2,048 x 3,072 x 2 B = 12 MiB for the MLP's, 9 MiB for the
    // attention's, two tiles deep in one tile 24 and 18 MiB, more than the chip. Tiled by its input's rows, in 4
    // tiles (6 and 4.5 MiB, within half the chip; 2 tiles: 12 and 9 MiB, not).
    for (const char* name : {"h.0.mlp.c_fc.grad.dbias.sum_batch", "h.0.attn.c_attn.grad.dbias.sum_batch"}) {
        ASSERT_TRUE(by_name.count(name)) << name;
        EXPECT_EQ(by_name[name]->rows, 2048) << name;
        EXPECT_EQ(by_name[name]->own_tiles, 4) << name;
    }
    // The embedding's gradient and its SGD update read the 50,257 x 768 x 2 B = 77 MB table: held as weights it
    // could never fit; streamed like any input, in row tiles.
    for (const char* name : {"wte.grad", "wte.weight.sgd"}) {
        ASSERT_TRUE(by_name.count(name)) << name;
        const rdu_stage& st = *by_name[name];
        EXPECT_TRUE(st.weight_tensors.empty()) << name;
        EXPECT_EQ(st.weight_bytes, 0.0) << name;
        bool streamed = false;
        for (const auto& in : st.inputs)
            streamed =
                streamed || (!in.whole && g.tensor(in.tensor).name == "wte.weight" && in.bytes == 50257.0 * 768 * 2);
        EXPECT_TRUE(streamed) << name;
    }
    check_program(plan, rdu.map(g, *c.plat), g);
    // At batch 4 the scores' gradient splits its batch items too. A batch chunk's tiles cover its own items, not
    // the rows of its producer's tiles: what flows between them is held whole, a level later (streamed tile by
    // tile it waited on tiles not yet scheduled, an internal error).
    const workload_graph g4 =
        load_workload("gpt2", {{"layers", "1"}, {"seq", "1024"}, {"batch", "4"}, {"training", "sgd"}});
    const rdu_plan plan4 = rdu.plan(g4, *c.plat);
    check_plan(plan4, g4);
    int flows = 0;  // producer -> batch chunk (or back) within a section
    for (const auto& sec : plan4.sections)
        for (const rdu_placed& to : sec.stages)
            for (const rdu_placed& from : sec.stages) {
                const rdu_stage &a = plan4.stages[static_cast<size_t>(from.stage)],
                                &b = plan4.stages[static_cast<size_t>(to.stage)];
                if (!a.by_batch && !b.by_batch) continue;
                bool feeds = false;
                for (const auto& in : b.inputs)
                    for (int r : a.outputs) feeds = feeds || in.tensor == r;
                if (!feeds) continue;
                ++flows;
                EXPECT_GT(to.level, from.level) << a.name << " -> " << b.name;
            }
    EXPECT_GT(flows, 0);
    check_program(plan4, rdu.map(g4, *c.plat), g4);
}

TEST(rdu_mapper, sn10_bert_large_in_sections) {
    // 670 MB of weights against 320 MB on chip.
    map_and_check("sn10", "bert-large", {}, 3);
}

TEST(rdu_mapper, sn40l_llama_decode_and_gpt2) {
    map_and_check("sn40l", "llama2-7b", {{"mode", "decode"}, {"layers", "2"}});
    map_and_check("sn40l", "gpt2", {{"layers", "2"}});
}

/// Two plans are the same: cuts, units, tiles and every prediction, bit for bit.
void expect_same_plan(const rdu_plan& a, const rdu_plan& b) {
    ASSERT_EQ(a.sections.size(), b.sections.size());
    EXPECT_EQ(a.section_of, b.section_of);
    for (size_t k = 0; k < a.sections.size(); ++k) {
        const rdu_section &x = a.sections[k], &y = b.sections[k];
        SCOPED_TRACE("section " + std::to_string(k));
        EXPECT_EQ(x.predicted_total_seconds, y.predicted_total_seconds);
        EXPECT_EQ(x.predicted_seconds, y.predicted_seconds);
        EXPECT_EQ(x.load_agcu, y.load_agcu);
        ASSERT_EQ(x.stages.size(), y.stages.size());
        for (size_t i = 0; i < x.stages.size(); ++i) {
            EXPECT_EQ(x.stages[i].stage, y.stages[i].stage);
            EXPECT_EQ(x.stages[i].tiles, y.stages[i].tiles);
            EXPECT_EQ(x.stages[i].pcus, y.stages[i].pcus);
            EXPECT_EQ(x.stages[i].pmus, y.stages[i].pmus);
            EXPECT_EQ(x.stages[i].tile_seconds, y.stages[i].tile_seconds);
        }
    }
}

TEST(rdu_mapper, recalled_section_costs_give_the_same_plan) {
    // The cut search remembers a candidate section's cost under its shape (stage kinds and how they connect)
    // and recalls it for the same shape elsewhere in the graph: repeated layers pose the same candidates again.
    // Costing every candidate afresh must give the identical plan, and repeated layers must be recalled.
    struct run {
        std::string chip, workload;
        std::map<std::string, std::string> sets;
    };
    const std::vector<run> runs = {
        {"sn40l", "bert-large", {{"layers", "4"}, {"training", "adam"}, {"batch", "8"}}},
        {"sn10", "bert-large", {{"layers", "6"}}},
        {"sn40l", "gpt2", {{"layers", "3"}}},
        {"plasticine", "resnet50", {}},
    };
    for (const run& r : runs) {
        SCOPED_TRACE(r.chip + " " + r.workload);
        loaded& c = chip(r.chip);
        const workload_graph g = load_workload(r.workload, r.sets);
        auto mp = make_mapper(*c.plat);
        const auto& rdu = dynamic_cast<rdu_mapper&>(*mp);
        rdu_search fresh, recalled;
        fresh.recall = false;
        const rdu_plan a = rdu.plan(g, *c.plat, &fresh), b = rdu.plan(g, *c.plat, &recalled);
        expect_same_plan(a, b);
        EXPECT_EQ(fresh.recalled, 0);
        EXPECT_EQ(recalled.costed + recalled.recalled, fresh.costed);  // the same candidates, fewer costed
        if (r.workload != "resnet50") {  // 3 to 6 layers: the first layer's candidates, and the boundaries, are new
            EXPECT_GT(recalled.recalled, 0.3 * static_cast<double>(fresh.costed))
                << "repeated layers were costed afresh";
        }
    }
}

TEST(rdu_mapper, what_does_not_fit_says_by_how_much) {
    loaded& c = chip("plasticine");
    const workload_graph g = load_workload("bert-large", {{"layers", "2"}});
    auto single = make_mapper(*c.plat, {{"mode", "single"}});
    try {
        dynamic_cast<rdu_mapper&>(*single).plan(g, *c.plat);
        FAIL() << "BERT-large does not fit Plasticine as one section";
    } catch (const input_error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("does not fit on 'plasticine' as one section"), std::string::npos) << msg;
        EXPECT_NE(msg.find("mapper.mode=sections"), std::string::npos) << msg;
        EXPECT_NE(msg.find("16 MiB"), std::string::npos) << msg;
    }
    // A column sum of x[16384, 512] fp16 (16 MiB) has one output row: it streams in tiles of its input's rows,
    // the fewest that keep two tiles' buffers within half the chip (4 tiles, 8 MiB). Adding y[1, 8388608] (16 MiB,
    // needed whole by every row) to x[2, 8388608] is beyond the mapper: x streams in rows of the PCU's lanes, but
    // the mapper holds a broadcast operand whole and y alone fills the chip. It says so as its own limit (tessel
    // compare then rows it "not simulated"), not as the chip's.
    {
        const auto path = std::filesystem::temp_directory_path() / "tessel_rdu_colsum.yaml";
        std::ofstream(path) << "workload: colsum\nparameters: {precision: fp16}\ntensors:\n"
                               "  x: {shape: [16384, 512], role: input}\n"
                               "ops:\n  - {name: s, op: reduce_sum, inputs: [x], axes: [0], keepdims: false}\n";
        const rdu_plan plan =
            dynamic_cast<rdu_mapper&>(*make_mapper(*c.plat)).plan(load_workload(path.string(), {}), *c.plat);
        ASSERT_EQ(plan.stages.size(), 1u);
        EXPECT_EQ(plan.stages[0].rows, 16384);
        EXPECT_EQ(plan.stages[0].own_tiles, 4);
    }
    // An Adam update of a flat shard (ZeRO 1 flattens the parameters): w, g, m and v of 5,242,880 fp16 elements,
    // 10 MiB each, one row. Held as weights w is more than half the chip, so all four stream: 40 MiB, two tiles
    // deep 80 MiB. One row cannot be tiled (the mapper gave up); in rows of the PCU's 16 lanes (327,680 of them)
    // it takes the default 16 tiles, 5 MiB of buffers.
    {
        const auto path = std::filesystem::temp_directory_path() / "tessel_rdu_flat_adam.yaml";
        std::ofstream(path) << "workload: flat_adam\nparameters: {precision: fp16}\ntensors:\n"
                               "  w: {shape: [5242880], role: weight}\n  g: {shape: [5242880], role: input}\n"
                               "  m: {shape: [5242880], role: state}\n  v: {shape: [5242880], role: state}\n"
                               "ops:\n  - {name: u, op: adam, inputs: [w, g, m, v], outputs: [w2, m2, v2]}\n";
        const workload_graph flat = load_workload(path.string(), {});
        const auto mp = make_mapper(*c.plat);
        auto& rdu = dynamic_cast<rdu_mapper&>(*mp);
        const rdu_plan plan = rdu.plan(flat, *c.plat);
        ASSERT_EQ(plan.stages.size(), 1u);
        EXPECT_EQ(plan.stages[0].rows, 5242880 / 16);
        EXPECT_EQ(plan.stages[0].own_tiles, 16);
        EXPECT_EQ(plan.stages[0].inputs.size(), 4u);
        check_plan(plan, flat);
        check_program(plan, rdu.map(flat, *c.plat), flat);
    }
    {
        const auto path = std::filesystem::temp_directory_path() / "tessel_rdu_broadcast.yaml";
        std::ofstream(path) << "workload: broadcast\nparameters: {precision: fp16}\ntensors:\n"
                               "  x: {shape: [2, 8388608], role: input}\n  y: {shape: [1, 8388608], role: input}\n"
                               "ops:\n  - {name: s, op: add, inputs: [x, y]}\n";
        try {
            dynamic_cast<rdu_mapper&>(*make_mapper(*c.plat)).plan(load_workload(path.string(), {}), *c.plat);
            FAIL() << "16 MiB needed whole and two rows of 16 MiB do not fit 16 MiB";
        } catch (const input_error& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find("op 's' is more than one section of 'plasticine' can hold"), std::string::npos) << msg;
            EXPECT_NE(msg.find("a limit of tessel's mapper, not of the chip"), std::string::npos) << msg;
        }
    }
    auto bad_tier = make_mapper(*c.plat, {{"weights_tier", "hbm"}});
    try {
        dynamic_cast<rdu_mapper&>(*bad_tier).map(g, *c.plat);
        FAIL() << "Plasticine has no HBM";
    } catch (const input_error& e) {
        EXPECT_NE(std::string(e.what()).find("no memory 'hbm' behind the AGCUs"), std::string::npos) << e.what();
    }
}
