// `tessel graph info` and `tessel import` as a user runs them: numbers in the JSON, the import report and the
// YAML it writes, and bad input giving one clear line and exit code 2.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "workload_test_util.h"

using namespace tessel;
using test::run_tessel;

namespace {

nlohmann::json info_json(const std::string& args) {
    int rc = 0;
    const std::string out = run_tessel("graph info " + args + " --json", rc);
    EXPECT_EQ(rc, 0) << out;
    try {
        return nlohmann::json::parse(out);
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not JSON: " << out;
        return {};
    }
}

/// One line "tessel: error: ..." and exit code 2.
void expect_one_error(const std::string& args, const std::string& fragment) {
    int rc = 0;
    const std::string out = run_tessel(args, rc);
    EXPECT_EQ(rc, 2) << args << "\n" << out;
    EXPECT_EQ(out.rfind("tessel: error: ", 0), 0u) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_NE(out.find(fragment), std::string::npos) << out;
}

}  // namespace

TEST(cli, graph_info_reports_counts_flops_bytes_and_critical_path) {
    const auto j = info_json("gemm");
    EXPECT_EQ(j["ops"], 1);
    EXPECT_DOUBLE_EQ(j["flops"].get<double>(), 2.0 * 512 * 512 * 512);
    EXPECT_DOUBLE_EQ(j["parameter_count"].get<double>(), 512.0 * 512);
    EXPECT_DOUBLE_EQ(j["bytes_read_weights"].get<double>(), 512.0 * 512 * 2);
    EXPECT_DOUBLE_EQ(j["arithmetic_intensity"].get<double>(), 2.0 * 512 * 512 * 512 / (3 * 512 * 512 * 2));
    EXPECT_EQ(j["critical_path"]["ops"], 1);
    EXPECT_EQ(j["ops_by_kind"]["matmul"]["ops"], 1);

    const auto mlp = info_json("workloads/mlp.yaml --set workload.batch=128");
    EXPECT_DOUBLE_EQ(mlp["macs"].get<double>(), 4 * 128.0 * 1024 * 1024);
    EXPECT_EQ(mlp["parameters"]["batch"], "128");
    EXPECT_EQ(mlp["ops_by_type"]["relu"], 3);
    EXPECT_EQ(mlp["critical_path"]["ops"], 7);

    int rc = 0;
    const std::string text = run_tessel("graph info resnet50", rc);
    EXPECT_EQ(rc, 0) << text;
    for (const char* s :
         {"workload resnet50", "parameters:  25.56 M", "critical path:", "conv2d", "batchnorm", "intensity:"})
        EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;
}

TEST(cli, import_writes_a_yaml_that_loads_to_the_same_graph) {
    test::temp_dir dir;
    const std::string out = dir.file("bert.yaml");
    int rc = 0;
    const std::string report = run_tessel("import workloads/onnx/bert_tiny_opset20.onnx -o " + out, rc);
    EXPECT_EQ(rc, 0) << report;
    EXPECT_NE(report.find("opset 20"), std::string::npos) << report;
    EXPECT_NE(report.find("Gelu 2"), std::string::npos) << report;
    EXPECT_NE(report.find("unknown op types: none"), std::string::npos) << report;
    EXPECT_NE(report.find("batch = 1"), std::string::npos) << report;
    const auto from_onnx = info_json("workloads/onnx/bert_tiny_opset20.onnx");
    const auto from_yaml = info_json(out);
    for (const char* k :
         {"flops", "macs", "parameter_count", "bytes_read_activations", "bytes_read_weights", "bytes_written"})
        EXPECT_DOUBLE_EQ(from_yaml[k].get<double>(), from_onnx[k].get<double>()) << k;
    EXPECT_EQ(from_yaml["ops"], from_onnx["ops"]);
}

TEST(cli, strict_import_rejects_unknown_ops) {
    test::temp_dir dir;
    test::onnx_model b;
    b.input("x", {4, 4});
    b.node("Relu", {"x"}, {"r"});
    b.node("NonMaxSuppressionish", {"r"}, {"y"}, "nms");
    b.value_info("y", {4, 4});
    b.output("y");
    const std::string path = b.save(dir, "nms.onnx");
    int rc = 0;
    const std::string ok = run_tessel("import " + path, rc);
    EXPECT_EQ(rc, 0) << ok;
    EXPECT_NE(ok.find("NonMaxSuppressionish x1: nms"), std::string::npos) << ok;
    const std::string strict = run_tessel("import " + path + " --strict", rc);
    EXPECT_EQ(rc, 2) << strict;
    EXPECT_NE(strict.find("tessel: error: " + path + ": --strict: the model uses op types tessel does not know:"),
              std::string::npos)
        << strict;
    EXPECT_NE(strict.find("NonMaxSuppressionish x1: nms"), std::string::npos) << strict;
}

TEST(cli, bad_input_is_one_line_and_exit_code_2) {
    test::temp_dir dir;
    const std::string bytes = test::read_file("workloads/onnx/resnet50.onnx");
    expect_one_error("graph info " + dir.write("cut.onnx", bytes.substr(0, bytes.size() / 3)),
                     "cut.onnx: not a valid ONNX model");
    expect_one_error("import workloads/mlp.yaml.onnx", "cannot open 'workloads/mlp.yaml.onnx'");
    expect_one_error("graph info " + dir.write("text.onnx", "this is not a model\n"), "text.onnx: not ");
    expect_one_error(
        "graph info " + dir.write("cycle.yaml",
                                  "tensors:\n  x: {shape: [4], role: input}\nops:\n"
                                  "  - {name: a, op: add, inputs: [x, b]}\n  - {name: b, op: relu, inputs: [a]}\n"),
        "cycle.yaml:4:5: workload graph 'cycle' has a cycle: a -> b -> a");
    expect_one_error(
        "graph info " +
            dir.write("key.yaml",
                      "tensors:\n  x: {shape: [4], role: input}\nops:\n  - {name: a, op: relu, input: [x]}\n"),
        "key.yaml:4:25: unknown key 'input' in op 'a' (relu) (did you mean 'inputs'?)");
    expect_one_error(
        "graph info " + dir.write("shape.yaml",
                                  "tensors:\n  x: {shape: [4, 8], role: input}\n  w: {shape: [4, 8], role: weight}\n"
                                  "ops:\n  - {name: mm, op: matmul, inputs: [x, w]}\n"),
        "shape.yaml:5:5: op 'mm' (matmul): inner dimensions differ");
    expect_one_error("graph info mlp --set workload.batchsize=8", "has no parameter 'batchsize'");
    expect_one_error("graph info mlp --set batch", "expected KEY=VALUE");
    expect_one_error("graph info nosuchworkload", "unknown workload 'nosuchworkload'");
}
