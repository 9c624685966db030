// Workload sources: one source built at many overrides gives what loading at those overrides gives, with the
// shapes and multiply-accumulates worked out by hand; overrides that do not apply fail as on the command line.
#include <gtest/gtest.h>

#include <sstream>

#include "engine/workload/load.h"
#include "engine/workload/source.h"
#include "engine/workload/yaml_workload.h"
#include "tests/support/errors.h"

using namespace tessel;

namespace {

std::string yaml_of(const workload_graph& g) {
    std::ostringstream os;
    write_workload_yaml(g, os);
    return os.str();
}

workload_overrides at_batch(std::int64_t b) {
    workload_overrides o;
    o.batch = b;
    return o;
}

const std::string k_mlp = std::string(TESSEL_SOURCE_DIR) + "/workloads/mlp.yaml";

}  // namespace

TEST(workload_source, one_yaml_source_at_several_batch_sizes) {
    // workloads/mlp.yaml: four linear layers of width 1024, so a batch of b rows is 4 * b * 1024 * 1024
    // multiply-accumulates, and the 4 * (1024 * 1024 + 1024) = 4,198,400 parameters do not depend on b.
    const auto src = make_workload_source(k_mlp);
    for (std::int64_t b : {1, 3, 64, 1000}) {
        const workload_graph g = src->build(at_batch(b));
        EXPECT_DOUBLE_EQ(g.total().macs, 4.0 * static_cast<double>(b) * 1024 * 1024) << b;
        EXPECT_DOUBLE_EQ(g.parameter_count(), 4198400) << b;
        EXPECT_EQ(g.tensor(g.find_tensor("x")).shape, (std::vector<std::int64_t>{b, 1024})) << b;
        EXPECT_EQ(g.tensor(g.find_tensor("y")).shape, (std::vector<std::int64_t>{b, 1024})) << b;
        EXPECT_EQ(g.parameters.at("batch"), std::to_string(b));
        EXPECT_EQ(g.batch, static_cast<double>(b));
        EXPECT_EQ(g.origin, src);
        EXPECT_EQ(g.overrides.batch, b);
    }
    // No override: the file's own batch, 64.
    EXPECT_EQ(src->build({}).batch, 64.0);
}

TEST(workload_source, one_generator_source_scales_with_batch) {
    // A decoder's every op works on each sequence alone, so b sequences are exactly b times the work of one, and
    // the token input is [b, seq].
    const auto src = make_workload_source("gpt2");
    workload_overrides o;
    o.layers = 1;
    o.seq = 16;
    o.batch = 1;
    const double one = src->build(o).total().macs;
    EXPECT_GT(one, 0);
    for (std::int64_t b : {2, 7, 512}) {
        o.batch = b;
        const workload_graph g = src->build(o);
        EXPECT_DOUBLE_EQ(g.total().macs, static_cast<double>(b) * one) << b;
        EXPECT_EQ(g.ops().size(), src->build(o).ops().size());
        EXPECT_EQ(yaml_of(g),
                  yaml_of(load_workload("gpt2", {{"layers", "1"}, {"seq", "16"}, {"batch", std::to_string(b)}})));
    }
}

TEST(workload_source, built_twice_equals_loaded_twice) {
    for (const std::string& spec : {k_mlp, std::string("gpt2"), std::string("llama2-7b")}) {
        const auto src = make_workload_source(spec);
        std::map<std::string, std::string> text = {{"layers", "2"}, {"seq", "8"}};
        if (spec == k_mlp) text = {{"width", "64"}};
        const workload_overrides typed = parse_workload_overrides(text);
        const workload_graph a = src->build(typed), b = src->build(typed);
        const workload_graph la = load_workload(spec, text), lb = load_workload(spec, text);
        EXPECT_EQ(yaml_of(a), yaml_of(la)) << spec;
        EXPECT_EQ(yaml_of(b), yaml_of(lb)) << spec;
        EXPECT_EQ(a.parameters, la.parameters) << spec;
        EXPECT_EQ(a.name, la.name) << spec;
        EXPECT_EQ(a.notes, la.notes) << spec;
    }
}

TEST(workload_source, onnx_source_is_parsed_once_and_built_at_any_batch) {
    // resnet50: 25,557,032 parameters (torchvision); its multiply-accumulates are linear in the batch.
    const auto src = make_workload_source(std::string(TESSEL_SOURCE_DIR) + "/workloads/onnx/resnet50.onnx");
    const workload_graph one = src->build({});
    const workload_graph four = src->build(parse_workload_overrides({{"batch", "4"}}));
    EXPECT_DOUBLE_EQ(one.parameter_count(), 25557032);
    EXPECT_DOUBLE_EQ(four.total().macs, 4 * one.total().macs);
    EXPECT_EQ(four.batch, 4.0);
}

TEST(workload_source, overrides_that_do_not_apply_fail_as_today) {
    const auto mlp = make_workload_source(k_mlp);
    workload_overrides typo;
    typo.other["bacth"] = "4";
    const std::string e = test::error_of([&] { mlp->build(typo); });
    EXPECT_NE(e.find("did you mean 'batch'"), std::string::npos) << e;
    EXPECT_EQ(e, test::error_of([&] { load_workload(k_mlp, {{"bacth", "4"}}); }));
    // A typed override the workload has no parameter for (gemm has m, n, k and no batch).
    const std::string gemm = std::string(TESSEL_SOURCE_DIR) + "/workloads/gemm.yaml";
    const std::string no_batch = test::error_of([&] { make_workload_source(gemm)->build(at_batch(4)); });
    EXPECT_FALSE(no_batch.empty());
    EXPECT_EQ(no_batch, test::error_of([&] { load_workload(gemm, {{"batch", "4"}}); }));
    // A bad value is refused where the parameter is read, with its name.
    workload_overrides zero = at_batch(0);
    EXPECT_EQ(test::error_of([&] { make_workload_source("gpt2")->build(zero); }), test::error_of([&] {
                  load_workload("gpt2", {{"batch", "0"}});
              }));
}

TEST(workload_source, text_overrides_are_typed_once_and_kept_exactly) {
    const std::map<std::string, std::string> text = {{"batch", "512"},      {"seq", "2 * 64"}, {"layers", "007"},
                                                     {"fuse", "true"},      {"tp", "8"},       {"training", "adam"},
                                                     {"precision", "fp32"}, {"kv_cache", "-3"}};
    const workload_overrides o = parse_workload_overrides(text);
    EXPECT_EQ(o.batch, 512);
    EXPECT_EQ(o.tp, 8);
    EXPECT_EQ(o.kv_cache, -3);
    EXPECT_EQ(o.fuse, true);
    EXPECT_EQ(o.training, "adam");
    // Text that is not a plain number stays text, so the resolved parameters keep what the user wrote.
    EXPECT_FALSE(o.seq);
    EXPECT_FALSE(o.layers);
    EXPECT_EQ(o.other.at("seq"), "2 * 64");
    EXPECT_EQ(o.other.at("layers"), "007");
    EXPECT_EQ(o.to_map(), text);
}
