// The full WSE-2 (platforms/wafer/wse2.yaml: 750 x 994 PEs and routers, all simulated). ResNet-50, BERT-large,
// GPT-2 and a Llama-2-7B decode step map onto it with the platform's default mapper and pass the checks of
// tests/wafer/checks.h (nothing over a PE's 48 KB, every weight placed, each op inside its own rectangle, every
// MAC computed once); which mode each gets follows from its size (Llama-2-7B's 13.5 GB of fp16 weights fit in
// the wafer's 36.6 GB of SRAM, so it is layer-pipelined too). One BERT-large layer runs end to end, no faster
// than the wafer's peak allows. With 40 KiB of each PE reserved, Llama-2-7B no longer fits
// and the layer-pipelined mapper says so and by how much.
#include <gtest/gtest.h>

#include "engine/mappers/mapper.h"
#include "engine/workload/load.h"
#include "models/spatial/wafer_pe_array.h"
#include "tests/support/harness.h"
#include "tests/wafer/checks.h"

using namespace tessel;

namespace {

struct wse2 {
    sim_context sim;
    param_context ctx;
    std::unique_ptr<platform> plat;
    std::unique_ptr<executor> exec;
    wse2() {
        plat = platform::load("platforms/wafer/wse2.yaml", ctx, sim);
        exec = std::make_unique<executor>("exec", *plat);
    }
    const wafer_pe_array& pes() const {
        return dynamic_cast<const wafer_pe_array&>(plat->comp(plat->find_group("pe")->ids.front()));
    }
};

wse2& chip() {
    static wse2 c;
    return c;
}

mapping map_on_wse2(const workload_graph& g, const std::map<std::string, std::string>& sets = {}) {
    param_context ctx;
    for (const auto& [k, v] : sets) ctx.add_override("mapper." + k, v);
    return create_mapper(*chip().plat, ctx)->map(g, *chip().plat);
}

}  // namespace

TEST(wafer_wse2, the_four_models_map_within_every_pe_s_sram) {
    struct model {
        const char* name;
        std::map<std::string, std::string> sets;
    };
    const std::vector<model> models = {
        {"resnet50", {}}, {"bert-large", {}}, {"gpt2", {}}, {"llama2-7b", {{"mode", "decode"}}}};
    for (const auto& md : models) {
        SCOPED_TRACE(md.name);
        const workload_graph g = load_workload(md.name, md.sets);
        const mapping m = map_on_wse2(g);
        EXPECT_EQ(m.details.value("mode", std::string()), "layer-pipelined");
        test::check_wafer_mapping(m, g, chip().pes(), 4096);
    }
}

TEST(wafer_wse2, one_bert_large_layer_runs_on_the_full_fabric) {
    const workload_graph g = load_workload("bert-large", {{"layers", "1"}});
    const mapping m = map_on_wse2(g);
    test::check_wafer_mapping(m, g, chip().pes(), 4096);
    const auto r = chip().exec->run(m.prog);
    const double seconds = ticks_to_seconds(r.duration());
    // At most the peak: 745,500 PEs x 4 fp16 MACs per cycle at 1.1 GHz.
    EXPECT_GE(seconds, g.total().macs / (745500.0 * 4 * 1.1e9));
    EXPECT_GT(r.packets, 0u);
}

TEST(wafer_wse2, llama2_7b_does_not_pipeline_when_its_weights_do_not_fit) {
    // With 40 KiB per PE reserved, 8 KiB is left for data: 745,500 x 8 KiB = 6.1 GB, less than Llama-2-7B's
    // 13.5 GB of weights. Without the fallback that is an error that says so and by how much.
    const workload_graph g = load_workload("llama2-7b", {{"mode", "decode"}});
    try {
        map_on_wse2(g, {{"reserved", "40KiB"}, {"fallback", "none"}});
        FAIL() << "pipelined weights larger than the SRAM left for them";
    } catch (const input_error& e) {
        EXPECT_NE(e.message().find("does not fit"), std::string::npos) << e.message();
        EXPECT_NE(e.message().find(" short"), std::string::npos) << e.message();
    }
}
