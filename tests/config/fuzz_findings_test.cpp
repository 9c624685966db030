// What the fuzzers (fuzz/, scripts/fuzz.sh) found, one test per finding: each used to be undefined behaviour
// (caught by UBSan), an uncaught exception or a run of many seconds, and is now one located message and exit 2.
// The inputs themselves are in fuzz/regressions/, which every fuzzing run replays first.
#include <gtest/gtest.h>

#include "tests/support/cli.h"

using tessel::test::run_tessel;
using tessel::test::write_temp;

namespace {

TEST(fuzz_findings, an_index_beyond_int_is_an_error_not_a_wrapped_number) {
    // Was static_cast<int>(1e20): undefined, in practice INT_MIN, then "outside the grid" by luck.
    const std::string g = write_temp(
        "tessel_fz_index.yaml",
        "program: p\nsteps:\n"
        "  - {id: a, transfer: {from: \"tile[99999999999999999999,0]\", to: \"tile[3,0]\", bytes: 64KiB}}\n");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -g " + g,
        "tessel_fz_index.yaml:3:30: 'tile[99999999999999999999,0]': index '99999999999999999999': 1e+20 is out of "
        "range (at most 2147483647 in magnitude)");
}

TEST(fuzz_findings, a_gather_index_beyond_int64_is_out_of_range_not_undefined) {
    // Was static_cast<int64_t>(9.2e18) while folding a constant Gather: undefined behaviour before the range check.
    EXPECT_TESSEL_ERROR(
        "graph info fuzz/regressions/onnx/gather_index_huge.onnx",
        "gather_index_huge.onnx: node 6 '/Gather_1' (Gather): index 9.223e+18 is out of range for 2 values");
}

TEST(fuzz_findings, a_list_as_a_yaml_key_is_an_error) {
    // YAML's '? [a, b]: v' made yaml-cpp throw a bad conversion out of every loader (an uncaught exception).
    const std::string s = write_temp(
        "tessel_fz_key.yaml", "platform: mesh4x4\nworkload: gemm\n? [axes, x]\n: 1\naxes:\n  workload.m: [64]\n");
    EXPECT_TESSEL_ERROR("sweep " + s + " --out /tmp/tessel_fz_key_out",
                        "tessel_fz_key.yaml:3:3: a key must be a plain name, not a list or a map");
    const std::string w = write_temp("tessel_fz_key_w.yaml", "workload: w\n? {a: 1}\n: 2\nops: []\n");
    EXPECT_TESSEL_ERROR("graph info " + w, "tessel_fz_key_w.yaml:2:3: a key must be a plain name, not a list or a map");
}

TEST(fuzz_findings, a_huge_layer_count_is_refused_before_the_graph_is_built) {
    // Was refused only after 500,000 tensors had been built (1.5 s; 14 s under the sanitizers).
    const std::string w =
        write_temp("tessel_fz_layers.yaml", "workload: l\ngenerator: llama\nparameters: {layers: 100000000}\n");
    EXPECT_TESSEL_ERROR("graph info " + w,
                        "tessel_fz_layers.yaml:3:14: workload parameter 'layers' = '100000000': needs 1e+09 ops or "
                        "more, over the limit "
                        "of 5e+05 "
                        "(--limit ops=N raises it); use fewer");
    EXPECT_TESSEL_ERROR("graph info gpt2 --set layers=100000",
                        "'layers' = '100000': needs 1e+06 ops or more, over the limit of 5e+05");
    // Just under the bound still builds.
    const auto r = run_tessel("graph info gpt2 --set layers=96");
    EXPECT_EQ(r.code, 0) << r.out;
}

TEST(fuzz_findings, a_huge_expert_count_is_refused_before_the_graph_is_built) {
    // Every expert of every layer holds three weights: 4 layers x 100,000 experts was refused only at the
    // 500,000th tensor (2.4 s), in words that blamed the layers.
    const std::string w = write_temp("tessel_fz_experts.yaml",
                                     "workload: m\ngenerator: llama\nparameters: {experts: 100000, layers: 4}\n");
    EXPECT_TESSEL_ERROR("graph info " + w,
                        "tessel_fz_experts.yaml:3:14: workload parameter 'experts' = '100000': needs 1.2e+06 ops or "
                        "more, over the limit of 5e+05 (--limit ops=N raises it); use fewer");
    // Mixtral's 8 experts of 32 layers build.
    const auto r = run_tessel("graph info workloads/mixtral-8x7b.yaml");
    EXPECT_EQ(r.code, 0) << r.out;
}

}  // namespace
