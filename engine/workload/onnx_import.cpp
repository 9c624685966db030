#include "engine/workload/onnx_import.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "engine/workload/builder.h"
#include "engine/workload/load.h"
#include "engine/workload/op_types.h"
#include "engine/workload/passes.h"
#include "engine/workload/shape_inference.h"
#include "models/core/checked.h"
#include "models/core/limits.h"
#include "models/core/units.h"
#include "models/core/yaml_node.h"

namespace tessel {

namespace {

using values_t = std::vector<double>;

/// Contents are tracked for small tensors only: shape arithmetic, not data.
constexpr std::int64_t max_tracked_elements = 4096;

bool is_float_type(int t) {
    return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 || t == onnx::TensorProto::DOUBLE ||
           t == onnx::TensorProto::BFLOAT16;
}

/// ONNX element type -> tessel dtype. Floating-point tensors take the workload precision.
std::optional<dtype> map_type(int t, dtype precision) {
    switch (t) {
        case onnx::TensorProto::FLOAT:
        case onnx::TensorProto::FLOAT16:
        case onnx::TensorProto::DOUBLE:
        case onnx::TensorProto::BFLOAT16:
            return precision;
        case onnx::TensorProto::INT8:
        case onnx::TensorProto::UINT8:
            return dtype::int8;
        case onnx::TensorProto::INT16:
        case onnx::TensorProto::UINT16:
        case onnx::TensorProto::INT32:
        case onnx::TensorProto::UINT32:
            return dtype::int32;
        case onnx::TensorProto::INT64:
        case onnx::TensorProto::UINT64:
            return dtype::int64;
        case onnx::TensorProto::BOOL:
            return dtype::boolean;
        default:
            break;
    }
    // FLOAT8 types arrived in ONNX 1.14 (opset 19): the numbers 17-20.
    if (t >= 17 && t <= 20) return dtype::fp8;
    return std::nullopt;
}

bool is_integer(dtype t) {
    return t == dtype::int8 || t == dtype::int4 || t == dtype::int32 || t == dtype::int64 || t == dtype::boolean;
}

std::int64_t elements_of(const shape_t& s) { return checked_elements(s, "a tensor's element count"); }

template <typename T>
values_t decode_raw(const std::string& raw) {
    values_t v(raw.size() / sizeof(T));
    for (size_t i = 0; i < v.size(); ++i) {
        T x;
        std::memcpy(&x, raw.data() + i * sizeof(T), sizeof(T));
        v[i] = static_cast<double>(x);
    }
    return v;
}

/// "" when a TensorProto's data in the file fits its `n` elements, else what is wrong with it. Data that cannot
/// be checked (external, an element type of unknown size, no data at all) passes.
std::string stored_data_mismatch(const onnx::TensorProto& t, std::int64_t n) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return {};
    if (!t.raw_data().empty()) {
        size_t size = 0;
        switch (t.data_type()) {
            case onnx::TensorProto::DOUBLE:
            case onnx::TensorProto::INT64:
            case onnx::TensorProto::UINT64:
                size = 8;
                break;
            case onnx::TensorProto::FLOAT:
            case onnx::TensorProto::INT32:
            case onnx::TensorProto::UINT32:
                size = 4;
                break;
            case onnx::TensorProto::FLOAT16:
            case onnx::TensorProto::BFLOAT16:
            case onnx::TensorProto::INT16:
            case onnx::TensorProto::UINT16:
                size = 2;
                break;
            case onnx::TensorProto::INT8:
            case onnx::TensorProto::UINT8:
            case onnx::TensorProto::BOOL:
                size = 1;
                break;
            default:
                return {};
        }
        const size_t bytes = t.raw_data().size();
        if (bytes % size == 0 && static_cast<std::int64_t>(bytes / size) == n) return {};
        return "its raw data is " + std::to_string(bytes) + " bytes, not " + std::to_string(n) + " elements of " +
               std::to_string(size) + " bytes";
    }
    const std::int64_t typed =
        t.float_data_size() + t.double_data_size() + t.int64_data_size() + t.int32_data_size() + t.uint64_data_size();
    if (typed == 0 || typed == n) return {};
    return "its data holds " + std::to_string(typed) + " values";
}

/// The contents of a TensorProto when they are in the file and small; nullopt otherwise (external data,
/// large tensors, 16-bit floats).
std::optional<values_t> tensor_values(const onnx::TensorProto& t) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
    const std::int64_t n = elements_of(shape_t(t.dims().begin(), t.dims().end()));
    if (n > max_tracked_elements) return std::nullopt;
    values_t v;
    if (!t.raw_data().empty()) {
        switch (t.data_type()) {
            case onnx::TensorProto::FLOAT:
                v = decode_raw<float>(t.raw_data());
                break;
            case onnx::TensorProto::DOUBLE:
                v = decode_raw<double>(t.raw_data());
                break;
            case onnx::TensorProto::INT64:
                v = decode_raw<std::int64_t>(t.raw_data());
                break;
            case onnx::TensorProto::INT32:
                v = decode_raw<std::int32_t>(t.raw_data());
                break;
            case onnx::TensorProto::INT8:
                v = decode_raw<std::int8_t>(t.raw_data());
                break;
            case onnx::TensorProto::UINT8:
            case onnx::TensorProto::BOOL:
                v = decode_raw<std::uint8_t>(t.raw_data());
                break;
            default:
                return std::nullopt;
        }
    } else {
        switch (t.data_type()) {
            case onnx::TensorProto::FLOAT:
                v.assign(t.float_data().begin(), t.float_data().end());
                break;
            case onnx::TensorProto::DOUBLE:
                v.assign(t.double_data().begin(), t.double_data().end());
                break;
            case onnx::TensorProto::INT64:
                v.assign(t.int64_data().begin(), t.int64_data().end());
                break;
            case onnx::TensorProto::INT32:
            case onnx::TensorProto::INT8:
            case onnx::TensorProto::UINT8:
            case onnx::TensorProto::BOOL:
                v.assign(t.int32_data().begin(), t.int32_data().end());
                break;
            default:
                return std::nullopt;
        }
    }
    if (static_cast<std::int64_t>(v.size()) != n) return std::nullopt;
    return v;
}

/// Attribute access on a node.
class node_attrs {
public:
    explicit node_attrs(const onnx::NodeProto& n) : m_n(n) {}
    const onnx::AttributeProto* find(const std::string& name) const {
        for (const auto& a : m_n.attribute())
            if (a.name() == name) return &a;
        return nullptr;
    }
    std::int64_t i(const std::string& name, std::int64_t def) const {
        const auto* a = find(name);
        return a ? a->i() : def;
    }
    float f(const std::string& name, float def) const {
        const auto* a = find(name);
        return a ? a->f() : def;
    }
    std::string s(const std::string& name, const std::string& def) const {
        const auto* a = find(name);
        return a ? a->s() : def;
    }
    std::optional<std::vector<std::int64_t>> ints(const std::string& name) const {
        const auto* a = find(name);
        if (!a) return std::nullopt;
        return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
    }

private:
    const onnx::NodeProto& m_n;
};

/// Numpy broadcasting of a small tensor's contents to `out`.
double broadcast_at(const shape_t& in, const values_t& v, const shape_t& out, std::int64_t flat) {
    std::int64_t index = 0, stride = 1;
    for (size_t k = out.size(); k-- > 0;) {
        const std::int64_t coord = flat % out[k];
        flat /= out[k];
        const size_t ik = k + in.size();
        if (ik < out.size()) continue;  // broadcast leading axis
        const std::int64_t dim = in[ik - out.size()];
        index += (dim == 1 ? 0 : coord) * stride;
        stride *= dim;
    }
    return v.empty() ? 0 : v[static_cast<size_t>(index)];
}

const std::map<std::string, std::string>& elementwise_types() {
    static const std::map<std::string, std::string> m = {{"Relu", "relu"},
                                                         {"Gelu", "gelu"},
                                                         {"Erf", "erf"},
                                                         {"Tanh", "tanh"},
                                                         {"Sigmoid", "sigmoid"},
                                                         {"Pow", "pow"},
                                                         {"Sqrt", "sqrt"},
                                                         {"Add", "add"},
                                                         {"Sub", "sub"},
                                                         {"Mul", "mul"},
                                                         {"Div", "div"},
                                                         {"Where", "where"},
                                                         {"Equal", "equal"},
                                                         {"IsNaN", "isnan"},
                                                         {"Exp", "exp"},
                                                         {"Log", "log"},
                                                         {"Neg", "neg"},
                                                         {"Abs", "abs"},
                                                         {"Reciprocal", "reciprocal"},
                                                         {"Floor", "floor"},
                                                         {"Ceil", "ceil"},
                                                         {"Round", "round"},
                                                         {"Sin", "sin"},
                                                         {"Cos", "cos"},
                                                         {"Softplus", "softplus"},
                                                         {"Less", "less"},
                                                         {"LessOrEqual", "less_equal"},
                                                         {"Greater", "greater"},
                                                         {"GreaterOrEqual", "greater_equal"},
                                                         {"And", "and"},
                                                         {"Or", "or"},
                                                         {"Xor", "xor"},
                                                         {"Not", "not"},
                                                         {"Mod", "mod"},
                                                         {"PRelu", "prelu"},
                                                         {"LeakyRelu", "leaky_relu"},
                                                         {"Max", "max"},
                                                         {"Min", "min"},
                                                         {"Sum", "add"},
                                                         {"Clip", "clip"},
                                                         {"Cast", "cast"},
                                                         {"Trilu", "trilu"},
                                                         {"Expand", "expand"}};
    return m;
}

const std::map<std::string, std::string>& reduce_types() {
    static const std::map<std::string, std::string> m = {{"ReduceMean", "reduce_mean"}, {"ReduceSum", "reduce_sum"},
                                                         {"ReduceMax", "reduce_max"},   {"ReduceMin", "reduce_min"},
                                                         {"ReduceProd", "reduce_prod"}, {"ReduceL2", "reduce_l2"}};
    return m;
}

/// ONNX op types (default domain) the importer maps onto the catalog, folds or aliases.
bool is_known(const std::string& type) {
    static const std::set<std::string> other = {"Conv",
                                                "Gemm",
                                                "MatMul",
                                                "BatchNormalization",
                                                "Softmax",
                                                "LogSoftmax",
                                                "LayerNormalization",
                                                "ArgMax",
                                                "Reshape",
                                                "Flatten",
                                                "Squeeze",
                                                "Unsqueeze",
                                                "Transpose",
                                                "Concat",
                                                "Split",
                                                "Slice",
                                                "Gather",
                                                "GatherElements",
                                                "Shape",
                                                "Constant",
                                                "ConstantOfShape",
                                                "Identity",
                                                "Dropout",
                                                "MaxPool",
                                                "AveragePool",
                                                "GlobalAveragePool",
                                                "GlobalMaxPool",
                                                "Range"};
    return elementwise_types().count(type) || reduce_types().count(type) || other.count(type);
}

class onnx_importer {
public:
    /// `model`: the file already parsed (an onnx source imports it at many overrides); null reads `path`.
    onnx_importer(std::string path, const onnx_import_options& opt,
                  std::shared_ptr<const onnx::ModelProto> model = nullptr)
        : m_path(std::move(path)), m_opt(opt), m_model(std::move(model)) {}

    onnx_import_result run();

private:
    std::string m_path;
    onnx_import_options m_opt;
    std::shared_ptr<const onnx::ModelProto> m_model;
    std::int64_t m_opset = 0;
    workload_params m_params;
    dtype m_precision = dtype::fp16;
    workload_graph m_g;
    std::map<std::string, int> m_names;         // ONNX value name -> tensor (aliases share one)
    std::map<int, values_t> m_values;           // known contents of small tensors
    std::map<std::string, shape_t> m_vi_shape;  // value_info shapes with every dimension known
    std::map<std::string, int> m_vi_type;
    std::set<std::string> m_bn_stats;
    std::map<std::string, std::string> m_symbols;
    std::vector<char> m_declared;
    onnx_import_report m_report;
    bool m_libonnx_done = false;
    std::set<std::string> m_op_names;

    // Node being imported, for messages.
    std::string m_node_desc;

    [[noreturn]] void bad(const std::string& what) const {
        fail((m_node_desc.empty() ? std::string() : m_node_desc + ": ") + what, source_location{m_path, 0, 0});
    }

    void read_file();
    void declare_params();
    /// Empty when an input has a symbolic dimension; else the note saying every input's shape is fixed.
    std::string static_shapes_note() const;
    void read_initializers();
    void read_inputs();
    void read_value_info(const onnx::ValueInfoProto& vi);
    void libonnx_shapes();
    std::vector<const onnx::NodeProto*> node_order();
    void import_node(const onnx::NodeProto& n, int index);

    /// One node being imported: its inputs and outputs, and the op built from it.
    struct node_import {
        node_import(const onnx_importer& importer, const onnx::NodeProto& node, const std::string& op_type,
                    bool in_default_domain, std::string node_name)
            : imp(importer),
              n(node),
              type(op_type),
              default_domain(in_default_domain),
              name(std::move(node_name)),
              a(node) {}
        const onnx_importer& imp;
        const onnx::NodeProto& n;
        const std::string& type;
        bool default_domain;
        std::string name;
        node_attrs a;
        std::vector<int> ins;  // -1 for an omitted optional input
        std::vector<std::string> out_names;
        op_node op;
        bool generic = false;
        // Ops that produce data of a known shape without inputs to infer from: their output shape is computed
        // here and declared.
        std::vector<shape_t> declared_shapes;
        std::vector<dtype> declared_types;
        bool shape_only = false;

        const shape_t& in_shape(size_t i) const {
            if (i >= ins.size() || ins[i] < 0) imp.bad("input " + std::to_string(i) + " is missing");
            return imp.shape(ins[i]);
        }
        bool present(size_t i) const { return i < ins.size() && ins[i] >= 0; }
        int required(size_t i) const {
            if (!present(i)) imp.bad("input " + std::to_string(i) + " is missing");
            return ins[i];
        }
        void set(const std::string& t) {
            op.type = t;
            op.kind = find_op_type(t)->kind;
        }
    };
    std::vector<int> node_inputs(const onnx::NodeProto& n) const;
    bool import_alias(const node_import& nd);
    bool map_known_op(node_import& nd);  // false when the node turns out to be an alias
    void map_conv(node_import& nd);
    void map_pool(node_import& nd);
    void map_reshape(node_import& nd);
    void declare_source_shape(node_import& nd);  // Shape, Constant, ConstantOfShape, Range
    void map_elementwise(node_import& nd);
    void declare_generic(node_import& nd);
    int add_node_op(node_import& nd);
    bool fold_constant(const node_import& nd, int v);
    void fold_weight_layout(const std::string& type, int v);

    int new_tensor(const std::string& name, tensor_role role, dtype type, shape_t shape = {}) {
        tensor_info t;
        t.name = name;
        t.role = role;
        t.type = type;
        (void)checked_elements(shape, m_path + ": tensor '" + name + "'");
        t.shape = std::move(shape);
        m_declared.push_back(0);
        const int id = m_g.add_tensor(std::move(t));
        m_names[name] = id;
        return id;
    }
    const shape_t& shape(int t) const { return m_g.tensor(t).shape; }
    const values_t* known(int t) const {
        if (t < 0) return nullptr;
        const auto it = m_values.find(t);
        return it == m_values.end() ? nullptr : &it->second;
    }
    // Constant values are held as doubles; one that is NaN, infinite or beyond int64 cannot be converted (the
    // conversion itself is undefined), so it is an error that names the value.
    std::int64_t to_int(double x, const std::string& what) const {
        if (!(std::fabs(x) < 9.2e18)) bad(what + " " + format_number(x) + " is not a representable integer");
        return static_cast<std::int64_t>(x);
    }
    std::vector<std::int64_t> known_ints(int t, const std::string& what) const {
        const values_t* v = known(t);
        if (!v)
            bad(what +
                " is computed at run time from data; tessel needs it constant (export with fixed shapes, or add "
                "value_info)");
        std::vector<std::int64_t> out;
        for (double d : *v) out.push_back(to_int(d, what));
        return out;
    }
    bool all_constant(const std::vector<int>& ins) const {
        bool any = false;
        for (int t : ins) {
            if (t < 0) continue;
            if (m_g.tensor(t).role != tensor_role::constant) return false;
            any = true;
        }
        return any;
    }
    int root_weight(int t) const {
        while (m_g.tensor(t).alias_of >= 0) t = m_g.tensor(t).alias_of;
        return t;
    }
    /// kernel_shape, strides, dilations and pads sized for `spatial` dimensions, positive (pads non-negative).
    void check_window_attrs(const node_attrs& a, size_t spatial) const;
    void pads_for_auto(const node_attrs& a, const shape_t& x, const std::vector<std::int64_t>& k,
                       const std::vector<std::int64_t>& s, const std::vector<std::int64_t>& d,
                       std::vector<std::int64_t>& pads) const;
    std::optional<values_t> evaluate(const std::string& type, const onnx::NodeProto& n, const std::vector<int>& ins,
                                     const std::vector<int>& outs) const;
};

std::shared_ptr<const onnx::ModelProto> parse_model(const std::string& path) {
    require_input_file(path, "ONNX model", 2.0 * 1024 * 1024 * 1024);  // protobuf's own limit
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot open '" + path + "': no such file or not readable");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string data = ss.str();
    if (data.empty()) fail(path + ": empty file, not an ONNX model");
    auto model = std::make_shared<onnx::ModelProto>();
    if (!model->ParseFromString(data))
        fail(path + ": not a valid ONNX model: the protobuf does not parse (truncated, or not an ONNX file)");
    return model;
}

void onnx_importer::read_file() {
    if (!m_model) m_model = parse_model(m_path);
    if (m_model->ir_version() <= 0 || !m_model->has_graph())
        fail(m_path + ": not an ONNX model: no IR version or no graph (is it an ONNX file?)");
    if (m_model->graph().node_size() == 0) fail(m_path + ": the ONNX graph has no nodes");
    for (const auto& o : m_model->opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") m_opset = o.version();
    if (m_opset == 0) fail(m_path + ": the model imports no version of the default ONNX operator set");
    // ONNX numbers its operator sets 1, 2, ... (23 in 2025); a version far past that is a corrupt model.
    if (m_opset < 0 || m_opset > 1000)
        fail(m_path + ": the model imports ONNX operator set version " + std::to_string(m_opset) +
             ", which does not exist (versions are small numbers: 1 to about 23)");
    m_report.file = m_path;
    m_report.producer =
        m_model->producer_name() + (m_model->producer_version().empty() ? "" : " " + m_model->producer_version());
    m_report.opset = m_opset;
    m_report.nodes = m_model->graph().node_size();
}

void onnx_importer::declare_params() {
    const size_t slash = m_path.find_last_of('/');
    std::string stem = slash == std::string::npos ? m_path : m_path.substr(slash + 1);
    if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".onnx") == 0) stem.resize(stem.size() - 5);
    m_g.name = stem;
    m_params = workload_params(stem);
    std::set<std::string> initializers;
    for (const auto& i : m_model->graph().initializer()) initializers.insert(i.name());
    for (const auto& in : m_model->graph().input()) {
        if (initializers.count(in.name())) continue;
        for (const auto& d : in.type().tensor_type().shape().dim())
            if (!d.dim_param().empty() && !m_params.has(d.dim_param()))
                m_params.declare(d.dim_param(), "1",
                                 "symbolic dimension '" + d.dim_param() + "' of the model's inputs");
    }
    m_params.declare_common();
    const std::string fixed = static_shapes_note();
    if (!fixed.empty()) {
        m_report.static_shapes = fixed;
        m_report.notes.push_back(fixed);
        // A size asked of a model that has none to change: say why, not only which parameters it has.
        for (const auto& [key, value] : m_opt.overrides)
            if (!m_params.has(key))
                fail("--set workload." + key + "=" + value + ": '" + m_g.name + "' has no parameter '" + key +
                     "': " + fixed);
    }
    m_params.apply_overrides(m_opt.overrides);
    m_precision = m_params.precision();
    for (const auto& in : m_model->graph().input())
        for (const auto& d : in.type().tensor_type().shape().dim())
            if (!d.dim_param().empty()) {
                const std::int64_t v = m_params.positive(d.dim_param());
                m_symbols[d.dim_param()] = std::to_string(v);
            }
    m_report.symbols = m_symbols;
}

std::string onnx_importer::static_shapes_note() const {
    std::set<std::string> initializers;
    for (const auto& i : m_model->graph().initializer()) initializers.insert(i.name());
    std::vector<std::string> inputs;
    for (const auto& in : m_model->graph().input()) {
        if (initializers.count(in.name())) continue;
        shape_t s;
        for (const auto& d : in.type().tensor_type().shape().dim()) {
            if (!d.dim_param().empty()) return "";
            s.push_back(d.dim_value());
        }
        inputs.push_back(in.name() + " " + shape_str(s));
    }
    if (inputs.empty()) return "";
    if (inputs.size() > 3) {
        inputs.resize(3);
        inputs.back() = "...";
    }
    return "its inputs have static shapes (" + join(inputs) +
           "): the exporter fixed the batch and sequence length, so no --set changes them; export with dynamic axes "
           "to make them parameters (torch.onnx.export(..., dynamic_shapes=...) with the dynamo exporter, "
           "dynamic_axes=... with the TorchScript one)";
}

void onnx_importer::read_initializers() {
    // BatchNormalization's running statistics are state, not parameters.
    for (const auto& n : m_model->graph().node())
        if (n.op_type() == "BatchNormalization")
            for (int i = 3; i < std::min(5, n.input_size()); ++i) m_bn_stats.insert(n.input(i));
    for (const auto& init : m_model->graph().initializer()) {
        const auto type = map_type(init.data_type(), m_precision);
        if (!type)
            fail(m_path + ": initializer '" + init.name() + "' has an unsupported element type " +
                 std::to_string(init.data_type()));
        shape_t s(init.dims().begin(), init.dims().end());
        tensor_role role = tensor_role::constant;
        if (is_float_type(init.data_type()) && elements_of(s) > 1)
            role = m_bn_stats.count(init.name()) ? tensor_role::state : tensor_role::weight;
        if (const std::string why = stored_data_mismatch(init, elements_of(s)); !why.empty())
            fail(m_path + ": initializer '" + init.name() + "' has shape " + shape_str(s) + " (" +
                 std::to_string(elements_of(s)) + " elements) but " + why + " (a truncated or corrupt model)");
        const int t = new_tensor(init.name(), role, *type, s);
        if (auto v = tensor_values(init)) m_values[t] = *v;
    }
}

void onnx_importer::read_inputs() {
    for (const auto& in : m_model->graph().input()) {
        if (m_names.count(in.name())) continue;  // an initializer listed as input (IR < 4)
        const auto& tt = in.type().tensor_type();
        if (!in.type().has_tensor_type()) fail(m_path + ": graph input '" + in.name() + "' is not a tensor");
        const auto type = map_type(tt.elem_type(), m_precision);
        if (!type)
            fail(m_path + ": graph input '" + in.name() + "' has an unsupported element type " +
                 std::to_string(tt.elem_type()));
        if (!tt.has_shape()) fail(m_path + ": graph input '" + in.name() + "' has no shape");
        shape_t s;
        for (int k = 0; k < tt.shape().dim_size(); ++k) {
            const auto& d = tt.shape().dim(k);
            if (d.has_dim_value())
                s.push_back(d.dim_value());
            else if (!d.dim_param().empty())
                s.push_back(std::stoll(m_symbols.at(d.dim_param())));
            else
                fail(m_path + ": graph input '" + in.name() + "' has an unknown dimension " + std::to_string(k) +
                     " (neither a size nor a name)");
        }
        new_tensor(in.name(), tensor_role::input, *type, s);
    }
}

void onnx_importer::read_value_info(const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type()) return;
    const auto& tt = vi.type().tensor_type();
    if (tt.elem_type() != 0) m_vi_type[vi.name()] = tt.elem_type();
    if (!tt.has_shape()) return;
    shape_t s;
    for (const auto& d : tt.shape().dim()) {
        if (d.has_dim_value())
            s.push_back(d.dim_value());
        else if (!d.dim_param().empty() && m_symbols.count(d.dim_param()))
            s.push_back(std::stoll(m_symbols.at(d.dim_param())));
        else
            return;  // not fully known
    }
    m_vi_shape[vi.name()] = s;
}

void onnx_importer::libonnx_shapes() {
    // For ops tessel does not know: libonnx's own inference gives their output shapes where it knows the
    // opset. It is a fallback only, so its failures are not ours to report.
    if (m_libonnx_done) return;
    m_libonnx_done = true;
    onnx::ModelProto copy = *m_model;
    try {
        onnx::shape_inference::InferShapes(copy);
    } catch (...) {
        return;
    }
    for (const auto& vi : copy.graph().value_info())
        if (!m_vi_shape.count(vi.name())) read_value_info(vi);
}

std::vector<const onnx::NodeProto*> onnx_importer::node_order() {
    // ONNX requires topologically sorted nodes; sort anyway, so a hand-edited file still imports, and
    // report an input nobody produces by name.
    const auto& nodes = m_model->graph().node();
    std::set<std::string> available;
    for (const auto& [name, _] : m_names) available.insert(name);
    std::vector<const onnx::NodeProto*> order;
    std::vector<char> done(static_cast<size_t>(nodes.size()), 0);
    bool progress = true;
    while (progress) {
        progress = false;
        for (int i = 0; i < nodes.size(); ++i) {
            if (done[static_cast<size_t>(i)]) continue;
            bool ready = true;
            for (const auto& in : nodes[i].input()) ready &= in.empty() || available.count(in) > 0;
            if (!ready) continue;
            done[static_cast<size_t>(i)] = 1;
            order.push_back(&nodes[i]);
            for (const auto& o : nodes[i].output()) available.insert(o);
            progress = true;
        }
    }
    if (order.size() != static_cast<size_t>(nodes.size())) {
        std::set<std::string> produced = available;
        for (const auto& n : nodes)
            for (const auto& o : n.output()) produced.insert(o);
        for (int i = 0; i < nodes.size(); ++i) {
            if (done[static_cast<size_t>(i)]) continue;
            for (const auto& in : nodes[i].input())
                if (!in.empty() && !produced.count(in))
                    fail(m_path + ": node " + std::to_string(i) + " '" + nodes[i].name() + "' (" + nodes[i].op_type() +
                         ") reads tensor '" + in + "', which no node, initializer or graph input provides");
        }
        for (int i = 0; i < nodes.size(); ++i)
            if (!done[static_cast<size_t>(i)])
                fail(m_path + ": node " + std::to_string(i) + " '" + nodes[i].name() + "' (" + nodes[i].op_type() +
                     ") is part of a cycle");
    }
    return order;
}

void onnx_importer::check_window_attrs(const node_attrs& a, size_t spatial) const {
    // libonnx's own shape inference (the fallback for Conv1d/3d and pools it imports as generic ops) reads these
    // without checking them against the rank: a mismatch crashed it (found by fuzz/onnx_fuzz.cpp).
    auto check = [&](const char* name, size_t count, std::int64_t least) {
        const auto v = a.ints(name);
        if (!v) return;
        if (v->size() != count)
            bad(std::string("attribute '") + name + "' has " + std::to_string(v->size()) + " values; the input has " +
                std::to_string(spatial) + " spatial dimension(s), so it needs " + std::to_string(count));
        for (std::int64_t x : *v)
            if (x < least)
                bad(std::string("attribute '") + name + "' has the value " + std::to_string(x) +
                    "; it must be at least " + std::to_string(least));
    };
    check("kernel_shape", spatial, 1);
    check("strides", spatial, 1);
    check("dilations", spatial, 1);
    check("pads", 2 * spatial, 0);
}

void onnx_importer::pads_for_auto(const node_attrs& a, const shape_t& x, const std::vector<std::int64_t>& k,
                                  const std::vector<std::int64_t>& s, const std::vector<std::int64_t>& d,
                                  std::vector<std::int64_t>& pads) const {
    const std::string mode = a.s("auto_pad", "NOTSET");
    if (mode == "NOTSET") return;
    pads.assign(4, 0);
    if (mode == "VALID") return;
    if (mode != "SAME_UPPER" && mode != "SAME_LOWER") bad("unknown auto_pad '" + mode + "'");
    for (size_t i = 0; i < 2; ++i) {
        const std::int64_t in = x[2 + i], out = (in + s[i] - 1) / s[i];
        const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in);
        const std::int64_t small = total / 2, large = total - small;
        pads[i] = mode == "SAME_UPPER" ? small : large;
        pads[i + 2] = mode == "SAME_UPPER" ? large : small;
    }
}

namespace {

/// One element of an elementwise arithmetic or comparison op on known values (Div truncates for an integer
/// output).
double arith_element(const std::string& type, const std::vector<double>& x, bool int_out) {
    double y = 0;
    if (type == "Add" || type == "Sum")
        y = x[0] + x[1];
    else if (type == "Sub")
        y = x[0] - x[1];
    else if (type == "Mul")
        y = x[0] * x[1];
    else if (type == "Div")
        y = int_out ? std::trunc(x[0] / x[1]) : x[0] / x[1];
    else if (type == "Max")
        y = std::max(x[0], x[1]);
    else if (type == "Min")
        y = std::min(x[0], x[1]);
    else if (type == "Equal")
        y = x[0] == x[1];
    else if (type == "Less")
        y = x[0] < x[1];
    else if (type == "Greater")
        y = x[0] > x[1];
    else if (type == "LessOrEqual")
        y = x[0] <= x[1];
    else if (type == "GreaterOrEqual")
        y = x[0] >= x[1];
    else if (type == "And")
        y = x[0] != 0 && x[1] != 0;
    else if (type == "Or")
        y = x[0] != 0 || x[1] != 0;
    else if (type == "Mod")
        y = std::fmod(x[0], x[1]);
    else if (type == "Pow")
        y = std::pow(x[0], x[1]);
    else if (type == "Neg")
        y = -x[0];
    else if (type == "Abs")
        y = std::fabs(x[0]);
    else if (type == "Sqrt")
        y = std::sqrt(x[0]);
    else if (type == "Floor")
        y = std::floor(x[0]);
    else if (type == "Ceil")
        y = std::ceil(x[0]);
    else if (type == "Not")
        y = x[0] == 0;
    else if (type == "Where")
        y = x[0] != 0 ? x[1] : x[2];
    return y;
}

}  // namespace

std::optional<values_t> onnx_importer::evaluate(const std::string& type, const onnx::NodeProto& n,
                                                const std::vector<int>& ins, const std::vector<int>& outs) const {
    if (outs.empty() || elements_of(shape(outs[0])) > max_tracked_elements) return std::nullopt;
    const node_attrs a(n);
    const shape_t& out = shape(outs[0]);
    const bool int_out = is_integer(m_g.tensor(outs[0]).type);
    auto in_values = [&](size_t i) { return i < ins.size() ? known(ins[i]) : nullptr; };
    if (type == "Identity" || type == "Reshape" || type == "Flatten" || type == "Squeeze" || type == "Unsqueeze") {
        if (const values_t* v = in_values(0)) return *v;
        return std::nullopt;
    }
    if (type == "Cast") {
        const values_t* v = in_values(0);
        if (!v) return std::nullopt;
        values_t r = *v;
        if (int_out)
            for (double& x : r) x = m_g.tensor(outs[0]).type == dtype::boolean ? (x != 0) : std::trunc(x);
        return r;
    }
    if (type == "Gather") {
        const values_t *d = in_values(0), *idx = in_values(1);
        if (!d || !idx || shape(ins[0]).size() != 1) return std::nullopt;
        values_t r;
        const auto size = static_cast<std::int64_t>(d->size());
        for (double x : *idx) {
            // An index beyond any int64 (or NaN) cannot be converted: it is out of range before it is converted.
            if (!(std::fabs(x) < static_cast<double>(size) + 1))
                bad("index " + format_number(x) + " is out of range for " + std::to_string(size) + " values");
            auto i = static_cast<std::int64_t>(x);
            if (i < 0) i += size;
            if (i < 0 || i >= size)
                bad("index " + std::to_string(static_cast<std::int64_t>(x)) + " is out of range for " +
                    std::to_string(size) + " values");
            r.push_back((*d)[static_cast<size_t>(i)]);
        }
        return r;
    }
    if (type == "Concat") {
        values_t r;
        for (int t : ins) {
            const values_t* v = known(t);
            if (!v || shape(t).size() > 1) return std::nullopt;
            r.insert(r.end(), v->begin(), v->end());
        }
        return r;
    }
    if (type == "Slice") {
        const values_t* v = in_values(0);
        if (!v || shape(ins[0]).size() != 1) return std::nullopt;
        // The element count comes from the inferred output shape; the start and step place it.
        std::int64_t start, step = 1;
        if (m_opset < 10) {
            const auto starts = a.ints("starts");
            if (!starts || starts->empty()) return std::nullopt;
            start = (*starts)[0];
        } else {
            if (!known(ins[1]) || known(ins[1])->empty()) return std::nullopt;
            start = to_int(known(ins[1])->front(), "the slice start");
            if (ins.size() > 4 && ins[4] >= 0 && known(ins[4]) && !known(ins[4])->empty())
                step = to_int(known(ins[4])->front(), "the slice step");
        }
        const auto size = static_cast<std::int64_t>(v->size());
        values_t r;
        std::int64_t i = slice_start(start, size, step);
        for (std::int64_t k = 0; k < out[0]; ++k, i += step) r.push_back((*v)[static_cast<size_t>(i)]);
        return r;
    }
    if (type == "Shape") {
        const shape_t& s = shape(ins[0]);
        const auto r = static_cast<std::int64_t>(s.size());
        std::int64_t start = a.i("start", 0), end = a.i("end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = std::clamp<std::int64_t>(start, 0, r);
        end = std::clamp<std::int64_t>(end, start, r);
        return values_t(s.begin() + start, s.begin() + end);
    }
    if (type == "ConstantOfShape") {
        double fill = 0;
        if (const auto* v = a.find("value"))
            if (auto tv = tensor_values(v->t()); tv && !tv->empty()) fill = (*tv)[0];
        return values_t(static_cast<size_t>(elements_of(out)), fill);
    }
    if (type == "Range") {
        const values_t *s = in_values(0), *d = in_values(2);
        if (!s || !d || s->empty() || d->empty()) return std::nullopt;
        values_t r;
        for (std::int64_t k = 0; k < out[0]; ++k) r.push_back((*s)[0] + static_cast<double>(k) * (*d)[0]);
        return r;
    }
    if (type == "Expand") {
        const values_t* v = in_values(0);
        if (!v) return std::nullopt;
        values_t r;
        for (std::int64_t k = 0; k < elements_of(out); ++k) r.push_back(broadcast_at(shape(ins[0]), *v, out, k));
        return r;
    }
    // Elementwise arithmetic and comparisons on small tensors.
    static const std::set<std::string> arith = {
        "Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less",  "Greater", "LessOrEqual", "GreaterOrEqual",
        "And", "Or",  "Mod", "Pow", "Neg", "Abs", "Sqrt",  "Floor", "Ceil",    "Not",         "Where",
        "Sum"};
    if (!arith.count(type)) return std::nullopt;
    std::vector<const values_t*> vs;
    for (int t : ins) {
        if (t < 0) continue;
        const values_t* v = known(t);
        if (!v) return std::nullopt;
        vs.push_back(v);
    }
    values_t r;
    for (std::int64_t k = 0; k < elements_of(out); ++k) {
        std::vector<double> x;
        size_t j = 0;
        for (int t : ins)
            if (t >= 0) x.push_back(broadcast_at(shape(t), *vs[j++], out, k));
        const double y = arith_element(type, x, int_out);
        r.push_back(y);
    }
    return r;
}

/// The node's inputs as tensors, -1 for an omitted optional one.
std::vector<int> onnx_importer::node_inputs(const onnx::NodeProto& n) const {
    std::vector<int> ins;
    for (const auto& in : n.input()) {
        if (in.empty()) {
            ins.push_back(-1);
            continue;
        }
        const auto it = m_names.find(in);
        if (it == m_names.end()) bad("input '" + in + "' is not produced by any node, initializer or graph input");
        ins.push_back(it->second);
    }
    return ins;
}

/// An op that only renames its input (Identity, Dropout, a one-input Max/Min/Sum, a Cast to the same type):
/// its output is the input under another name. True when the node was one.
bool onnx_importer::import_alias(const node_import& nd) {
    const std::string& type = nd.type;
    if (nd.default_domain && (type == "Identity" || type == "Dropout" ||
                              ((type == "Max" || type == "Min" || type == "Sum") && nd.ins.size() == 1))) {
        m_names[nd.out_names.at(0)] = nd.required(0);
        ++m_report.aliased;
        return true;
    }
    if (nd.default_domain && type == "Cast") {
        const auto to = map_type(static_cast<int>(nd.a.i("to", 0)), m_precision);
        if (!to) bad("casts to an unsupported type " + std::to_string(nd.a.i("to", 0)));
        if (*to == m_g.tensor(nd.required(0)).type) {
            // A conversion between two floating-point types: both are the workload precision here.
            m_names[nd.out_names.at(0)] = nd.required(0);
            ++m_report.aliased;
            return true;
        }
    }
    return false;
}

void onnx_importer::map_conv(node_import& nd) {
    const node_attrs& a = nd.a;
    op_node& op = nd.op;
    const shape_t& x = nd.in_shape(0);
    const shape_t& w = nd.in_shape(1);
    // ONNX's Conv takes (N, C, spatial...): rank 3 (Conv1d) and 5 (Conv3d) import as generic ops, but
    // a rank below 3 is not a convolution at all.
    if (x.size() < 3 || w.size() < 3)
        bad("Conv needs an input and a weight of rank 3 or more (N, C, spatial dimensions), got " +
            std::to_string(x.size()) + " and " + std::to_string(w.size()));
    if (x.size() != w.size())
        bad("Conv's input (rank " + std::to_string(x.size()) + ") and weight (rank " + std::to_string(w.size()) +
            ") must have the same rank");
    check_window_attrs(a, x.size() - 2);
    if (x.size() != 4 || w.size() != 4) {
        nd.generic = true;
    } else {
        nd.set("conv2d");
        const std::vector<std::int64_t> k = {w[2], w[3]};
        const auto s = a.ints("strides").value_or(std::vector<std::int64_t>{1, 1});
        const auto d = a.ints("dilations").value_or(std::vector<std::int64_t>{1, 1});
        auto pads = a.ints("pads").value_or(std::vector<std::int64_t>{0, 0, 0, 0});
        pads_for_auto(a, x, k, s, d, pads);
        op.int_attrs = {{"stride", s}, {"dilation", d}, {"padding", pads}, {"groups", {a.i("group", 1)}}};
    }
}

void onnx_importer::map_pool(node_import& nd) {
    const std::string& type = nd.type;
    const node_attrs& a = nd.a;
    op_node& op = nd.op;
    const auto& out_names = nd.out_names;
    const shape_t& x = nd.in_shape(0);
    const auto k = a.ints("kernel_shape");
    if (x.size() < 3)
        bad(type + " needs an input of rank 3 or more (N, C, spatial dimensions), got rank " +
            std::to_string(x.size()));
    if (!k) bad(type + " has no kernel_shape");
    check_window_attrs(a, x.size() - 2);
    if (x.size() != 4 || !k || k->size() != 2 || (out_names.size() > 1 && !out_names[1].empty())) {
        nd.generic = true;
    } else {
        nd.set(type == "MaxPool" ? "max_pool" : "avg_pool");
        const auto s = a.ints("strides").value_or(std::vector<std::int64_t>{1, 1});
        const auto d = a.ints("dilations").value_or(std::vector<std::int64_t>{1, 1});
        auto pads = a.ints("pads").value_or(std::vector<std::int64_t>{0, 0, 0, 0});
        pads_for_auto(a, x, *k, s, d, pads);
        op.int_attrs = {
            {"kernel", *k}, {"stride", s}, {"dilation", d}, {"padding", pads}, {"ceil_mode", {a.i("ceil_mode", 0)}}};
    }
}

void onnx_importer::map_reshape(node_import& nd) {
    const node_attrs& a = nd.a;
    op_node& op = nd.op;
    const auto& ins = nd.ins;
    const auto& out_names = nd.out_names;
    nd.set("reshape");
    const shape_t& x = nd.in_shape(0);
    if (!nd.present(1) || !known(ins[1])) {
        if (!m_vi_shape.count(out_names.at(0))) known_ints(nd.present(1) ? ins[1] : -1, "the target shape");
        nd.declared_shapes.push_back(m_vi_shape.at(out_names.at(0)));
        // A reshape keeps its input's element type (an int64 index tensor stays int64), whatever the
        // workload precision.
        nd.declared_types.push_back(m_g.tensor(nd.required(0)).type);
    } else {
        auto target = known_ints(ins[1], "the target shape");
        const bool allow_zero = a.i("allowzero", 0) != 0;
        std::int64_t known_product = 1;
        int infer_at = -1;
        for (size_t i = 0; i < target.size(); ++i) {
            if (target[i] == 0 && !allow_zero) {
                if (i >= x.size())
                    bad("shape entry 0 at position " + std::to_string(i) + " has no input dimension to copy");
                target[i] = x[i];
            }
            if (target[i] == -1)
                infer_at = static_cast<int>(i);
            else if (target[i] < 0)
                bad("the target shape has a negative entry " + std::to_string(target[i]) + " at position " +
                    std::to_string(i));
            else
                known_product =
                    checked_mul(known_product, target[i], m_node_desc + ": the target shape's element count",
                                source_location{m_path, 0, 0});
        }
        if (infer_at >= 0) {
            if (known_product == 0 || elements_of(x) % known_product)
                bad("cannot reshape " + shape_str(x) + " to " + shape_str(known_ints(ins[1], "shape")));
            target[static_cast<size_t>(infer_at)] = elements_of(x) / known_product;
        }
        op.int_attrs["shape"] = target;
    }
}

void onnx_importer::declare_source_shape(node_import& nd) {
    const std::string& type = nd.type;
    const node_attrs& a = nd.a;
    const auto& ins = nd.ins;
    nd.shape_only = true;
    if (type == "Shape") {
        const auto r = static_cast<std::int64_t>(nd.in_shape(0).size());
        std::int64_t start = a.i("start", 0), end = a.i("end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = std::clamp<std::int64_t>(start, 0, r);
        end = std::clamp<std::int64_t>(end, start, r);
        nd.declared_shapes.push_back({end - start});
        nd.declared_types.push_back(dtype::int64);
    } else if (type == "Constant") {
        if (const auto* v = a.find("value")) {
            const auto t = map_type(v->t().data_type(), m_precision);
            if (!t) bad("has an unsupported element type");
            nd.declared_shapes.push_back(shape_t(v->t().dims().begin(), v->t().dims().end()));
            nd.declared_types.push_back(*t);
        } else if (a.find("value_float") || a.find("value_int")) {
            nd.declared_shapes.push_back({});
            nd.declared_types.push_back(a.find("value_float") ? m_precision : dtype::int64);
        } else if (const auto* fl = a.find("value_floats")) {
            nd.declared_shapes.push_back({static_cast<std::int64_t>(fl->floats_size())});
            nd.declared_types.push_back(m_precision);
        } else if (const auto* il = a.find("value_ints")) {
            nd.declared_shapes.push_back({static_cast<std::int64_t>(il->ints_size())});
            nd.declared_types.push_back(dtype::int64);
        } else {
            bad("has no value tessel can read (sparse or string constants are not supported)");
        }
    } else if (type == "ConstantOfShape") {
        const auto s = known_ints(nd.present(0) ? ins[0] : -1, "the shape");
        nd.declared_shapes.push_back(s);
        dtype t = m_precision;
        if (const auto* v = a.find("value")) {
            const auto mt = map_type(v->t().data_type(), m_precision);
            if (!mt) bad("has an unsupported element type");
            t = *mt;
        }
        nd.declared_types.push_back(t);
    } else if (type == "Range") {
        const values_t* s = known(nd.required(0));
        const values_t* l = known(nd.required(1));
        const values_t* d = known(nd.required(2));
        if (!s || !l || !d) known_ints(-1, "the range");
        if (s->size() != 1 || l->size() != 1 || d->size() != 1)
            bad("needs a single value for each of start, limit and delta, got " + std::to_string(s->size()) + ", " +
                std::to_string(l->size()) + " and " + std::to_string(d->size()));
        if ((*d)[0] == 0) bad("has a delta of 0");
        const double count = std::ceil(((*l)[0] - (*s)[0]) / (*d)[0]);
        nd.declared_shapes.push_back({std::max<std::int64_t>(0, to_int(count, "the range's element count"))});
        nd.declared_types.push_back(m_g.tensor(ins[0]).type);
    }
}

void onnx_importer::map_elementwise(node_import& nd) {
    const std::string& type = nd.type;
    const node_attrs& a = nd.a;
    op_node& op = nd.op;
    auto& ins = nd.ins;
    if ((type == "Max" || type == "Min" || type == "Sum") && ins.size() > 2) {
        nd.generic = true;
    } else {
        nd.set(elementwise_types().at(type));
        if (type == "LeakyRelu") op.float_attrs["alpha"] = a.f("alpha", 0.01f);
        if (type == "Gelu" && a.find("approximate")) op.str_attrs["approximate"] = a.find("approximate")->s();
        if (type == "Clip" && m_opset < 11) {
            if (a.find("min")) op.float_attrs["min"] = a.f("min", 0);
            if (a.find("max")) op.float_attrs["max"] = a.f("max", 0);
        }
        if (type == "Clip") {
            // Missing optional bounds leave gaps; keep the bounds that are there.
            std::vector<int> kept;
            for (int t : ins)
                if (t >= 0) kept.push_back(t);
            ins = kept;
        }
        if (type == "Cast") op.str_attrs["to"] = dtype_name(*map_type(static_cast<int>(a.i("to", 0)), m_precision));
        if (type == "Trilu") op.int_attrs["upper"] = {a.i("upper", 1)};
        if (type == "Trilu" && nd.present(1) && known(ins[1]) && !known(ins[1])->empty())
            op.int_attrs["k"] = {to_int(known(ins[1])->front(), "the diagonal offset k")};
        if (type == "Expand") op.int_attrs["shape"] = known_ints(nd.present(1) ? ins[1] : -1, "the target shape");
    }
}

bool onnx_importer::map_known_op(node_import& nd) {
    const std::string& type = nd.type;
    const node_attrs& a = nd.a;
    op_node& op = nd.op;
    const auto& ins = nd.ins;
    const auto& out_names = nd.out_names;
    if (type == "Conv") {
        map_conv(nd);
    } else if (type == "MaxPool" || type == "AveragePool") {
        map_pool(nd);
    } else if (type == "GlobalAveragePool" || type == "GlobalMaxPool") {
        nd.set(type == "GlobalAveragePool" ? "global_avg_pool" : "global_max_pool");
    } else if (type == "Gemm" || type == "MatMul") {
        nd.set("matmul");
        op.int_attrs = {{"transpose_a", {a.i("transA", 0)}}, {"transpose_b", {a.i("transB", 0)}}};
    } else if (type == "BatchNormalization") {
        nd.set("batchnorm");
        op.float_attrs["epsilon"] = a.f("epsilon", 1e-5f);
    } else if (type == "Softmax" || type == "LogSoftmax") {
        nd.set(type == "Softmax" ? "softmax" : "log_softmax");
        op.int_attrs["axis"] = {a.i("axis", m_opset < 13 ? 1 : -1)};
    } else if (type == "LayerNormalization") {
        nd.set("layernorm");
        op.int_attrs["axis"] = {a.i("axis", -1)};
        op.float_attrs["epsilon"] = a.f("epsilon", 1e-5f);
    } else if (reduce_types().count(type)) {
        nd.set(reduce_types().at(type));
        std::vector<std::int64_t> axes;
        if (auto at = a.ints("axes"))
            axes = *at;
        else if (nd.present(1))
            axes = known_ints(ins[1], "the reduction axes");
        if (axes.empty() && a.i("noop_with_empty_axes", 0)) {
            m_names[out_names.at(0)] = nd.required(0);
            ++m_report.aliased;
            return false;
        }
        op.int_attrs = {{"axes", axes}, {"keepdims", {a.i("keepdims", 1)}}};
    } else if (type == "ArgMax") {
        nd.set("argmax");
        op.int_attrs = {{"axis", {a.i("axis", 0)}}, {"keepdims", {a.i("keepdims", 1)}}};
    } else if (type == "Reshape") {
        map_reshape(nd);
    } else if (type == "Flatten") {
        nd.set("flatten");
        op.int_attrs["axis"] = {a.i("axis", 1)};
    } else if (type == "Squeeze" || type == "Unsqueeze") {
        nd.set(type == "Squeeze" ? "squeeze" : "unsqueeze");
        if (auto at = a.ints("axes"))
            op.int_attrs["axes"] = *at;
        else if (nd.present(1))
            op.int_attrs["axes"] = known_ints(ins[1], "the axes");
        else if (type == "Unsqueeze")
            bad("has no axes");
    } else if (type == "Transpose") {
        nd.set("transpose");
        if (auto p = a.ints("perm")) op.int_attrs["perm"] = *p;
    } else if (type == "Concat") {
        nd.set("concat");
        op.int_attrs["axis"] = {a.i("axis", 0)};
    } else if (type == "Split") {
        nd.set("split");
        op.int_attrs["axis"] = {a.i("axis", 0)};
        if (auto s = a.ints("split"))
            op.int_attrs["sizes"] = *s;
        else if (nd.present(1))
            op.int_attrs["sizes"] = known_ints(ins[1], "the split sizes");
    } else if (type == "Slice") {
        nd.set("slice");
        if (m_opset < 10) {
            op.int_attrs["starts"] = a.ints("starts").value_or(std::vector<std::int64_t>{});
            op.int_attrs["ends"] = a.ints("ends").value_or(std::vector<std::int64_t>{});
            if (auto ax = a.ints("axes")) op.int_attrs["axes"] = *ax;
        } else {
            op.int_attrs["starts"] = known_ints(nd.present(1) ? ins[1] : -1, "the slice starts");
            op.int_attrs["ends"] = known_ints(nd.present(2) ? ins[2] : -1, "the slice ends");
            if (nd.present(3)) op.int_attrs["axes"] = known_ints(ins[3], "the slice axes");
            if (nd.present(4)) op.int_attrs["steps"] = known_ints(ins[4], "the slice steps");
        }
    } else if (type == "Gather") {
        const std::int64_t axis = a.i("axis", 0);
        if (m_g.tensor(nd.required(0)).role == tensor_role::weight && axis == 0 && shape(ins[0]).size() == 2) {
            nd.set("embedding");
        } else {
            nd.set("gather");
            op.int_attrs["axis"] = {axis};
        }
    } else if (type == "GatherElements") {
        nd.set("gather_elements");
        op.int_attrs["axis"] = {a.i("axis", 0)};
    } else if (type == "Shape" || type == "Constant" || type == "ConstantOfShape" || type == "Range") {
        declare_source_shape(nd);
    } else if (elementwise_types().count(type)) {
        map_elementwise(nd);
    } else {
        nd.generic = true;
    }
    return true;
}

void onnx_importer::declare_generic(node_import& nd) {
    const std::string& type = nd.type;
    op_node& op = nd.op;
    const auto& ins = nd.ins;
    op.kind = op_kind::generic;
    op.type = nd.default_domain ? type : nd.n.domain() + "." + type;
    for (const auto& o : nd.out_names) {
        if (o.empty()) continue;
        if (!m_vi_shape.count(o)) libonnx_shapes();
        if (!m_vi_shape.count(o))
            bad("tessel does not know this op, and the model gives no shape for its output '" + o +
                "' (add value_info, e.g. with onnx.shape_inference.infer_shapes, or export at an opset libonnx "
                "1.12 knows)");
        nd.declared_shapes.push_back(m_vi_shape.at(o));
        const auto vt = m_vi_type.find(o);
        const auto t = vt == m_vi_type.end() ? std::optional<dtype>{} : map_type(vt->second, m_precision);
        nd.declared_types.push_back(t ? *t : (ins.empty() || ins[0] < 0 ? m_precision : m_g.tensor(ins[0]).type));
    }
    auto& u = m_report.unknown;
    auto it = std::find_if(u.begin(), u.end(), [&](const auto& x) { return x.op_type == op.type; });
    if (it == u.end())
        u.push_back({op.type, {nd.name}});
    else
        it->nodes.push_back(nd.name);
}

/// The op's inputs and outputs into the graph, its shapes inferred and checked against value_info.
int onnx_importer::add_node_op(node_import& nd) {
    op_node& op = nd.op;
    const auto& ins = nd.ins;
    const auto& out_names = nd.out_names;
    const auto& declared_shapes = nd.declared_shapes;
    const auto& declared_types = nd.declared_types;
    // Inputs: drop the omitted optional ones (trailing or, for Clip, already removed).
    for (int t : ins)
        if (t >= 0) op.inputs.push_back(t);
    // Outputs: the named ones.
    size_t declared_index = 0;
    for (const auto& o : out_names) {
        if (o.empty()) continue;
        if (m_names.count(o)) bad("output '" + o + "' is produced twice");
        const bool decl = declared_index < declared_shapes.size();
        const dtype type = declared_index < declared_types.size() ? declared_types[declared_index] : m_precision;
        const int t = new_tensor(o, tensor_role::activation, type, decl ? declared_shapes[declared_index] : shape_t{});
        if (decl) m_declared[static_cast<size_t>(t)] = 1;
        ++declared_index;
        op.outputs.push_back(t);
    }
    if (op.kind != op_kind::generic && op.kind != op_kind::shape_only) apply_attr_defaults(op);
    const int v = m_g.add_op(op);
    try {
        infer_op(m_g, v, m_declared);
    } catch (const input_error& e) {
        bad(e.message());
    }
    const auto& outs = m_g.op(v).outputs;
    // value_info, when the model has it, must agree with what tessel inferred.
    for (int t : outs) {
        const auto it = m_vi_shape.find(m_g.tensor(t).name);
        if (it != m_vi_shape.end() && !m_declared[static_cast<size_t>(t)] && it->second != shape(t))
            bad("output '" + m_g.tensor(t).name + "' has shape " + shape_str(it->second) +
                " in the model's value_info, but its inputs give " + shape_str(shape(t)));
    }
    return v;
}

/// Shape arithmetic and constants: computed once, cost nothing. False when the node is real work.
bool onnx_importer::fold_constant(const node_import& nd, int v) {
    const std::string& type = nd.type;
    const node_attrs& a = nd.a;
    auto& node = m_g.ops()[static_cast<size_t>(v)];
    const auto& outs = m_g.op(v).outputs;
    if (!(nd.shape_only || (node.kind != op_kind::generic && all_constant(node.inputs)))) return false;
    node.kind = op_kind::shape_only;
    node.type = type;
    node.int_attrs.clear();
    node.float_attrs.clear();
    node.str_attrs.clear();
    for (int t : outs) {
        m_g.tensors()[static_cast<size_t>(t)].role = tensor_role::constant;
        m_declared[static_cast<size_t>(t)] = 1;
    }
    std::optional<values_t> vals;
    if (type == "Constant") {
        if (const auto* c = a.find("value"))
            vals = tensor_values(c->t());
        else if (const auto* f = a.find("value_float"))
            vals = values_t{f->f()};
        else if (const auto* i = a.find("value_int"))
            vals = values_t{static_cast<double>(i->i())};
        else if (const auto* fl = a.find("value_floats"))
            vals = values_t(fl->floats().begin(), fl->floats().end());
        else if (const auto* il = a.find("value_ints"))
            vals = values_t(il->ints().begin(), il->ints().end());
    } else {
        vals = evaluate(type, nd.n, nd.ins, outs);  // positional: omitted optional inputs are -1
    }
    if (vals && !outs.empty() && static_cast<std::int64_t>(vals->size()) == elements_of(shape(outs[0])))
        m_values[outs[0]] = *vals;
    ++m_report.folded;
    return true;
}

/// A layout change of a weight (Transpose of an initializer, ...) is done once when weights load: the result is
/// the same parameters in another layout.
void onnx_importer::fold_weight_layout(const std::string& type, int v) {
    auto& node = m_g.ops()[static_cast<size_t>(v)];
    const auto& outs = m_g.op(v).outputs;
    static const std::set<std::string> layout = {"Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Cast"};
    if (layout.count(type) && !node.inputs.empty() && m_g.tensor(node.inputs[0]).role == tensor_role::weight) {
        bool rest_constant = true;
        for (size_t i = 1; i < node.inputs.size(); ++i)
            rest_constant &= m_g.tensor(node.inputs[i]).role == tensor_role::constant;
        if (rest_constant && outs.size() == 1) {
            node.kind = op_kind::shape_only;
            node.type = type;
            node.int_attrs.clear();
            node.float_attrs.clear();
            node.str_attrs.clear();
            auto& t = m_g.tensors()[static_cast<size_t>(outs[0])];
            t.role = tensor_role::weight;
            t.alias_of = root_weight(node.inputs[0]);
            m_declared[static_cast<size_t>(outs[0])] = 1;
            ++m_report.aliased;
        }
    }
}

void onnx_importer::import_node(const onnx::NodeProto& n, int index) {
    const std::string& type = n.op_type();
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    std::string name = n.name().empty() ? type + "_" + std::to_string(index) : n.name();
    if (m_op_names.count(name)) name += "#" + std::to_string(index);
    m_op_names.insert(name);
    m_node_desc = "node " + std::to_string(index) + " '" + name + "' (" + type + ")";
    ++m_report.op_types[default_domain ? type : n.domain() + "." + type];
    node_import nd(*this, n, type, default_domain, name);
    nd.ins = node_inputs(n);
    for (const auto& o : n.output()) nd.out_names.push_back(o);
    if (nd.out_names.empty() || nd.out_names[0].empty()) bad("has no output");
    if (import_alias(nd)) return;
    nd.op.name = name;
    nd.op.where = source_location{m_path, 0, 0};
    nd.op.compute_type = m_precision;
    nd.generic = !default_domain || !is_known(type);
    if (!nd.generic && !map_known_op(nd)) return;  // the node is an alias after all (a reduction over no axes)
    if (nd.generic) declare_generic(nd);
    if (nd.shape_only) {
        nd.op.kind = op_kind::shape_only;
        nd.op.type = type;
    }
    const int v = add_node_op(nd);
    if (fold_constant(nd, v)) return;
    fold_weight_layout(type, v);
}

onnx_import_result onnx_importer::run() {
    read_file();
    // --strict: list every op type tessel does not know before doing any work.
    std::map<std::string, std::vector<std::string>> unknown;
    int index = 0;
    for (const auto& n : m_model->graph().node()) {
        const bool dflt = n.domain().empty() || n.domain() == "ai.onnx";
        if (!dflt || !is_known(n.op_type()))
            unknown[dflt ? n.op_type() : n.domain() + "." + n.op_type()].push_back(
                n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name());
        ++index;
    }
    if (m_opt.strict && !unknown.empty()) {
        std::string list;
        for (const auto& [t, nodes] : unknown) {
            list += "\n  " + t + " x" + std::to_string(nodes.size()) + ": ";
            for (size_t i = 0; i < nodes.size() && i < 5; ++i) list += (i ? ", " : "") + nodes[i];
            if (nodes.size() > 5) list += ", ...";
        }
        fail(m_path + ": --strict: the model uses op types tessel does not know:" + list +
             "\n(without --strict they import as generic ops costed by their tensor sizes; see docs/onnx.md)");
    }
    declare_params();
    read_initializers();
    read_inputs();
    for (const auto& vi : m_model->graph().value_info()) read_value_info(vi);
    for (const auto& vi : m_model->graph().output()) read_value_info(vi);
    const auto order = node_order();
    index = 0;
    std::map<const onnx::NodeProto*, int> position;
    for (const auto& n : m_model->graph().node()) position[&n] = index++;
    for (const auto* n : order) {
        try {
            import_node(*n, position[n]);
        } catch (const input_error&) {
            throw;
        } catch (const std::exception& e) {
            // A node missing inputs or attributes its op type requires: the file's fault, not ours.
            bad(std::string("malformed node (") + e.what() + ")");
        }
    }
    m_node_desc.clear();
    for (const auto& o : m_model->graph().output()) {
        const auto it = m_names.find(o.name());
        if (it == m_names.end()) fail(m_path + ": graph output '" + o.name() + "' is not produced by any node");
        auto& t = m_g.tensors()[static_cast<size_t>(it->second)];
        if (t.producer >= 0 && t.role == tensor_role::activation) t.role = tensor_role::output;
    }
    m_g.relink();
    const int dead = remove_dead_ops(m_g);
    if (dead > 0)
        m_report.notes.push_back(std::to_string(dead) + " ops whose results reach no graph output were removed");
    if (!m_report.unknown.empty())
        m_report.notes.push_back(
            "ops of unknown type are costed by their tensor sizes only (0 FLOPs); set flops_per_element on them in an "
            "imported YAML if you know it");
    finalize_graph(m_g, m_precision);
    for (const auto& [k, v] : m_params.resolved()) m_g.parameters[k] = v;
    m_g.resolve_batch();
    for (const auto& note : m_report.notes) m_g.notes.push_back(note);
    for (const auto& u : m_report.unknown)
        m_g.notes.push_back("unknown ONNX op " + u.op_type + " (" + std::to_string(u.nodes.size()) +
                            " nodes) imported as a generic op");
    onnx_import_result r;
    r.graph = std::move(m_g);
    r.report = std::move(m_report);
    r.params = m_params;
    return r;
}

}  // namespace

namespace {

// Every message names the model: the importer's own do, checks deeper down (shapes, counts) do not.
template <class F>
auto naming_model(const std::string& path, F&& f) {
    try {
        return f();
    } catch (const input_error& e) {
        if (e.where().known() || e.message().rfind(path, 0) == 0) throw;
        throw input_error(path + ": " + e.message());
    }
}

/// An ONNX model parsed once; each build runs the import (shape inference at the overridden symbolic
/// dimensions) on the parsed model, then the common options.
class onnx_source final : public workload_source {
public:
    explicit onnx_source(const std::string& path)
        : workload_source(path), m_model(naming_model(path, [&] { return parse_model(path); })) {}

private:
    std::shared_ptr<const onnx::ModelProto> m_model;

    workload_graph build_graph(const workload_overrides& overrides) const override {
        onnx_import_options opt;
        opt.overrides = overrides.to_map();
        auto r = naming_model(spec(), [&] { return onnx_importer(spec(), opt, m_model).run(); });
        apply_workload_options(r.graph, r.params);
        return std::move(r.graph);
    }
};

}  // namespace

onnx_import_result import_onnx(const std::string& path, const onnx_import_options& options) {
    return naming_model(path, [&] { return onnx_importer(path, options).run(); });
}

std::shared_ptr<const workload_source> make_onnx_source(const std::string& path) {
    return std::make_shared<onnx_source>(path);
}

workload_graph load_onnx_workload(const std::string& path, const std::map<std::string, std::string>& overrides) {
    return make_onnx_source(path)->build(parse_workload_overrides(overrides));
}

std::string format_import_report(const onnx_import_report& r) {
    std::ostringstream os;
    os << "imported " << r.file << " (" << (r.producer.empty() ? "unknown producer" : r.producer) << ", opset "
       << r.opset << "): " << r.nodes << " nodes\n";
    std::vector<std::string> types;
    for (const auto& [t, c] : r.op_types) types.push_back(t + " " + std::to_string(c));
    os << "  op types: " << join(types) << "\n";
    if (!r.symbols.empty()) {
        os << "  symbolic dimensions:";
        for (const auto& [k, v] : r.symbols) os << " " << k << " = " << v;
        os << " (change with --set workload.NAME=VALUE)\n";
    }
    os << "  shape computations and constants folded: " << r.folded
       << "; aliases (Identity, Dropout, weight layouts): " << r.aliased << "\n";
    if (r.unknown.empty()) {
        os << "  unknown op types: none\n";
    } else {
        os << "  unknown op types (imported as generic ops, costed by their tensor sizes; --strict rejects them):\n";
        for (const auto& u : r.unknown) {
            os << "    " << u.op_type << " x" << u.nodes.size() << ":";
            for (size_t i = 0; i < u.nodes.size(); ++i) os << (i ? ", " : " ") << u.nodes[i];
            os << "\n";
        }
    }
    for (const auto& n : r.notes) os << "  note: " << n << "\n";
    return os.str();
}

}  // namespace tessel
