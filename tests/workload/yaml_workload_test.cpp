// The YAML workload format: the shipped examples, parameters and overrides, strict keys with locations,
// shape errors, cycles, and the writer that `tessel import` uses reading back to the same graph.
#include <gtest/gtest.h>

#include <sstream>

#include "engine/workload/load.h"
#include "engine/workload/passes.h"
#include "engine/workload/shape_inference.h"
#include "engine/workload/yaml_workload.h"
#include "workload_test_util.h"

using namespace tessel;

namespace {

workload_graph from_text(const std::string& text, const std::map<std::string, std::string>& overrides = {}) {
    return load_workload_yaml_text(text, "test.yaml", overrides);
}

const std::string mlp2 = R"(workload: mlp2
parameters:
  batch: 8
  width: 256
  hidden: 2 * width
tensors:
  x:  {shape: [batch, width], role: input}
  w1: {shape: [width, hidden], role: weight}
  w2: {shape: [hidden, width], role: weight}
ops:
  - {name: y,  op: matmul, inputs: [h, w2]}
  - {name: fc, op: matmul, inputs: [x, w1]}
  - {name: h,  op: gelu,   inputs: [fc]}
)";

}  // namespace

TEST(yaml_workload, shipped_gemm_and_mlp) {
    const auto gemm = load_workload("workloads/gemm.yaml", {});
    ASSERT_EQ(gemm.ops().size(), 1u);
    EXPECT_EQ(gemm.tensor(gemm.op(0).outputs[0]).shape, (shape_t{512, 512}));
    EXPECT_DOUBLE_EQ(gemm.total().flops, 2.0 * 512 * 512 * 512);
    EXPECT_DOUBLE_EQ(gemm.total().bytes_read(), 2 * 512 * 512 * 2.0);
    EXPECT_DOUBLE_EQ(gemm.parameter_count(), 512 * 512);
    EXPECT_EQ(gemm.op(0).compute_type, dtype::fp16);
    const auto mlp = load_workload("workloads/mlp.yaml", {});
    EXPECT_EQ(mlp.ops().size(), 7u);
    EXPECT_DOUBLE_EQ(mlp.total().flops, 4 * (2.0 * 64 * 1024 * 1024 + 64 * 1024) + 3 * 64 * 1024);
    EXPECT_EQ(mlp.graph_outputs().size(), 1u);
    EXPECT_EQ(mlp.tensor(mlp.graph_outputs()[0]).name, "y");
}

TEST(yaml_workload, parameters_expressions_and_overrides) {
    const auto g = from_text(mlp2);
    // Ops may be listed in any order; shapes follow from the inputs; `hidden` is an expression.
    EXPECT_EQ(g.tensor(g.find_tensor("fc")).shape, (shape_t{8, 512}));
    EXPECT_DOUBLE_EQ(g.total().macs, 2 * 8.0 * 256 * 512);
    EXPECT_DOUBLE_EQ(g.total().flops, 2 * g.total().macs + 5 * 8 * 512);
    EXPECT_EQ(g.parameters.at("hidden"), "512");
    const auto big = from_text(mlp2, {{"batch", "32"}, {"width", "128"}, {"precision", "bf16"}});
    EXPECT_DOUBLE_EQ(big.total().macs, 2 * 32.0 * 128 * 256);
    EXPECT_EQ(big.tensor(big.find_tensor("x")).type, dtype::bf16);
    EXPECT_EQ(big.op(0).compute_type, dtype::bf16);
    const std::string e = test::error_of([] { from_text(mlp2, {{"btach", "4"}}); });
    EXPECT_NE(e.find("--set workload.btach=4"), std::string::npos) << e;
    EXPECT_NE(e.find("has no parameter 'btach' (did you mean 'batch'?)"), std::string::npos) << e;
    EXPECT_NE(e.find("batch, width, hidden, precision, training, fuse"), std::string::npos) << e;
}

TEST(yaml_workload, unknown_keys_name_file_line_column_and_suggest) {
    const std::string text = R"(workload: w
tensors:
  x: {shape: [4, 3, 32, 32], role: input}
  w: {shape: [8, 3, 3, 3], role: weight}
ops:
  - {name: conv, op: conv2d, inputs: [x, w], strides: 2}
)";
    const std::string e = test::error_of([&] { from_text(text); });
    EXPECT_NE(e.find("test.yaml:6:46: unknown key 'strides' in op 'conv' (conv2d) (did you mean 'stride'?)"),
              std::string::npos)
        << e;
    const std::string top = test::error_of([] { from_text("workload: w\nopz: []\n"); });
    EXPECT_NE(top.find("test.yaml:2:1: unknown key 'opz' in workload file (did you mean 'ops'?)"), std::string::npos)
        << top;
    const std::string tk = test::error_of([] { from_text("tensors:\n  x: {shap: [1], role: input}\nops: []\n"); });
    EXPECT_NE(tk.find("test.yaml:2:7: unknown key 'shap' in tensor 'x' (did you mean 'shape'?)"), std::string::npos)
        << tk;
    const std::string op = test::error_of(
        [] { from_text("tensors:\n  x: {shape: [4], role: input}\nops:\n  - {name: r, op: rleu, inputs: [x]}\n"); });
    EXPECT_NE(op.find("test.yaml:4:19: unknown op type 'rleu' (did you mean 'relu'?)"), std::string::npos) << op;
    const std::string tn = test::error_of(
        [] { from_text("tensors:\n  x: {shape: [4], role: input}\nops:\n  - {name: r, op: relu, inputs: [xx]}\n"); });
    EXPECT_NE(tn.find("test.yaml:4:34: "), std::string::npos) << tn;
    EXPECT_NE(tn.find("unknown tensor 'xx' (did you mean 'x'?)"), std::string::npos) << tn;
    const std::string ex = test::error_of(
        [] { from_text("parameters: {batch: 4}\ntensors:\n  x: {shape: [bacth, 2], role: input}\nops: []\n"); });
    EXPECT_NE(ex.find("test.yaml:3:15: tensor 'x' shape: 'bacth': unknown variable 'bacth'"), std::string::npos) << ex;
}

TEST(yaml_workload, shape_errors_name_the_op_and_both_shapes) {
    const std::string text = R"(tensors:
  x:  {shape: [64, 1024], role: input}
  w2: {shape: [512, 1024], role: weight}
ops:
  - {name: fc2, op: matmul, inputs: [x, w2]}
)";
    const std::string e = test::error_of([&] { from_text(text); });
    EXPECT_NE(e.find("test.yaml:5:5: op 'fc2' (matmul): inner dimensions differ: a 'x' (64x1024) has K = 1024, b 'w2' "
                     "(512x1024) has K = 512"),
              std::string::npos)
        << e;
    const std::string declared = R"(tensors:
  x:  {shape: [4, 8], role: input}
  y:  {shape: [4, 9]}
ops:
  - {name: r, op: relu, inputs: [x], outputs: [y]}
)";
    const std::string d = test::error_of([&] { from_text(declared); });
    EXPECT_NE(d.find("output 'y' is declared 4x9 but the op produces 4x8"), std::string::npos) << d;
    const std::string bc = test::error_of([] {
        from_text(
            "tensors:\n  a: {shape: [4, 8], role: input}\n  b: {shape: [3], role: input}\nops:\n  - {name: s, op: add, "
            "inputs: [a, b]}\n");
    });
    EXPECT_NE(bc.find("shapes 4x8 and 'b' (3) do not broadcast"), std::string::npos) << bc;
    const std::string rs = test::error_of([] {
        from_text(
            "tensors:\n  a: {shape: [4, 8], role: input}\nops:\n  - {name: s, op: reshape, inputs: [a], shape: [5, "
            "-1]}\n");
    });
    EXPECT_NE(rs.find("cannot reshape 'a' (4x8)"), std::string::npos) << rs;
    const std::string src =
        test::error_of([] { from_text("tensors:\n  a: {shape: [4]}\nops:\n  - {name: s, op: relu, inputs: [a]}\n"); });
    EXPECT_NE(src.find("test.yaml:2:3: tensor 'a' is read by op 's' but no op produces it"), std::string::npos) << src;
}

TEST(yaml_workload, a_cycle_is_named) {
    const std::string text = R"(tensors:
  x: {shape: [4], role: input}
ops:
  - {name: a, op: add, inputs: [x, c]}
  - {name: b, op: relu, inputs: [a]}
  - {name: c, op: relu, inputs: [b]}
)";
    const std::string e = test::error_of([&] { from_text(text); });
    EXPECT_NE(e.find("has a cycle: a -> b -> c -> a"), std::string::npos) << e;
    EXPECT_NE(e.find("test.yaml:4:5"), std::string::npos) << e;
}

TEST(yaml_workload, generator_files_check_their_parameters) {
    const auto g = from_text("workload: r\ngenerator: resnet\nparameters: {depth: 18, image: 112}\n", {{"batch", "2"}});
    EXPECT_EQ(g.name, "r");
    EXPECT_EQ(g.tensor(g.find_tensor("image")).shape, (shape_t{2, 3, 112, 112}));
    const std::string e = test::error_of([] { from_text("generator: resnet\nparameters: {dpeth: 18}\n"); });
    EXPECT_NE(e.find("test.yaml:2:14: workload 'test' has no parameter 'dpeth' (did you mean 'depth'?)"),
              std::string::npos)
        << e;
    const std::string g2 = test::error_of([] { from_text("generator: resnett\n"); });
    EXPECT_NE(g2.find("test.yaml:1:12: unknown generator 'resnett' (did you mean 'resnet'?)"), std::string::npos) << g2;
    const std::string g3 = test::error_of([] { from_text("generator: resnet\nops: []\n"); });
    EXPECT_NE(g3.find("a generator workload has no ops:"), std::string::npos) << g3;
}

TEST(yaml_workload, writer_round_trips_generated_trained_and_fused_graphs) {
    for (const auto& [name, overrides] : std::vector<std::pair<std::string, std::map<std::string, std::string>>>{
             {"bert", {{"layers", "2"}, {"seq", "16"}}},
             {"resnet", {{"depth", "18"}, {"image", "64"}}},
             {"mlp", {{"training", "adam"}}},
             {"gpt2", {{"layers", "1"}, {"seq", "8"}, {"fuse", "true"}}},
             {"llama",
              {{"layers", "1"}, {"mode", "decode"}, {"kv_cache", "16"}, {"variant", "70b"}, {"training", "sgd"}}},
             {"stencil", {{"solver", "bicgstab"}, {"iterations", "2"}}}}) {
        const auto g = load_workload(name, overrides);
        std::ostringstream out;
        write_workload_yaml(g, out, "round trip");
        const auto back = load_workload_yaml_text(out.str(), "written.yaml", {});
        ASSERT_EQ(back.ops().size(), g.ops().size()) << name;
        ASSERT_EQ(back.tensors().size(), g.tensors().size()) << name;
        EXPECT_DOUBLE_EQ(back.total().flops, g.total().flops) << name;
        EXPECT_DOUBLE_EQ(back.total().macs, g.total().macs) << name;
        EXPECT_DOUBLE_EQ(back.total().bytes_in, g.total().bytes_in) << name;
        EXPECT_DOUBLE_EQ(back.total().bytes_weight, g.total().bytes_weight) << name;
        EXPECT_DOUBLE_EQ(back.total().bytes_out, g.total().bytes_out) << name;
        EXPECT_DOUBLE_EQ(back.parameter_count(), g.parameter_count()) << name;
        for (size_t i = 0; i < g.ops().size(); ++i) {
            EXPECT_EQ(back.op(static_cast<int>(i)).phase, g.op(static_cast<int>(i)).phase) << name;
            EXPECT_EQ(back.op(static_cast<int>(i)).compute_type, g.op(static_cast<int>(i)).compute_type) << name;
            EXPECT_EQ(back.op(static_cast<int>(i)).fused.size(), g.op(static_cast<int>(i)).fused.size()) << name;
        }
    }
}

TEST(yaml_workload, builtin_names_and_bad_specs) {
    const auto names = builtin_workloads();
    for (const char* n : {"gemm", "mlp", "resnet50", "bert-large", "gpt2", "llama2-7b", "resnet", "bert", "llama"})
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    EXPECT_NE(test::error_of([] { load_workload("resnet5", {}); }).find("did you mean 'resnet50'"), std::string::npos);
    EXPECT_NE(test::error_of([] { load_workload("missing.yaml", {}); }).find("cannot open 'missing.yaml'"),
              std::string::npos);
    test::temp_dir dir;
    const std::string bad = dir.write("bad.yaml", "ops: [\n");
    EXPECT_NE(test::error_of([&] { load_workload(bad, {}); }).find("bad.yaml:2:1: YAML syntax error"),
              std::string::npos);
}
