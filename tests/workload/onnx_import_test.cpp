// ONNX import: every fixture in workloads/onnx (exported from PyTorch by scripts/export_onnx.py, weights
// stripped) agrees with the generator for the same model, and with published sizes; models at opsets newer
// than libonnx knows import through tessel's own shape inference; bad files are clear errors.
#include <gtest/gtest.h>
#include <onnx/shape_inference/implementation.h>

#include <cmath>
#include <fstream>

#include "engine/workload/load.h"
#include "engine/workload/onnx_import.h"
#include "engine/workload/shape_inference.h"
#include "workload_test_util.h"

using namespace tessel;
using test::onnx_model;

namespace {

double rel(double a, double b) { return std::fabs(a - b) / std::fabs(b); }

void expect_agree(const std::string& fixture, const std::string& generated,
                  const std::map<std::string, std::string>& gen_overrides) {
    const auto onnx = load_workload(fixture, {});
    const auto gen = load_workload(generated, gen_overrides);
    EXPECT_LT(rel(onnx.total().flops, gen.total().flops), 0.01)
        << fixture << " FLOPs " << onnx.total().flops << " vs " << gen.total().flops;
    EXPECT_LT(rel(onnx.total().macs, gen.total().macs), 0.01) << fixture;
    EXPECT_LT(rel(onnx.parameter_count(), gen.parameter_count()), 0.01)
        << fixture << " params " << onnx.parameter_count();
}

const op_node* op_named(const workload_graph& g, const std::string& name) {
    for (const auto& o : g.ops())
        if (o.name == name) return &o;
    return nullptr;
}

}  // namespace

TEST(onnx_import, fixtures_match_the_generators_within_one_percent) {
    expect_agree("workloads/onnx/resnet18.onnx", "resnet18", {});
    expect_agree("workloads/onnx/resnet50.onnx", "resnet50", {});
    expect_agree("workloads/onnx/mobilenet_v2.onnx", "mobilenet_v2", {});
    expect_agree("workloads/onnx/bert_tiny.onnx", "workloads/onnx/bert_tiny.yaml", {});
    expect_agree("workloads/onnx/bert_tiny_opset20.onnx", "workloads/onnx/bert_tiny.yaml", {});
    expect_agree("workloads/onnx/gpt2.onnx", "gpt2", {{"seq", "64"}});
}

TEST(onnx_import, fixtures_match_published_sizes) {
    // torchvision's ResNet-50 and MobileNetV2; GPT-2 small (124 M, LM head tied to the embedding).
    EXPECT_DOUBLE_EQ(load_workload("workloads/onnx/resnet50.onnx", {}).parameter_count(), 25557032);
    EXPECT_DOUBLE_EQ(load_workload("workloads/onnx/resnet18.onnx", {}).parameter_count(), 11689512);
    EXPECT_DOUBLE_EQ(load_workload("workloads/onnx/mobilenet_v2.onnx", {}).parameter_count(), 3504872);
    const auto gpt2 = load_workload("workloads/onnx/gpt2.onnx", {});
    EXPECT_LT(rel(gpt2.parameter_count(), 124.44e6), 0.001);
    EXPECT_LT(rel(load_workload("workloads/onnx/resnet50.onnx", {}).total().macs, 4.1e9), 0.01);
}

TEST(onnx_import, symbolic_batch_and_precision_are_parameters) {
    const auto one = load_workload("workloads/onnx/resnet50.onnx", {});
    const auto four = load_workload("workloads/onnx/resnet50.onnx", {{"batch", "4"}});
    EXPECT_DOUBLE_EQ(four.total().macs, 4 * one.total().macs);
    EXPECT_EQ(one.tensor(one.find_tensor("image")).type, dtype::fp16);
    const auto fp32 = load_workload("workloads/onnx/resnet50.onnx", {{"precision", "fp32"}});
    EXPECT_DOUBLE_EQ(fp32.total().bytes_weight, 2 * one.total().bytes_weight);
    // GPT-2 reshapes through Shape -> Gather -> Concat arithmetic on the batch: it must follow the batch.
    const auto g1 = load_workload("workloads/onnx/gpt2.onnx", {});
    const auto g3 = load_workload("workloads/onnx/gpt2.onnx", {{"batch", "3"}});
    EXPECT_DOUBLE_EQ(g3.total().macs, 3 * g1.total().macs);
    EXPECT_NE(test::error_of([] {
                  load_workload("workloads/onnx/resnet50.onnx", {{"bacth", "4"}});
              }).find("did you mean 'batch'"),
              std::string::npos);
}

TEST(onnx_import, weights_are_marked_and_shape_arithmetic_costs_nothing) {
    onnx_import_options opt;
    const auto r = import_onnx("workloads/onnx/gpt2.onnx", opt);
    const auto& g = r.graph;
    EXPECT_EQ(r.report.opset, 17);
    EXPECT_EQ(r.report.symbols.at("batch"), "1");
    EXPECT_TRUE(r.report.unknown.empty());
    EXPECT_GT(r.report.folded, 0);
    // Transposes of weights (Linear layers exported without constant folding) are the same parameters.
    EXPECT_GT(r.report.aliased, 0);
    int embeddings = 0;
    for (const auto& op : g.ops()) {
        embeddings += op.kind == op_kind::embedding;
        if (op.kind != op_kind::shape_only) continue;
        EXPECT_DOUBLE_EQ(op.cost.flops + op.cost.bytes_read() + op.cost.bytes_written(), 0) << op.name;
    }
    EXPECT_EQ(embeddings, 2);  // wte and wpe lookups
    // BatchNorm statistics are state, not parameters.
    const auto rn = load_workload("workloads/onnx/resnet18.onnx", {});
    EXPECT_EQ(rn.tensor(rn.find_tensor("bn1.running_mean")).role, tensor_role::state);
    EXPECT_EQ(rn.tensor(rn.find_tensor("bn1.weight")).role, tensor_role::weight);
    const op_node* conv1 = op_named(rn, "/conv1/Conv");
    ASSERT_NE(conv1, nullptr);
    EXPECT_EQ(conv1->type, "conv2d");
    EXPECT_EQ(conv1->cost.m, 112 * 112);
    EXPECT_EQ(conv1->cost.n, 64);
    EXPECT_EQ(conv1->cost.k, 3 * 7 * 7);
}

TEST(onnx_import, opset_20_imports_where_libonnx_cannot_infer) {
    // libonnx 1.12 knows opsets up to 17: it leaves the Gelu (opset 20) and the ReduceMean-with-axes-input
    // (opset 18) results without shapes.
    onnx::ModelProto m;
    {
        std::ifstream in("workloads/onnx/bert_tiny_opset20.onnx", std::ios::binary);
        ASSERT_TRUE(m.ParseFromIstream(&in));
    }
    EXPECT_EQ(m.graph().value_info_size(), 0);
    try {
        onnx::shape_inference::InferShapes(m);
    } catch (...) {
    }
    std::string gelu_out;
    for (const auto& n : m.graph().node())
        if (n.op_type() == "Gelu") gelu_out = n.output(0);
    ASSERT_FALSE(gelu_out.empty());
    for (const auto& vi : m.graph().value_info()) {
        if (vi.name() != gelu_out) continue;
        EXPECT_FALSE(vi.type().tensor_type().has_shape()) << "libonnx inferred the Gelu output after all";
    }

    const auto r = import_onnx("workloads/onnx/bert_tiny_opset20.onnx", {});
    EXPECT_EQ(r.report.opset, 20);
    EXPECT_TRUE(r.report.unknown.empty());
    int gelus = 0, means = 0;
    for (const auto& op : r.graph.ops()) {
        if (op.type == "gelu") {
            ++gelus;
            EXPECT_EQ(r.graph.tensor(op.outputs[0]).shape, (shape_t{1, 32, 512}));
            EXPECT_DOUBLE_EQ(op.cost.flops, 5.0 * 32 * 512);
        }
        if (op.type == "reduce_mean") {
            ++means;
            EXPECT_EQ(r.graph.tensor(op.outputs[0]).shape, (shape_t{1, 32, 1}));
        }
    }
    EXPECT_EQ(gelus, 2);
    EXPECT_EQ(means, 10);
}

TEST(onnx_import, handmade_model_covers_the_ops_of_real_exports) {
    // Shape arithmetic, Split with num_outputs and ReduceMean with axes as input (opset 18+), comparisons,
    // Where, Cast, Range, ConstantOfShape, Trilu, Expand, GatherElements, Slice, (Un)Squeeze, Flatten,
    // Softmax, Clip, Transpose, MatMul, Gelu (opset 20).
    test::temp_dir dir;
    onnx_model b(20);
    b.input("x", {-1, 4, 6});
    b.ints("i0", {0})
        .ints("n24", {24})
        .ints("n8", {8})
        .ints("ax1", {1})
        .ints("ax0", {0})
        .ints("s2", {2})
        .ints("e100", {100});
    b.ints("eight_by_eight", {8, 8});
    b.node("Shape", {"x"}, {"shape"});
    b.node("Gather", {"shape", "i0"}, {"b"});
    b.node("Concat", {"b", "n24"}, {"flat_shape"})->add_attribute()->CopyFrom([] {
        onnx::AttributeProto a;
        a.set_name("axis");
        a.set_type(onnx::AttributeProto::INT);
        a.set_i(0);
        return a;
    }());
    b.node("Reshape", {"x", "flat_shape"}, {"r"});
    auto* split = b.node("Split", {"r"}, {"p0", "p1", "p2"});
    test::attr_int(split, "axis", 1);
    test::attr_int(split, "num_outputs", 3);
    test::attr_int(b.node("ReduceMean", {"p0", "ax1"}, {"mean"}), "keepdims", 1);
    b.node("Concat", {"b", "n8"}, {"wide"});
    test::attr_int(b.m.mutable_graph()->mutable_node(b.m.graph().node_size() - 1), "axis", 0);
    b.node("Expand", {"mean", "wide"}, {"mean8"});
    b.node("Sub", {"p1", "mean8"}, {"centered"});
    b.node("Equal", {"centered", "p2"}, {"same"});
    b.node("IsNaN", {"centered"}, {"nan"});
    b.node("Where", {"same", "centered", "p2"}, {"picked"});
    test::attr_int(b.node("Cast", {"same"}, {"same_f"}), "to", onnx::TensorProto::FLOAT);
    b.node("Gelu", {"picked"}, {"g"});
    b.node("Clip", {"g"}, {"clipped"});
    // Range 0..8 and a triangular 8x8 mask from constants: computed once, free.
    auto scalar = [&](const std::string& name, std::int64_t v) {
        auto* t = b.m.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_int64_data(v);
    };
    scalar("zero", 0);
    scalar("eight", 8);
    scalar("one", 1);
    b.node("Range", {"zero", "eight", "one"}, {"positions"});
    b.node("ConstantOfShape", {"eight_by_eight"}, {"ones"});
    b.node("Trilu", {"ones"}, {"upper"});
    test::attr_ints(b.node("Transpose", {"clipped"}, {"t"}), "perm", {1, 0});
    b.node("MatMul", {"upper", "t"}, {"mm"});  // [8, 8] x [8, B]
    b.node("Slice", {"mm", "s2", "e100", "ax0"}, {"sl"});
    b.node("Unsqueeze", {"sl", "ax0"}, {"u"});
    b.node("Squeeze", {"u", "ax0"}, {"sq"});
    test::attr_int(b.node("Flatten", {"sq"}, {"fl"}), "axis", 0);
    b.node("Softmax", {"fl"}, {"probs"});
    b.ints("pick", {0, 1, 2, 3, 4, 5, 6, 7});
    b.ints("one_by_eight", {1, 8});
    b.node("Reshape", {"pick", "one_by_eight"}, {"pick2"});
    test::attr_int(b.node("GatherElements", {"picked", "pick2"}, {"ge"}), "axis", 1);
    test::attr_int(b.node("Gather", {"p2", "positions"}, {"reordered"}), "axis", 1);
    b.output("probs").output("nan").output("same_f").output("ge").output("reordered");
    const std::string path = b.save(dir, "handmade.onnx");

    for (std::int64_t batch : {1, 3}) {
        const auto r = import_onnx(path, {{{"batch", std::to_string(batch)}}, false});
        const auto& g = r.graph;
        auto shape = [&](const std::string& t) {
            const int i = g.find_tensor(t);
            EXPECT_GE(i, 0) << t;
            return i < 0 ? shape_t{-1} : g.tensor(i).shape;
        };
        EXPECT_EQ(shape("r"), (shape_t{batch, 24}));
        EXPECT_EQ(shape("p2"), (shape_t{batch, 8}));
        EXPECT_EQ(shape("mean"), (shape_t{batch, 1}));
        EXPECT_EQ(shape("mean8"), (shape_t{batch, 8}));
        EXPECT_EQ(g.tensor(g.find_tensor("same")).type, dtype::boolean);
        EXPECT_EQ(g.tensor(g.find_tensor("nan")).type, dtype::boolean);
        EXPECT_EQ(g.tensor(g.find_tensor("same_f")).type, dtype::fp16);
        EXPECT_EQ(shape("positions"), (shape_t{8}));
        EXPECT_EQ(g.tensor(g.find_tensor("upper")).role, tensor_role::constant);
        EXPECT_EQ(shape("mm"), (shape_t{8, batch}));
        EXPECT_EQ(shape("sl"), (shape_t{6, batch}));
        EXPECT_EQ(shape("fl"), (shape_t{1, 6 * batch}));
        EXPECT_EQ(shape("ge"), (shape_t{1, 8}));
        EXPECT_EQ(shape("reordered"), (shape_t{batch, 8}));
        EXPECT_EQ(op_named(g, "reordered")->type, "gather");
        EXPECT_DOUBLE_EQ(op_named(g, "mm")->cost.macs, 8.0 * 8 * batch);
        EXPECT_DOUBLE_EQ(op_named(g, "g")->cost.flops, 5.0 * 8 * batch);
        EXPECT_DOUBLE_EQ(op_named(g, "probs")->cost.flops, 5.0 * 6 * batch);
        EXPECT_EQ(op_named(g, "upper")->kind, op_kind::shape_only);
        EXPECT_EQ(op_named(g, "positions")->kind, op_kind::shape_only);
        EXPECT_EQ(op_named(g, "flat_shape")->kind, op_kind::shape_only);
        EXPECT_TRUE(r.report.unknown.empty());
    }
}

TEST(onnx_import, a_reshape_whose_target_shape_was_stripped_keeps_its_input_type) {
    // The dynamo exporter's GPT-2 at opset 18: token ids are reshaped by an int64 shape initializer that a
    // weight-stripping pass emptied, so the target comes from value_info. The reshaped ids must stay int64
    // (they index the embedding), not take the bf16 workload precision.
    test::temp_dir dir;
    onnx_model b(18);
    b.input("input_ids", {1, 8}, onnx::TensorProto::INT64);
    b.weight("wte", {100, 16});
    auto* shape = b.m.mutable_graph()->add_initializer();
    shape->set_name("view_shape");
    shape->set_data_type(onnx::TensorProto::INT64);
    shape->add_dims(2);
    shape->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = shape->add_external_data();
    e->set_key("location");
    e->set_value("absent.bin");
    b.value_info("view", {1, 8}, onnx::TensorProto::INT64);
    b.node("Reshape", {"input_ids", "view_shape"}, {"view"});
    b.node("Gather", {"wte", "view"}, {"embedding"});
    b.output("embedding");
    const std::string path = b.save(dir, "stripped_view.onnx");
    const auto r = import_onnx(path, {{{"precision", "bf16"}}, false});
    const auto& g = r.graph;
    EXPECT_EQ(g.tensor(g.find_tensor("view")).type, dtype::int64);
    EXPECT_EQ(g.tensor(g.find_tensor("embedding")).shape, (shape_t{1, 8, 16}));
    EXPECT_EQ(g.tensor(g.find_tensor("embedding")).type, dtype::bf16);
}

TEST(onnx_import, convolution_padding_and_pooling_rules) {
    test::temp_dir dir;
    onnx_model b(13);
    b.input("x", {1, 3, 7, 7}).weight("w", {8, 3, 3, 3}).weight("fc", {10, 32}).weight("fcb", {10});
    auto* conv = b.node("Conv", {"x", "w"}, {"c"});
    test::attr_ints(conv, "strides", {2, 2});
    auto* ap = conv->add_attribute();
    ap->set_name("auto_pad");
    ap->set_type(onnx::AttributeProto::STRING);
    ap->set_s("SAME_UPPER");
    auto* pool = b.node("AveragePool", {"c"}, {"p"});  // 4x4 -> 2x2
    test::attr_ints(pool, "kernel_shape", {2, 2});
    test::attr_ints(pool, "strides", {2, 2});
    test::attr_int(b.node("Flatten", {"p"}, {"f"}), "axis", 1);
    test::attr_int(b.node("Gemm", {"f", "fc", "fcb"}, {"y"}), "transB", 1);
    b.output("y");
    const auto r = import_onnx(b.save(dir, "conv.onnx"), {});
    const auto& g = r.graph;
    EXPECT_EQ(g.tensor(g.find_tensor("c")).shape, (shape_t{1, 8, 4, 4}));  // SAME_UPPER: ceil(7 / 2)
    EXPECT_EQ(g.tensor(g.find_tensor("p")).shape, (shape_t{1, 8, 2, 2}));
    EXPECT_EQ(g.tensor(g.find_tensor("y")).shape, (shape_t{1, 10}));
    EXPECT_DOUBLE_EQ(op_named(g, "c")->cost.macs, 4.0 * 4 * 8 * 3 * 9);
    EXPECT_DOUBLE_EQ(op_named(g, "y")->cost.macs, 32.0 * 10);
    EXPECT_DOUBLE_EQ(op_named(g, "y")->cost.flops, 2 * 32.0 * 10 + 10);
    EXPECT_DOUBLE_EQ(g.parameter_count(), 8 * 27 + 320 + 10);
}

TEST(onnx_import, unknown_ops_are_reported_or_rejected_with_strict) {
    test::temp_dir dir;
    onnx_model b;
    b.input("x", {2, 16});
    b.node("Relu", {"x"}, {"r"});
    b.node("TopKish", {"r"}, {"t1"}, "custom_a");
    b.node("TopKish", {"t1"}, {"t2"}, "custom_b");
    b.node("Relu", {"t2"}, {"y"});
    b.value_info("t1", {2, 8}).value_info("t2", {2, 4});
    b.output("y");
    const std::string path = b.save(dir, "unknown.onnx");
    const auto r = import_onnx(path, {});
    ASSERT_EQ(r.report.unknown.size(), 1u);
    EXPECT_EQ(r.report.unknown[0].op_type, "TopKish");
    EXPECT_EQ(r.report.unknown[0].nodes, (std::vector<std::string>{"custom_a", "custom_b"}));
    const std::string text = format_import_report(r.report);
    EXPECT_NE(text.find("TopKish x2: custom_a, custom_b"), std::string::npos) << text;
    const op_node* a = op_named(r.graph, "custom_a");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->kind, op_kind::generic);
    EXPECT_DOUBLE_EQ(a->cost.bytes_in, 2 * 16 * 2);  // costed by its tensors
    EXPECT_DOUBLE_EQ(a->cost.bytes_out, 2 * 8 * 2);
    EXPECT_EQ(r.graph.tensor(r.graph.find_tensor("y")).shape, (shape_t{2, 4}));

    const std::string strict = test::error_of([&] { import_onnx(path, {{}, true}); });
    EXPECT_NE(strict.find("--strict: the model uses op types tessel does not know:\n  TopKish x2: custom_a, custom_b"),
              std::string::npos)
        << strict;

    // Without value_info (and unknown to libonnx too) there is no way to know the output's shape.
    onnx_model c;
    c.input("x", {2, 16});
    c.node("Mystery", {"x"}, {"y"}, "m1");
    c.output("y");
    const std::string e = test::error_of([&] { import_onnx(c.save(dir, "mystery.onnx"), {}); });
    EXPECT_NE(
        e.find("node 0 'm1' (Mystery): tessel does not know this op, and the model gives no shape for its output 'y'"),
        std::string::npos)
        << e;
}

TEST(onnx_import, bad_files_are_one_clear_error) {
    test::temp_dir dir;
    // Not ONNX at all.
    std::string e = test::error_of([] { import_onnx("workloads/gemm.yaml", {}); });
    EXPECT_NE(e.find("workloads/gemm.yaml: not "), std::string::npos) << e;
    EXPECT_NE(e.find("ONNX"), std::string::npos) << e;
    // Truncated protobuf.
    const std::string bytes = test::read_file("workloads/onnx/resnet18.onnx");
    const std::string cut = dir.write("cut.onnx", bytes.substr(0, bytes.size() / 2));
    e = test::error_of([&] { import_onnx(cut, {}); });
    EXPECT_NE(e.find("cut.onnx: not a valid ONNX model: the protobuf does not parse (truncated, or not an ONNX file)"),
              std::string::npos)
        << e;
    e = test::error_of([&] { import_onnx(dir.write("empty.onnx", ""), {}); });
    EXPECT_NE(e.find("empty file"), std::string::npos) << e;
    e = test::error_of([] { import_onnx("no/such/model.onnx", {}); });
    EXPECT_NE(e.find("cannot open 'no/such/model.onnx'"), std::string::npos) << e;

    // A node reads a tensor nothing provides.
    onnx_model missing;
    missing.input("x", {2, 4});
    missing.node("Add", {"x", "ghost"}, {"y"}, "adder");
    missing.output("y");
    e = test::error_of([&] { import_onnx(missing.save(dir, "missing.onnx"), {}); });
    EXPECT_NE(e.find("node 0 'adder' (Add) reads tensor 'ghost', which no node, initializer or graph input provides"),
              std::string::npos)
        << e;

    // Shapes that do not fit.
    onnx_model mismatch;
    mismatch.input("x", {2, 3}).weight("w", {4, 5});
    mismatch.node("MatMul", {"x", "w"}, {"y"}, "mm");
    mismatch.output("y");
    e = test::error_of([&] { import_onnx(mismatch.save(dir, "mismatch.onnx"), {}); });
    EXPECT_NE(e.find("mismatch.onnx: node 0 'mm' (MatMul): op 'mm' (matmul): inner dimensions differ: a 'x' (2x3) has "
                     "K = 3, b 'w' (4x5) has K = 4"),
              std::string::npos)
        << e;

    // value_info that disagrees with the graph.
    onnx_model vi;
    vi.input("x", {2, 3});
    vi.node("Relu", {"x"}, {"y"}, "r");
    vi.value_info("y", {2, 4});
    vi.output("y");
    e = test::error_of([&] { import_onnx(vi.save(dir, "vi.onnx"), {}); });
    EXPECT_NE(e.find("output 'y' has shape 2x4 in the model's value_info, but its inputs give 2x3"), std::string::npos)
        << e;
}

TEST(onnx_import, never_crashes_on_a_damaged_file) {
    // Cut or corrupt the file anywhere: the result is a graph or an input_error, never anything else.
    test::temp_dir dir;
    const std::string bytes = test::read_file("workloads/onnx/bert_tiny.onnx");
    int errors = 0, imported = 0;
    for (size_t cut = 0; cut < bytes.size(); cut += bytes.size() / 97 + 1) {
        for (const bool flip : {false, true}) {
            std::string damaged = bytes.substr(0, flip ? bytes.size() : cut);
            if (flip) damaged[cut] = static_cast<char>(damaged[cut] ^ 0x5a);
            const std::string path = dir.write("damaged.onnx", damaged);
            try {
                import_onnx(path, {});
                ++imported;
            } catch (const input_error& e) {
                ++errors;
                EXPECT_NE(std::string(e.what()).find("damaged.onnx"), std::string::npos) << e.what();
            } catch (const std::exception& e) {
                ADD_FAILURE() << "cut at " << cut << (flip ? " (byte flipped)" : "") << ": " << e.what();
            }
        }
    }
    EXPECT_GT(errors, 50);
    EXPECT_GT(imported, 0);  // a flipped byte in a name or a dimension can still be a valid model
}

TEST(onnx_import, a_model_exported_with_static_shapes_says_why_no_size_changes) {
    // As torch.onnx.export(dynamo=True) writes a GPT-style model without dynamic_shapes (opset 18): token ids of a
    // fixed 2 x 8, the batch baked into a reshape's shape constant. Nothing can be resized, and the report and a
    // --set of the batch say so and what to do, instead of promising a parameter that is not there.
    test::temp_dir dir;
    onnx_model b(18);
    b.m.set_producer_name("pytorch");
    b.m.set_producer_version("2.5.1");
    b.input("input_ids", {2, 8}, onnx::TensorProto::INT64);
    b.weight("wte", {100, 16});
    b.ints("flat", {16});
    b.node("Reshape", {"input_ids", "flat"}, {"ids"});
    b.node("Gather", {"wte", "ids"}, {"embedding"});
    b.output("embedding");
    const std::string path = b.save(dir, "static_gpt.onnx");
    const auto r = import_onnx(path, {});
    EXPECT_TRUE(r.report.symbols.empty());
    const std::string why =
        "its inputs have static shapes (input_ids 2x8): the exporter fixed the batch and sequence length, so no --set "
        "changes them; export with dynamic axes to make them parameters (torch.onnx.export(..., dynamic_shapes=...) "
        "with the dynamo exporter, dynamic_axes=... with the TorchScript one)";
    EXPECT_EQ(r.report.static_shapes, why);
    EXPECT_NE(format_import_report(r.report).find("  note: " + why), std::string::npos);
    try {
        (void)load_onnx_workload(path, {{"batch", "4"}});
        ADD_FAILURE() << "a batch was set on a model that has none";
    } catch (const input_error& e) {
        EXPECT_EQ(std::string(e.what()),
                  path + ": --set workload.batch=4: 'static_gpt' has no parameter 'batch': " + why);
    }
    // A model with a symbolic dimension has no such note.
    EXPECT_TRUE(import_onnx("workloads/onnx/gpt2.onnx", {}).report.static_shapes.empty());
}
