// The parallel plan: declared once (YAML map, --set parallel.KEY=V, describe), strict keys and ranges, and
// validation that names the failed constraint and suggests the nearest valid plans.
#include <gtest/gtest.h>

#include "engine/system/parallel_plan.h"
#include "models/core/yaml_node.h"
#include "tests/support/errors.h"

using namespace tessel;

namespace {

using test::error_of;

parallel_plan read(const std::string& yaml, const std::map<std::string, std::string>& sets = {}) {
    param_context ctx;
    for (const auto& [k, v] : sets) ctx.add_override("parallel." + k, v);
    const yaml_node node = yaml.empty() ? yaml_node{} : yaml_node::load_string(yaml, "run.yaml");
    return read_parallel_plan(node, ctx);
}

/// GPT-3 175B as in the issue: 96 heads, hidden 12288 (ffn 49152), 96 layers, global batch 1536.
plan_target gpt3(std::int64_t chips) {
    plan_target t;
    t.workload = "gpt2";
    t.chips = chips;
    t.batch = 1536;
    t.seq = 2048;
    t.layers = 96;
    t.heads = t.kv_heads = 96;
    t.ffn = 4 * 12288;
    t.splittable = true;
    return t;
}

}  // namespace

TEST(parallel_plan, defaults_yaml_and_set_overrides) {
    const parallel_plan d = read("");
    EXPECT_EQ(d.dp, 1);
    EXPECT_EQ(d.tp, 1);
    EXPECT_EQ(d.pp, 1);
    EXPECT_EQ(d.microbatch, 1);
    EXPECT_EQ(d.interleave, 1);
    EXPECT_EQ(d.schedule, "1f1b");
    EXPECT_EQ(d.recompute, "none");
    EXPECT_FALSE(d.sequence_parallel);
    EXPECT_EQ(d.zero, 0);
    EXPECT_FALSE(d.overlap_grad_reduce);

    // A --set wins over the YAML map.
    const parallel_plan p = read("{dp: 4, tp: 8, pp: 8, schedule: interleaved_1f1b, interleave: 2, recompute: full}",
                                 {{"pp", "16"}, {"sequence_parallel", "true"}, {"zero", "1"}});
    EXPECT_EQ(p.dp, 4);
    EXPECT_EQ(p.tp, 8);
    EXPECT_EQ(p.pp, 16);
    EXPECT_EQ(p.interleave, 2);
    EXPECT_EQ(p.schedule, "interleaved_1f1b");
    EXPECT_EQ(p.recompute, "full");
    EXPECT_TRUE(p.sequence_parallel);
    EXPECT_EQ(p.zero, 1);
    EXPECT_EQ(p.chips(), 4 * 8 * 16);
    EXPECT_EQ(p.chunks(), 32);
}

TEST(parallel_plan, strict_keys_choices_and_ranges) {
    EXPECT_NE(error_of([] { read("{tpp: 2}"); }).find("unknown key 'tpp'"), std::string::npos);
    EXPECT_NE(error_of([] { read("{tpp: 2}"); }).find("did you mean 'tp'"), std::string::npos);
    const std::string sched = error_of([] { read("{schedule: 1f1f}"); });
    EXPECT_NE(sched.find("is not one of: gpipe, 1f1b, interleaved_1f1b"), std::string::npos) << sched;
    EXPECT_NE(error_of([] { read("", {{"zero", "4"}}); }).find("must be at most 3"), std::string::npos);
    EXPECT_NE(error_of([] { read("{dp: 0}"); }).find("must be greater than zero"), std::string::npos);
    EXPECT_NE(error_of([] { read("{tp: 1.5}"); }).find("whole number"), std::string::npos);
    // A --set of a key the plan does not have is left unused, which the command line reports.
    param_context ctx;
    ctx.add_override("parallel.tpp", "2");
    read_parallel_plan(yaml_node{}, ctx);
    ASSERT_EQ(ctx.unused_overrides().size(), 1u);
}

TEST(parallel_plan, describe_lists_every_key_once) {
    std::vector<std::string> names;
    for (const auto& s : describe_parallel_plan()) names.push_back(s.name);
    EXPECT_EQ(names,
              (std::vector<std::string>{"dp", "tp", "pp", "microbatch", "interleave", "schedule", "recompute",
                                        "recompute_layers", "sequence_parallel", "zero", "overlap_grad_reduce"}));
    for (const auto& s : describe_parallel_plan()) EXPECT_FALSE(s.desc.empty()) << s.name;
}

TEST(parallel_plan, chips_mismatch_names_the_product_and_suggests_nearest) {
    parallel_plan p;
    p.dp = 4;
    p.tp = 8;
    p.pp = 8;
    const auto v = plan_violations(p, gpt3(512));
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0], "dp x tp x pp = 4 x 8 x 8 = 256, but the system has 512 chips");
    // Distance = sum of |log2| changes: doubling dp or pp costs 1 each (tp kept is preferred, then pp kept); tp 16
    // also divides the 96 heads and the 49152 feed-forward width.
    const auto near = nearest_valid_plans(p, gpt3(512), 3);
    ASSERT_EQ(near.size(), 3u);
    EXPECT_EQ(near[0].str(), "dp=8 tp=8 pp=8");
    EXPECT_EQ(near[1].str(), "dp=4 tp=8 pp=16");
    EXPECT_EQ(near[2].str(), "dp=4 tp=16 pp=8");
    const std::string e = error_of([&] { validate_plan(p, gpt3(512)); });
    EXPECT_NE(e.find("dp x tp x pp = 4 x 8 x 8 = 256, but the system has 512 chips; nearest valid: dp=8 tp=8 pp=8, "
                     "dp=4 tp=8 pp=16, dp=4 tp=16 pp=8"),
              std::string::npos)
        << e;
    p.dp = 8;
    EXPECT_NO_THROW(validate_plan(p, gpt3(512)));
}

TEST(parallel_plan, each_constraint_is_named) {
    plan_target t = gpt3(8);
    t.heads = t.kv_heads = 12;
    t.ffn = 3072;
    t.layers = 12;
    t.batch = 8;
    t.seq = 1024;
    auto only = [&](const parallel_plan& p) {
        const auto v = plan_violations(p, t);
        EXPECT_EQ(v.size(), 1u);
        return v.empty() ? std::string() : v[0];
    };
    parallel_plan p;
    p.dp = 1;
    p.tp = 8;  // 12 heads: no
    EXPECT_EQ(only(p), "tp = 8 does not divide the 12 attention heads");
    p.tp = 1;
    p.pp = 8;  // 12 layers: not divisible
    EXPECT_EQ(only(p),
              "pp x interleave = 8 x 1 = 8 does not divide the 12 layers (Megatron-LM's rule: every chunk "
              "holds the same number of layers)");
    t.layers = 4;  // fewer layers than chunks
    EXPECT_EQ(only(p), "pp x interleave = 8 x 1 = 8 chunks, but the model has only 4 layers");
    t.layers = 12;
    p.pp = 2;
    p.dp = 4;
    p.microbatch = 3;  // batch 8 / dp 4 = 2 sequences per replica
    EXPECT_EQ(only(p), "microbatch = 3 does not divide batch / dp = 8 / 4 = 2");
    p.microbatch = 1;
    p.interleave = 2;  // needs the interleaved schedule
    EXPECT_EQ(only(p), "interleave = 2 needs schedule interleaved_1f1b, not 1f1b");
    p.schedule = "interleaved_1f1b";
    p.interleave = 3;  // 2 x 3 = 6 chunks of 2 layers; 2 microbatches are a multiple of pp 2: valid
    EXPECT_TRUE(plan_violations(p, t).empty());
    p.dp = 2;
    p.pp = 4;
    p.interleave = 1;
    p.microbatch = 2;  // 8 / 2 / 2 = 2 microbatches, not a multiple of pp = 4
    EXPECT_EQ(only(p),
              "the interleaved schedule needs the microbatches per pipeline (batch / (dp x microbatch) = 2) "
              "to be a multiple of pp = 4");
    parallel_plan s;
    s.dp = 8;
    s.sequence_parallel = true;
    EXPECT_EQ(only(s), "sequence_parallel needs tp > 1 (it splits the sequence over the tp ranks)");
    // A workload without layer tags or tensor-parallel shards (an ONNX model) needs tp = pp = 1.
    plan_target onnx;
    onnx.workload = "model.onnx";
    onnx.chips = 4;
    onnx.batch = 4;
    parallel_plan q;
    q.tp = 2;
    q.pp = 2;
    const auto v = plan_violations(q, onnx);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_NE(v[0].find("'model.onnx' cannot"), std::string::npos);
    EXPECT_NE(v[1].find("'model.onnx' is not"), std::string::npos);
    EXPECT_EQ(nearest_valid_plans(q, onnx, 3).front().str(), "dp=4 tp=1 pp=1");
}

TEST(parallel_plan, target_of_a_generator) {
    // The gpt2 generator at GPT-3 sizes: the plan target reads the resolved parameters.
    const plan_target t = plan_target_of("gpt2",
                                         {{"hidden", "12288"},
                                          {"heads", "96"},
                                          {"layers", "96"},
                                          {"seq", "2048"},
                                          {"context", "2048"},
                                          {"batch", "1536"}},
                                         512);
    EXPECT_EQ(t.batch, 1536);
    EXPECT_EQ(t.layers, 96);
    EXPECT_EQ(t.heads, 96);
    EXPECT_EQ(t.kv_heads, 96);
    EXPECT_EQ(t.ffn, 49152);
    EXPECT_TRUE(t.splittable);
    const plan_target l = plan_target_of("llama", {{"variant", "70b"}, {"layers", "2"}, {"seq", "16"}}, 8);
    EXPECT_EQ(l.kv_heads, 8);
    EXPECT_EQ(l.ffn, 28672);
    EXPECT_EQ(l.layers, 2);
    parallel_plan p;
    p.tp = 8;
    p.pp = 2;  // 16 chips, but the system has 8
    EXPECT_EQ(plan_violations(p, l).size(), 1u);
    p.tp = 16;  // 16 does not divide the 8 key/value heads
    p.pp = 1;
    p.dp = 1;
    EXPECT_EQ(plan_violations(p, l).front(), "dp x tp x pp = 1 x 16 x 1 = 16, but the system has 8 chips");
    EXPECT_EQ(plan_violations(p, l).at(1), "tp = 16 does not divide the 8 key/value heads");
}
