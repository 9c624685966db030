// A system's chip programs take the chip mapper's coarse form when the whole iteration's fine form would pass the
// chip's own threshold (mapper::coarse_above), as one chip's run of that size does, though each piece alone is
// small enough to map fine (engine/system/system_mapper.cpp). A slow test: the fine run takes about 10 s.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "tests/support/run_summary.h"

namespace {

nlohmann::json run_json(const std::string& args) {
    return tessel::test::run_summary("-p platforms/systems/sn40l_node.yaml " + args);
}

}  // namespace

TEST(coarse_iteration_slow, an_sn40l_iteration_whose_fine_form_is_large_maps_coarse_as_one_chip_would) {
    // Each piece of the iteration is far below rdu.mapper.coarse_above, so each alone maps fine; when the
    // iteration's pieces together (eight microbatches of a layer's passes) pass the threshold, the whole iteration
    // is coarse, as one chip's run of that size would be: fewer steps and packets, and a note says why.
    const std::string args =
        "-w gpt2 --set workload.training=adam --set workload.precision=bf16 --set workload.layers=1 "
        "--set workload.hidden=512 --set workload.heads=8 --set workload.seq=256 --set workload.batch=8 "
        "--set parallel.tp=8 ";
    const auto fine = run_json(args);
    const auto coarse = run_json(args + "--set rdu.mapper.coarse_above=1e5");
    ASSERT_FALSE(fine.is_null());
    ASSERT_FALSE(coarse.is_null());
    auto says_coarse = [](const nlohmann::json& j) {
        for (const auto& n : j["notes"])
            if (n.get<std::string>().find("above the chip's rdu.mapper.coarse_above") != std::string::npos) return true;
        return false;
    };
    EXPECT_FALSE(says_coarse(fine));
    EXPECT_TRUE(says_coarse(coarse));
    EXPECT_LT(coarse["steps"].get<double>() * 10, fine["steps"].get<double>());
    EXPECT_LT(coarse["packets"].get<double>() * 10, fine["packets"].get<double>());
    // Within 10%: the coarse form's error grows as a run shrinks (7.1% on docs/systems.md's 2-layer GPT).
    EXPECT_NEAR(coarse["sim_time_s"].get<double>(), fine["sim_time_s"].get<double>(),
                0.1 * fine["sim_time_s"].get<double>());
    // The same layer as a sample of a 40-layer model (mapper.layers_of) maps as the model would: coarse.
    EXPECT_TRUE(says_coarse(run_json(args + "--set mapper.layers_of=40")));
}
