// A mapping is a value: map() is const and pure (two calls give the same program, byte for byte as emitted), what
// a mapper planned travels in its typed record (mapping::record_as), and every registered mapper has an explainer
// in the report layer or is listed here as knowingly without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "engine/mappers/mapper.h"
#include "engine/mappers/tsp_mapper.h"
#include "engine/mappers/wafer_common.h"
#include "engine/program/program_emit.h"
#include "engine/report/explain/explainer.h"
#include "engine/workload/load.h"

using namespace tessel;

namespace {

/// A bundled platform and the mapper its `mapper:` section names, built once per test process (SystemC
/// elaborates once: every platform exists before any run).
struct loaded {
    std::unique_ptr<platform> plat;
    std::unique_ptr<mapper> mp;
    loaded(const std::string& file, sim_context& sim, param_context& ctx) {
        plat = platform::load(std::string(TESSEL_SOURCE_DIR) + "/" + file, ctx, sim);
        mp = create_mapper(*plat, ctx);
    }
};

struct benches {
    sim_context sim;
    param_context ctx;
    loaded mesh{"platforms/teaching/mesh4x4.yaml", sim, ctx};
    loaded groq{"platforms/tsp/groqchip1.yaml", sim, ctx};
    loaded wafer{"platforms/wafer/wafer16.yaml", sim, ctx};
};

benches& b() {
    static benches x;
    return x;
}

std::string emitted(const mapping& m, const platform& plat) {
    std::ostringstream out;
    write_emitted_program(m.prog, plat, emit_header{"test", "test", {}}, out);
    return out.str();
}

workload_graph mlp() { return load_workload(std::string(TESSEL_SOURCE_DIR) + "/workloads/mlp.yaml", {}); }

}  // namespace

TEST(explainer, every_registered_mapper_has_an_explainer_or_is_knowingly_without_one) {
    // mesh: its notes and details say all it planned; the generic summary explains its run.
    const std::set<std::string> without = {"mesh"};
    const std::vector<std::string> mappers = mapper_registry::instance().names();
    for (const std::string& name : mappers) {
        const bool has = explainer_registry::instance().find(name) != nullptr;
        EXPECT_EQ(has, !without.count(name)) << "mapper '" << name << "'";
    }
    for (const std::string& name : explainer_registry::instance().names())
        EXPECT_NE(std::find(mappers.begin(), mappers.end(), name), mappers.end())
            << "explainer '" << name << "' has no mapper of its name";
    EXPECT_TRUE(explainer_registry::instance().errors().empty());
    // Only the system's explainer leaves the kernel devices' per-kernel records unread; a mapper without an
    // explainer keeps them, as before.
    EXPECT_FALSE(explainer_reads_kernel_records("system"));
    EXPECT_TRUE(explainer_reads_kernel_records("kernels"));
    EXPECT_TRUE(explainer_reads_kernel_records("mesh"));
}

TEST(explainer, a_mapper_is_named_after_its_registration) {
    EXPECT_EQ(b().mesh.mp->name(), "mesh");
    EXPECT_EQ(b().groq.mp->name(), "tsp");
    EXPECT_EQ(b().wafer.mp->name(), "wafer_pipeline");
}

TEST(explainer, map_is_const_and_gives_the_same_program_twice) {
    const workload_graph g = mlp();
    for (const loaded* l : {&b().mesh, &b().groq, &b().wafer}) {
        const mapper& mp = *l->mp;  // map() through a const mapper: it keeps nothing between calls
        const mapping first = mp.map(g, *l->plat);
        const mapping second = mp.map(g, *l->plat);
        EXPECT_GT(first.prog.size(), 0u) << mp.name();
        EXPECT_EQ(emitted(first, *l->plat), emitted(second, *l->plat)) << mp.name();
        EXPECT_EQ(first.notes, second.notes) << mp.name();
        EXPECT_EQ(first.details, second.details) << mp.name();
    }
}

TEST(explainer, a_record_is_read_back_as_its_family_type) {
    const workload_graph g = mlp();
    const mapping t = b().groq.mp->map(g, *b().groq.plat);
    const tsp_record* rec = t.record_as<tsp_record>();
    ASSERT_NE(rec, nullptr);
    // The record holds what the mapping's details say it predicted, and an op span per scheduled op.
    EXPECT_EQ(rec->predicted_cycles, t.details["predicted_cycles"].get<std::int64_t>());
    EXPECT_FALSE(rec->spans.empty());
    EXPECT_EQ(t.record_as<wafer::plan_report>(), nullptr) << "another family's type reads as none";
    const mapping w = b().wafer.mp->map(g, *b().wafer.plat);
    ASSERT_NE(w.record_as<wafer::plan_report>(), nullptr);
    EXPECT_EQ(w.record_as<wafer::plan_report>()->ops.size(), w.details["ops"].size());
    const mapping m = b().mesh.mp->map(g, *b().mesh.plat);
    EXPECT_EQ(m.record_as<tsp_record>(), nullptr) << "the mesh mapper records nothing";
}
