// An imported model keeps its symbolic dimensions as workload parameters: the YAML that `tessel import -o`
// writes, read at any batch (and sequence), is the graph that importing the ONNX at that size gives.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "engine/workload/onnx_symbolic.h"
#include "engine/workload/yaml_workload.h"
#include "tests/support/cli.h"
#include "tests/support/files.h"

using namespace tessel;

namespace {

std::string yaml_of(const workload_graph& g) {
    std::ostringstream os;
    write_workload_yaml(g, os);
    return os.str();
}

onnx_yaml import_yaml(const std::string& model) { return onnx_workload_yaml(model, {}, import_onnx(model, {})); }

/// The written YAML read at `sizes` against the ONNX imported at `sizes`, both as the loader sees them.
void expect_same_graph(const std::string& model, const std::string& yaml,
                       const std::map<std::string, std::string>& sizes) {
    onnx_import_options at;
    at.overrides = sizes;
    const std::string want = yaml_of(load_workload_yaml_text(yaml_of(import_onnx(model, at).graph), model, {}));
    EXPECT_EQ(yaml_of(load_workload_yaml_text(yaml, model, sizes)), want) << model;
}

}  // namespace

TEST(onnx_symbolic, batch_stays_a_parameter_of_real_models) {
    for (const std::string model : {"workloads/onnx/bert_tiny.onnx", "workloads/onnx/resnet18.onnx"}) {
        const onnx_yaml y = import_yaml(model);
        ASSERT_EQ(y.fixed_why, "") << model;
        EXPECT_NE(y.text.find("parameters:\n  batch: 1\n"), std::string::npos) << y.text.substr(0, 200);
        EXPECT_NE(y.text.find("[batch, "), std::string::npos);
        for (const char* batch : {"1", "3", "32"}) expect_same_graph(model, y.text, {{"batch", batch}});
    }
}

TEST(onnx_symbolic, two_symbols_and_their_product) {
    const onnx_yaml two = import_yaml("tests/corpus/onnx_ok/matmul_batch_seq.onnx");
    EXPECT_EQ(two.fixed_why, "");
    EXPECT_NE(two.text.find("a: {shape: [batch, seq, 64], role: input}"), std::string::npos) << two.text;
    expect_same_graph("tests/corpus/onnx_ok/matmul_batch_seq.onnx", two.text, {{"batch", "4"}, {"seq", "7"}});
    // Flatten(axis 2) of [batch, seq, 64] is [batch * seq, 64]: a bilinear size.
    const onnx_yaml flat = import_yaml("tests/corpus/onnx_ok/flatten_batch_seq.onnx");
    EXPECT_EQ(flat.fixed_why, "");
    EXPECT_NE(flat.text.find("y: {shape: [batch * seq, 64], role: output}"), std::string::npos) << flat.text;
    expect_same_graph("tests/corpus/onnx_ok/flatten_batch_seq.onnx", flat.text, {{"batch", "5"}, {"seq", "3"}});
}

TEST(onnx_symbolic, imported_at_another_batch_that_batch_is_the_default) {
    onnx_import_options at8;
    at8.overrides = {{"batch", "8"}};
    const std::string model = "tests/corpus/onnx_ok/matmul_symbolic.onnx";
    const onnx_yaml y = onnx_workload_yaml(model, at8, import_onnx(model, at8));
    EXPECT_NE(y.text.find("  batch: 8\n"), std::string::npos) << y.text;
    EXPECT_NE(y.text.find("a: {shape: [batch, 64], role: input}"), std::string::npos) << y.text;
}

TEST(onnx_symbolic, three_symbols_keep_fixed_shapes_and_say_why) {
    const onnx_yaml y = import_yaml("tests/corpus/onnx_ok/matmul_three_symbols.onnx");
    EXPECT_EQ(y.fixed_why, "it has 3 symbolic dimensions (tessel keeps up to two)");
    EXPECT_NE(y.text.find("[1, 1, 1, 64]"), std::string::npos);
    EXPECT_EQ(y.text.find("[batch"), std::string::npos);
    EXPECT_EQ(y.text.find("  batch:"), std::string::npos);
}

TEST(onnx_symbolic, an_edited_import_runs_at_any_batch) {
    // The porting loop: import, edit the YAML, run it at the batch you want (same answer as the .onnx).
    const auto dir = std::filesystem::temp_directory_path() / ("tessel_onnx_symbolic_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string yaml = (dir / "bert_tiny.yaml").string();
    ASSERT_EQ(tessel::test::run_tessel("import workloads/onnx/bert_tiny.onnx -o " + yaml).code, 0);
    const auto edited = tessel::test::run_tessel("run -q -p mesh4x4 -w " + yaml + " --set workload.batch=8 --out " +
                                                 (dir / "y").string());
    const auto onnx = tessel::test::run_tessel(
        "run -q -p mesh4x4 -w workloads/onnx/bert_tiny.onnx --set workload.batch=8 --out " + (dir / "o").string());
    ASSERT_EQ(edited.code, 0) << edited.out;
    ASSERT_EQ(onnx.code, 0) << onnx.out;
    const std::string a = tessel::test::slurp(dir / "y" / "summary.json"),
                      b = tessel::test::slurp(dir / "o" / "summary.json");
    EXPECT_NE(a.find("\"sim_time_s\""), std::string::npos);
    EXPECT_EQ(a.substr(a.find("\"sim_time_s\""), 40), b.substr(b.find("\"sim_time_s\""), 40));
    std::filesystem::remove_all(dir);
}
