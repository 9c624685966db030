// The RDU mapper's off-chip layout of the tensors stored between sections (docs/platforms/rdu.md, step 7): reuse
// over their lifetimes where they do not fit at once, spilling to the next memory what does not fit while live.
// Four whole training steps of a 2-layer GPT-2 and seven of a 2-socket system (about 45 s): a slow test, left out of
// the sanitizer pass, whose allocator is tested there by tests/mappers/toolkit_test.cpp.
#include <gtest/gtest.h>

#include "tests/support/cli.h"

#include <nlohmann/json.hpp>

namespace {

nlohmann::json run_json(const std::string& args) {
    const tessel::test::cli_result r = tessel::test::run_tessel("run --json " + args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.out;
    if (r.code != 0) return {};
    return nlohmann::json::parse(r.out);
}

}  // namespace

// Tensors stored between sections (a 2-layer GPT-2 training step on the SN40L: 749.9 MB of weights and state,
// 1.251 GB stored between sections, at most 973.9 MB of it live at once) share HBM over their lifetimes once they
// do not fit in it at once, and spill to DDR only what does not fit while live. With 1.9 GB of HBM all of them
// still fit (750 MB + 974 MB), at the time of the unbounded HBM within the bank effects of moved addresses; with
// 1.2 GB part spills, slower; with all of them in DDR (what the whole-program layout did at 1.9 GB), slower still.
TEST(rdu_memory_tiers, tensors_between_sections_reuse_hbm_over_their_lifetimes_and_spill_the_rest) {
    const std::string base =
        "-p platforms/rdu/sn40l.yaml -w gpt2 --set workload.layers=2 "
        "--set workload.training=adam ";
    const auto roomy = run_json(base);
    const auto fits_live = run_json(base + "--set hbm.capacity=1.9GB");
    const auto spills = run_json(base + "--set hbm.capacity=1.2GB");
    const auto in_ddr = run_json(base + "--set hbm.capacity=1.9GB --set mapper.activations_tier=ddr");
    for (const auto* j : {&roomy, &fits_live, &spills, &in_ddr}) ASSERT_FALSE(j->is_null());
    const auto note = [](const nlohmann::json& j) {
        for (const auto& n : j["notes"])
            if (n.get<std::string>().rfind("off-chip memory:", 0) == 0) return n.get<std::string>();
        return std::string();
    };
    EXPECT_EQ(roomy["mapping"]["activations_tier"], "hbm");
    EXPECT_EQ(note(roomy).find("reused"), std::string::npos) << "what fits at once keeps a block each";
    EXPECT_EQ(fits_live["mapping"]["activations_tier"], "hbm");
    EXPECT_NE(note(fits_live).find("reused over their lifetimes: at most 973.9 MB at once"), std::string::npos)
        << note(fits_live);
    EXPECT_EQ(spills["mapping"]["activations_tier"], "hbm+ddr");
    EXPECT_NE(note(spills).find("in hbm ("), std::string::npos) << note(spills);
    EXPECT_EQ(in_ddr["mapping"]["activations_tier"], "ddr");
    const double t_roomy = roomy["sim_time_s"], t_live = fits_live["sim_time_s"];
    EXPECT_NEAR(t_live, t_roomy, 0.01 * t_roomy);
    EXPECT_GT(spills["sim_time_s"].get<double>(), 1.2 * t_live);
    EXPECT_GT(in_ddr["sim_time_s"].get<double>(), spills["sim_time_s"].get<double>());
}

// A system run says what its chips stored in a slower memory, per chip and iteration: two SN40L sockets, data
// parallel, the same GPT-2 with HBM cut to 1.2 GB; none in the full HBM.
TEST(rdu_memory_tiers, a_system_run_reports_what_its_chips_stored_in_a_slower_memory) {
    const std::string base =
        "-p platforms/systems/sn40l_node.yaml --set sockets=2 --set parallel.dp=2 -w gpt2 "
        "--set workload.layers=2 --set workload.training=adam --set workload.batch=2 ";
    const auto cut = run_json(base + "--set rdu.hbm.capacity=1.2GB");
    const auto full = run_json(base);
    ASSERT_FALSE(cut.is_null());
    ASSERT_FALSE(full.is_null());
    EXPECT_EQ(full["parallel"]["slower_memory_bytes"].get<double>(), 0.0);
    const double slower = cut["parallel"]["slower_memory_bytes"];
    EXPECT_GT(slower, 0.0);
    bool noted = false;
    for (const auto& n : cut["notes"])
        noted = noted || n.get<std::string>().rfind("tensors stored between sections in a slower memory: ", 0) == 0;
    EXPECT_TRUE(noted) << cut["notes"].dump();
    for (const auto& n : full["notes"]) EXPECT_EQ(n.get<std::string>().find("slower memory"), std::string::npos) << n;
    EXPECT_GT(cut["sim_time_s"].get<double>(), full["sim_time_s"].get<double>());
}

// A chip's passes run one after another, and its memory holds the whole program's weights, gradients and optimizer
// state all the while: each pass's layout leaves room in HBM for what it does not hold itself (the forward pass of
// a data-parallel GPT: the gradients and the Adam state, as the plan's memory model counts them). A layer sample
// (mapper.layers_of) leaves its model's, so that it is as short of HBM as the model: 1 and 2 layers of a 4-layer
// GPT-2 estimate its iteration (the two runs' difference counted for the other layers) within 5% with HBM cut to
// 1.2 GB, where most stored tensors go to DDR.
TEST(rdu_memory_tiers, a_chips_passes_leave_room_for_what_the_rest_of_its_program_keeps) {
    const std::string base =
        "-p platforms/systems/sn40l_node.yaml --set sockets=2 --set parallel.dp=2 -w gpt2 "
        "--set workload.training=adam --set workload.batch=2 ";
    const auto full = run_json(base + "--set workload.layers=4");
    ASSERT_FALSE(full.is_null());
    const auto& stage = full["parallel"]["memory"]["stages"][0];
    const double update = stage["gradients_bytes"].get<double>() + stage["optimizer_state_bytes"].get<double>();
    EXPECT_GT(update, 0.0);
    EXPECT_DOUBLE_EQ(full["parallel"]["kept_for_program_bytes"].get<double>(), update);
    // A sample keeps the model's, not its own fewer layers': the gradients, the Adam state and the weights of the
    // layers it leaves out.
    const auto sample_full = run_json(base + "--set workload.layers=1 --set mapper.layers_of=4");
    ASSERT_FALSE(sample_full.is_null());
    const double left_out = stage["weights_bytes"].get<double>() -
                            sample_full["parallel"]["memory"]["stages"][0]["weights_bytes"].get<double>();
    EXPECT_GT(left_out, 0.0);
    EXPECT_DOUBLE_EQ(sample_full["parallel"]["kept_for_program_bytes"].get<double>(), update + left_out);

    const std::string cut = base + "--set rdu.hbm.capacity=1.2GB ";
    const auto whole = run_json(cut + "--set workload.layers=4");
    const auto one = run_json(cut + "--set workload.layers=1 --set mapper.layers_of=4");
    const auto two = run_json(cut + "--set workload.layers=2 --set mapper.layers_of=4");
    for (const auto* j : {&whole, &one, &two}) ASSERT_FALSE(j->is_null());
    const double kept = whole["parallel"]["kept_for_program_bytes"];
    EXPECT_GT(kept, 0.0);
    EXPECT_LE(kept, update);  // as much as HBM has room for beside the pass's own weights
    bool noted = false;
    for (const auto& n : whole["notes"])
        noted = noted || n.get<std::string>().find("kept for the rest of the chip program") != std::string::npos;
    EXPECT_TRUE(noted) << whole["notes"].dump();
    const double t1 = one["sim_time_s"], t2 = two["sim_time_s"], t4 = whole["sim_time_s"];
    EXPECT_NEAR(t1 + 3 * (t2 - t1), t4, 0.05 * t4);
}
