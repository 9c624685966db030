#include "engine/workload/training.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string_view>

#include "engine/workload/builder.h"
#include "engine/workload/op_types.h"
#include "engine/workload/shape_inference.h"

namespace tessel {

namespace {

bool is_float(dtype t) {
    return t == dtype::fp32 || t == dtype::tf32 || t == dtype::fp16 || t == dtype::bf16 || t == dtype::fp8;
}

class training_builder {
public:
    training_builder(const workload_graph& fwd, const training_options& opt) : m_g(fwd), m_opt(opt) {
        const auto it = fwd.parameters.find("precision");
        m_precision = it == fwd.parameters.end() ? dtype::fp16 : parse_dtype(it->second).value_or(dtype::fp16);
        m_mixed = opt.master_weights && dtype_bits(m_precision) < 32;
        m_declared.assign(m_g.tensors().size(), 0);
    }

    workload_graph run() {
        for (const auto& op : m_g.ops())
            if (!op.fused.empty())
                fail("training: op '" + op.name + "' has fused ops; expand training before fusing", op.where);
        const auto order = m_g.topological_order();
        mark_requires_grad(order);
        m_contrib.assign(m_g.tensors().size(), {});
        m_grad.assign(m_g.tensors().size(), -1);
        // Seed: the gradient of the loss at every differentiable graph output.
        for (int t : m_g.graph_outputs())
            if (m_rg[static_cast<size_t>(t)]) {
                const int producer = m_g.tensor(t).producer;
                layer_scope at(*this, producer >= 0 ? layer_of(m_g.op(producer)) : no_layer);
                contribute(t, add1("loss_grad", m_g.tensor(t).name + ".loss_grad", {t}, {}));
            }
        for (auto it = order.rbegin(); it != order.rend(); ++it) backward(*it);
        optimizer_step();
        finalize_graph(m_g, m_precision);
        m_g.parameters["training"] = m_opt.optimizer;
        return std::move(m_g);
    }

private:
    workload_graph m_g;
    training_options m_opt;
    dtype m_precision = dtype::fp16;
    bool m_mixed = false;
    std::vector<char> m_declared;
    std::vector<char> m_rg;                   // requires grad
    std::vector<std::vector<int>> m_contrib;  // gradient contributions per tensor
    std::vector<int> m_grad;                  // the summed gradient, once taken
    std::map<int, int> m_regathered;          // a sequence-parallel all_gather's output -> its backward re-gather
    int m_unique = 0;
    /// The layer (int_attrs["layer"], set by the transformer generators) given to the ops being added; -2: none.
    static constexpr std::int64_t no_layer = -2;
    std::int64_t m_layer = no_layer;

    static std::int64_t layer_of(const op_node& op) {
        const auto it = op.int_attrs.find("layer");
        return it == op.int_attrs.end() || it->second.empty() ? no_layer : it->second.front();
    }
    /// The smallest layer among ops (those without one ignored); no_layer when none has one.
    static std::int64_t min_layer(std::int64_t a, std::int64_t b) {
        if (a == no_layer) return b;
        if (b == no_layer) return a;
        return std::min(a, b);
    }
    /// Sets m_layer for the life of the scope.
    struct layer_scope {
        training_builder& t;
        std::int64_t saved;
        layer_scope(training_builder& tb, std::int64_t layer) : t(tb), saved(tb.m_layer) { t.m_layer = layer; }
        ~layer_scope() { t.m_layer = saved; }
    };

    // By value: adding ops adds tensors, which moves the tensor list under any reference into it.
    shape_t shape(int t) const { return m_g.tensor(t).shape; }

    std::string fresh(const std::string& base) {
        if (m_g.find_tensor(base) < 0) return base;
        for (;;) {
            std::string n = base + "." + std::to_string(++m_unique);
            if (m_g.find_tensor(n) < 0) return n;
        }
    }

    int new_tensor(const std::string& name, tensor_role role, dtype type = dtype::fp16, shape_t s = {}) {
        tensor_info t;
        t.name = fresh(name);
        t.role = role;
        t.type = type;
        t.shape = std::move(s);
        m_declared.push_back(0);
        m_rg.push_back(0);
        m_contrib.emplace_back();
        m_grad.push_back(-1);
        return m_g.add_tensor(std::move(t));
    }

    /// Adds a backward or optimizer op with inferred outputs.
    std::vector<int> add(const std::string& type, const std::string& name, std::vector<int> inputs, const op_attrs& a,
                         int outputs, op_phase phase = op_phase::backward, const source_location& where = {}) {
        op_node op;
        op.name = fresh(name);
        op.type = type;
        const op_type_info* info = find_op_type(type);
        op.kind = info ? info->kind : op_kind::generic;
        op.phase = phase;
        op.inputs = std::move(inputs);
        op.int_attrs = a.ints;
        op.float_attrs = a.numbers;
        op.str_attrs = a.texts;
        op.compute_type = phase == op_phase::optimizer && m_mixed ? dtype::fp32 : m_precision;
        op.where = where;
        if (m_layer != no_layer)
            op.int_attrs["layer"] = {m_layer};
        else
            op.int_attrs.erase("layer");
        apply_attr_defaults(op);
        for (int o = 0; o < outputs; ++o)
            op.outputs.push_back(new_tensor(outputs == 1 ? op.name : op.name + "." + std::to_string(o),
                                            tensor_role::activation, m_precision));
        const int index = m_g.add_op(std::move(op));
        infer_op(m_g, index, m_declared);
        return m_g.op(index).outputs;
    }
    int add1(const std::string& type, const std::string& name, std::vector<int> inputs, const op_attrs& a,
             const source_location& where = {}) {
        return add(type, name, std::move(inputs), a, 1, op_phase::backward, where).front();
    }

    void mark_requires_grad(const std::vector<int>& order) {
        m_rg.assign(m_g.tensors().size(), 0);
        for (size_t t = 0; t < m_g.tensors().size(); ++t) m_rg[t] = m_g.tensors()[t].role == tensor_role::weight;
        for (int v : order) {
            const auto& op = m_g.op(v);
            if (op.kind == op_kind::shape_only || op.type == "argmax") continue;
            bool any = false;
            for (int t : op.inputs) any |= m_rg[static_cast<size_t>(t)] != 0;
            if (!any) continue;
            for (int t : op.outputs) m_rg[static_cast<size_t>(t)] = is_float(m_g.tensor(t).type);
        }
    }

    void contribute(int t, int grad) {
        if (!m_rg[static_cast<size_t>(t)]) return;
        m_contrib[static_cast<size_t>(t)].push_back(grad);
        mark_gradient(grad, t);
    }

    void mark_gradient(int grad, int of) {
        tensor_info& gi = m_g.tensors()[static_cast<size_t>(grad)];
        if (gi.grad_of < 0 && gi.role != tensor_role::weight && gi.role != tensor_role::input) gi.grad_of = of;
    }

    /// The summed gradient of tensor t, or -1 when nothing contributed.
    int grad_of(int t) {
        if (m_grad[static_cast<size_t>(t)] >= 0) return m_grad[static_cast<size_t>(t)];
        const auto parts = m_contrib[static_cast<size_t>(t)];
        if (parts.empty()) return -1;
        // The sum belongs to the earliest layer that contributes (where the gradient flows on from).
        std::int64_t layer = no_layer;
        for (int part : parts) {
            const int producer = m_g.tensor(part).producer;
            if (producer >= 0) layer = min_layer(layer, layer_of(m_g.op(producer)));
        }
        layer_scope at(*this, layer);
        int g = parts[0];
        for (size_t i = 1; i < parts.size(); ++i) {
            g = add1("add", m_g.tensor(t).name + ".grad_sum", {g, parts[i]}, {});
            mark_gradient(g, t);
        }
        m_grad[static_cast<size_t>(t)] = g;
        return g;
    }

    /// Sums the broadcast axes of `g` away so it has `target`'s shape.
    int reduce_to(int g, const shape_t& target, const std::string& name) {
        shape_t cur = shape(g);
        if (cur == target) return g;
        const size_t lead = cur.size() - std::min(cur.size(), target.size());
        if (lead > 0) {
            std::vector<std::int64_t> axes;
            for (size_t i = 0; i < lead; ++i) axes.push_back(static_cast<std::int64_t>(i));
            g = add1("reduce_sum", name + ".sum_batch", {g}, op_attrs().is("axes", axes).i("keepdims", 0));
            cur = shape(g);
        }
        std::vector<std::int64_t> axes;
        for (size_t i = 0; i < cur.size(); ++i)
            if (target[i] == 1 && cur[i] != 1) axes.push_back(static_cast<std::int64_t>(i));
        if (!axes.empty())
            g = add1("reduce_sum", name + ".sum_broadcast", {g}, op_attrs().is("axes", axes).i("keepdims", 1));
        if (shape(g) != target) g = add1("reshape", name + ".as_target", {g}, op_attrs().is("shape", target));
        return g;
    }

    /// A gradient matmul; weight gradients of batched products sum their batch axes.
    int grad_matmul(const std::string& name, int a, int b, bool ta, bool tb, const shape_t& target,
                    const source_location& where) {
        op_attrs at;
        at.i("transpose_a", ta ? 1 : 0).i("transpose_b", tb ? 1 : 0);
        const size_t ra = shape(a).size(), rb = shape(b).size();
        if (target.size() == 2 && std::max(ra, rb) > 2) at.i("accumulate_batch", 1);
        return reduce_to(add1("matmul", name, {a, b}, at, where), target, name);
    }

    op_attrs forward_attrs(const op_node& f) const {
        op_attrs a;
        a.ints = f.int_attrs;
        a.numbers = f.float_attrs;
        a.texts = f.str_attrs;
        return a;
    }

    /// Whether input i of f needs a gradient.
    bool wants_grad(const op_node& f, size_t i) const {
        return i < f.inputs.size() && m_rg[static_cast<size_t>(f.inputs[i])];
    }

    /// Collectives of tensor-parallel shards (Megatron-LM): the gradient of an all_reduce (g) is the output
    /// gradient itself, of grad_all_reduce (f) an all_reduce, of an all_gather a reduce_scatter (or this rank's
    /// part when the ranks used the gathered tensor identically) and of a reduce_scatter an all_gather.
    void backward_collective(const op_node& f, int dy, const std::string& n) {
        const auto& in = f.inputs;
        op_attrs a;
        a.i("ranks", attr_int(f, "ranks", 1)).i("axis", attr_int(f, "axis")).s("group", attr_text(f, "group"));
        const int ax = *normalise_axis(attr_int(f, "axis"), shape(in[0]).size());
        if (f.type == "all_reduce")
            contribute(in[0], dy);
        else if (f.type == "grad_all_reduce")
            contribute(in[0], add1("all_reduce", n, {dy}, a, f.where));
        else if (f.type == "reduce_scatter")
            contribute(in[0], add1("all_gather", n, {dy}, a, f.where));
        else if (f.type == "all_gather" && attr_int(f, "grad_split"))
            contribute(
                in[0],
                add1("slice", n, {dy},
                     op_attrs().is("starts", {0}).is("ends", {shape(in[0])[static_cast<size_t>(ax)]}).is("axes", {ax}),
                     f.where));
        else if (f.type == "all_gather")
            contribute(in[0], add1("reduce_scatter", n, {dy}, a, f.where));
        else if (f.type == "all_to_all")
            contribute(in[0], add1("all_to_all", n, {dy}, a, f.where));
        else
            fail("training: " + describe_op(f) + ": no backward rule for this collective", f.where);
    }

    /// The matrix product operand the weight gradient reads. Sequence parallelism (Korthikanti et al. 2022,
    /// Section 4.2.2): when it is an all_gather's output, Megatron-LM keeps the gathered shard instead and gathers
    /// it again in the backward pass, once per gathered tensor.
    int saved_operand(int a, const source_location& where) {
        const int producer = m_g.tensor(a).producer;
        if (producer < 0) return a;
        const op_node g = m_g.op(producer);  // a copy: adding ops may move the op list
        if (g.type != "all_gather" || g.phase != op_phase::forward || attr_int(g, "grad_split")) return a;
        const auto it = m_regathered.find(a);
        if (it != m_regathered.end()) return it->second;
        const int again = add1("all_gather", g.name + ".regather", {g.inputs[0]}, forward_attrs(g), where);
        m_regathered[a] = again;
        return again;
    }

    void backward_matmul(const op_node& f, int dy, const std::string& n) {
        auto rg = [&](size_t i) { return wants_grad(f, i); };
        const auto& in = f.inputs;
        if (shape(in[0]).size() < 2 || shape(in[1]).size() < 2)
            fail("training: " + describe_op(f) + ": matmul with a 1-D operand has no backward rule", f.where);
        const bool ta = attr_int(f, "transpose_a") != 0, tb = attr_int(f, "transpose_b") != 0;
        if (attr_int(f, "accumulate_batch")) fail("training: " + describe_op(f) + " is already a gradient op", f.where);
        if (rg(0)) {
            const int a = in[1];
            const int da = !ta ? grad_matmul(n + ".da", dy, a, false, !tb, shape(in[0]), f.where)
                               : grad_matmul(n + ".da", a, dy, tb, true, shape(in[0]), f.where);
            contribute(in[0], da);
        }
        if (rg(1)) {
            const int a = saved_operand(in[0], f.where);
            const int db = !tb ? grad_matmul(n + ".db", a, dy, !ta, false, shape(in[1]), f.where)
                               : grad_matmul(n + ".db", dy, a, true, ta, shape(in[1]), f.where);
            contribute(in[1], db);
        }
        if (rg(2)) contribute(in[2], reduce_to(dy, shape(in[2]), n + ".dbias"));
    }

    /// Unknown op: a generic backward op with the forward's FLOPs per element, shaped like its inputs.
    void backward_generic(const op_node& f, int dy, const std::string& n) {
        auto rg = [&](size_t i) { return wants_grad(f, i); };
        const auto& in = f.inputs;
        std::vector<int> targets;
        for (size_t i = 0; i < f.own_inputs(); ++i)
            if (rg(i)) targets.push_back(in[i]);
        if (targets.empty()) return;
        op_node op;
        op.name = fresh(n);
        op.kind = op_kind::generic;
        op.type = f.type + "_grad";
        op.phase = op_phase::backward;
        op.float_attrs["flops_per_element"] = attr_number(f, "flops_per_element");
        if (m_layer != no_layer) op.int_attrs["layer"] = {m_layer};
        op.compute_type = m_precision;
        op.where = f.where;
        op.inputs = {dy};
        op.inputs.insert(op.inputs.end(), in.begin(), in.end());
        for (size_t i = 0; i < targets.size(); ++i) {
            const int t = new_tensor(op.name + "." + std::to_string(i), tensor_role::activation,
                                     m_g.tensor(targets[i]).type, shape(targets[i]));
            m_declared[static_cast<size_t>(t)] = 1;
            op.outputs.push_back(t);
        }
        const int index = m_g.add_op(std::move(op));
        infer_op(m_g, index, m_declared);
        for (size_t i = 0; i < targets.size(); ++i) contribute(targets[i], m_g.op(index).outputs[i]);
    }

    void backward(int v) {
        const op_node f = m_g.op(v);  // a copy: adding ops may move the op list
        std::vector<int> dys;
        bool any = false;
        for (int t : f.outputs) {
            dys.push_back(grad_of(t));
            any |= dys.back() >= 0;
        }
        if (!any || f.kind == op_kind::shape_only) return;
        layer_scope at(*this, layer_of(f));
        const int dy = dys[0];
        const std::string n = f.name + ".grad";
        auto rg = [&](size_t i) { return wants_grad(f, i); };
        const auto& in = f.inputs;

        if (f.kind == op_kind::collective || f.type == "grad_all_reduce") {
            if (rg(0)) backward_collective(f, dy, n);
            return;
        }

        if (f.type == "cache_append") {
            // The new entries' gradient is their slots' share of dy (the cache is state: none of its own).
            if (!rg(1)) return;
            const auto ax = static_cast<std::int64_t>(*normalise_axis(attr_int(f, "axis"), shape(in[0]).size()));
            const std::int64_t end = shape(in[0])[static_cast<size_t>(ax)];
            const std::int64_t begin = end - shape(in[1])[static_cast<size_t>(ax)];
            contribute(in[1], add1("slice", n, {dy},
                                   op_attrs().is("starts", {begin}).is("ends", {end}).is("axes", {ax}), f.where));
            return;
        }
        if (f.type == "matmul") {
            backward_matmul(f, dy, n);
            return;
        }
        if (f.type == "conv2d") {
            op_attrs a;
            for (const char* k : {"stride", "padding", "dilation", "groups"}) a.ints[k] = f.int_attrs.at(k);
            if (rg(0)) {
                op_attrs ai = a;
                ai.is("input_shape", shape(in[0]));
                contribute(in[0], add1("conv2d_grad_input", n + ".dx", {dy, in[1]}, ai, f.where));
            }
            if (rg(1)) {
                op_attrs aw = a;
                aw.is("weight_shape", shape(in[1]));
                contribute(in[1], add1("conv2d_grad_weight", n + ".dw", {in[0], dy}, aw, f.where));
            }
            if (rg(2))
                contribute(in[2], add1("reduce_sum", n + ".dbias", {dy}, op_attrs().is("axes", {0, 2, 3}), f.where));
            return;
        }
        switch (f.kind) {
            case op_kind::reshape:
                if (rg(0)) contribute(in[0], add1("reshape", n, {dy}, op_attrs().is("shape", shape(in[0])), f.where));
                return;
            case op_kind::transpose: {
                if (!rg(0)) return;
                auto perm = attr_ints(f, "perm");
                const size_t r = shape(in[0]).size();
                if (perm.empty())
                    for (size_t i = r; i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
                std::vector<std::int64_t> inv(r);
                for (size_t i = 0; i < r; ++i)
                    inv[static_cast<size_t>(*normalise_axis(perm[i], r))] = static_cast<std::int64_t>(i);
                contribute(in[0], add1("transpose", n, {dy}, op_attrs().is("perm", inv), f.where));
                return;
            }
            case op_kind::concat: {
                const int ax = *normalise_axis(attr_int(f, "axis"), shape(in[0]).size());
                std::vector<std::int64_t> sizes;
                for (size_t i = 0; i < f.own_inputs(); ++i) sizes.push_back(shape(in[i])[static_cast<size_t>(ax)]);
                const auto parts = add("split", n, {dy}, op_attrs().i("axis", ax).is("sizes", sizes),
                                       static_cast<int>(sizes.size()), op_phase::backward, f.where);
                for (size_t i = 0; i < parts.size(); ++i)
                    if (rg(i)) contribute(in[i], parts[i]);
                return;
            }
            case op_kind::split: {
                if (!rg(0)) return;
                std::vector<int> parts;
                for (size_t i = 0; i < f.outputs.size(); ++i)
                    parts.push_back(dys[i] >= 0 ? dys[i]
                                                : new_tensor(m_g.tensor(f.outputs[i]).name + ".zero_grad",
                                                             tensor_role::constant, m_g.tensor(f.outputs[i]).type,
                                                             shape(f.outputs[i])));
                const int ax = *normalise_axis(attr_int(f, "axis"), shape(in[0]).size());
                contribute(in[0], add1("concat", n, parts, op_attrs().i("axis", ax), f.where));
                return;
            }
            case op_kind::generic:
                backward_generic(f, dy, n);
                return;
            default:
                break;
        }
        if (f.type == "expand") {
            if (rg(0)) contribute(in[0], reduce_to(dy, shape(in[0]), n));
            return;
        }
        // Everything else: "<type>_grad" reads dy and the forward inputs and yields the gradients of the
        // differentiable inputs (`like` says whose shape each has).
        std::vector<std::int64_t> like;
        std::vector<int> targets;
        for (size_t i = 0; i < f.own_inputs(); ++i)
            if (rg(i) && !(f.kind == op_kind::batchnorm && i >= 3) && !(f.type == "where" && i == 0) &&
                !(f.kind == op_kind::attention && i == 3)) {
                like.push_back(static_cast<std::int64_t>(i + 1));
                targets.push_back(in[i]);
            }
        if (targets.empty()) return;
        op_attrs a = forward_attrs(f);
        a.is("like", like);
        std::vector<int> inputs = {dy};
        inputs.insert(inputs.end(), in.begin(), in.begin() + static_cast<std::ptrdiff_t>(f.own_inputs()));
        const auto grads =
            add(f.type + "_grad", n, inputs, a, static_cast<int>(targets.size()), op_phase::backward, f.where);
        for (size_t i = 0; i < targets.size(); ++i) contribute(targets[i], grads[i]);
    }

    void optimizer_step() {
        // An alias (a weight in another layout) hands its gradient to the tensor holding the parameters.
        for (size_t t = 0; t < m_g.tensors().size(); ++t) {
            const tensor_info ti = m_g.tensors()[t];  // a copy: grad_of may add tensors
            if (ti.role != tensor_role::weight || ti.alias_of < 0) continue;
            int g = grad_of(static_cast<int>(t));
            if (g < 0) continue;
            const int orig = ti.alias_of;
            const shape_t os = shape(orig);
            if (shape(g) != os) {
                const shape_t gs = shape(g);
                if (gs.size() == 2 && os.size() == 2 && gs[0] == os[1] && gs[1] == os[0])
                    g = add1("transpose", ti.name + ".grad_layout", {g}, op_attrs().is("perm", {1, 0}));
                else
                    g = add1("reshape", ti.name + ".grad_layout", {g}, op_attrs().is("shape", os));
            }
            contribute(orig, g);
            m_grad[static_cast<size_t>(orig)] = -1;
        }
        const dtype state_type = m_mixed ? dtype::fp32 : m_precision;
        const size_t n = m_g.tensors().size();
        for (size_t t = 0; t < n; ++t) {
            if (m_g.tensors()[t].role != tensor_role::weight || m_g.tensors()[t].alias_of >= 0) continue;
            // The update belongs to the earliest layer reading the weight (a tied embedding: the embedding's).
            std::int64_t layer = no_layer;
            for (int c : m_g.tensors()[t].consumers)
                if (m_g.op(c).phase == op_phase::forward) layer = min_layer(layer, layer_of(m_g.op(c)));
            const int g = grad_of(static_cast<int>(t));
            if (g < 0) continue;
            layer_scope at(*this, layer);
            const std::string w = m_g.tensors()[t].name;
            const shape_t s = m_g.tensors()[t].shape;
            std::vector<int> inputs = {static_cast<int>(t), g};
            if (m_opt.optimizer == "sgd") {
                inputs.push_back(new_tensor(w + ".momentum", tensor_role::state, state_type, s));
            } else {
                inputs.push_back(new_tensor(w + ".m", tensor_role::state, state_type, s));
                inputs.push_back(new_tensor(w + ".v", tensor_role::state, state_type, s));
            }
            if (m_mixed) inputs.push_back(new_tensor(w + ".master", tensor_role::state, dtype::fp32, s));
            const int outputs = static_cast<int>(inputs.size()) - 1;
            const auto outs = add(m_opt.optimizer, w + "." + m_opt.optimizer, inputs, {}, outputs, op_phase::optimizer);
            for (int o : outs) m_g.tensors()[static_cast<size_t>(o)].role = tensor_role::output;
        }
    }
};

}  // namespace

namespace {

/// What autograd saves for the gradient of a forward op type (see saved_for_backward).
enum class saves : std::uint8_t { inputs, nothing, output, condition, mask, other_operands };

saves saved_by(std::string_view type) {
    static const std::map<std::string, saves, std::less<>> rules = {
        {"add", saves::nothing},        {"sub", saves::nothing},        {"neg", saves::nothing},
        {"cast", saves::nothing},       {"reduce_sum", saves::nothing}, {"reduce_mean", saves::nothing},
        {"slice", saves::nothing},      {"softmax", saves::output},     {"log_softmax", saves::output},
        {"relu", saves::output},        {"sigmoid", saves::output},     {"tanh", saves::output},
        {"exp", saves::output},         {"sqrt", saves::output},        {"rsqrt", saves::output},
        {"reciprocal", saves::output},  {"where", saves::condition},    {"dropout", saves::mask},
        {"mul", saves::other_operands}, {"div", saves::other_operands}};
    const auto it = rules.find(type);
    return it == rules.end() ? saves::inputs : it->second;
}

/// The forward op whose "<type>_grad" op is `grad`: a forward consumer of its first forward input of that type
/// reading the same inputs; nullptr when there is none.
const op_node* forward_op_of(const workload_graph& g, const op_node& grad, std::string_view type) {
    if (grad.inputs.size() < 2) return nullptr;
    for (int c : g.tensor(grad.inputs[1]).consumers) {
        const op_node& f = g.op(c);
        if (f.phase != op_phase::forward || f.type != type || f.inputs.size() + 1 > grad.inputs.size()) continue;
        if (std::equal(f.inputs.begin(), f.inputs.end(), grad.inputs.begin() + 1)) return &f;
    }
    return nullptr;
}

}  // namespace

std::vector<saved_tensor> saved_for_backward(const workload_graph& g, const op_node& op) {
    std::vector<saved_tensor> all;
    for (int t : op.inputs) all.push_back({t, false});
    // Only "<type>_grad" ops list forward inputs autograd may not keep; input 0 is the output gradient.
    if (!is_grad_type(op.type) || op.kind == op_kind::generic || op.inputs.empty()) return all;
    constexpr std::string_view suffix = "_grad";
    const std::string_view type = std::string_view(op.type).substr(0, op.type.size() - suffix.size());
    const std::vector<int> forward_inputs(op.inputs.begin() + 1, op.inputs.end());
    std::vector<saved_tensor> kept = {{op.inputs[0], false}};
    switch (saved_by(type)) {
        case saves::inputs:
            return all;
        case saves::nothing:
            return kept;
        case saves::output:
        case saves::mask: {
            // The mask is named by the dropout's output (its size, and re-created whenever that output is).
            const op_node* f = forward_op_of(g, op, type);
            if (!f || f->outputs.empty()) return all;  // not found: keep what it reads
            kept.push_back({f->outputs[0], saved_by(type) == saves::mask});
            return kept;
        }
        case saves::condition:
            kept.push_back({forward_inputs.at(0), false});
            return kept;
        case saves::other_operands: {
            // Input i is kept when another input's gradient (named by `like`, 1-based over op.inputs) is made.
            const auto like = attr_ints(op, "like");
            for (size_t i = 0; i < forward_inputs.size(); ++i) {
                const bool other = std::any_of(like.begin(), like.end(), [&](std::int64_t l) {
                    return l >= 1 && static_cast<size_t>(l - 1) != i;
                });
                if (other) kept.push_back({forward_inputs[i], false});
            }
            return kept;
        }
    }
    return all;
}

bool is_training_step(const workload_graph& g) {
    const auto it = g.parameters.find("training");
    return it != g.parameters.end() && it->second != "none" && !it->second.empty();
}

workload_graph expand_training(const workload_graph& forward, const training_options& options) {
    if (options.optimizer != "sgd" && options.optimizer != "adam")
        fail("training: unknown optimizer '" + options.optimizer + "' (sgd or adam)");
    return training_builder(forward, options).run();
}

}  // namespace tessel
