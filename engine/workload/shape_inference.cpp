#include "engine/workload/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "engine/workload/op_types.h"
#include "models/core/checked.h"

namespace tessel {

std::string shape_str(const shape_t& s) {
    if (s.empty()) return "scalar";
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
    return out;
}

std::optional<shape_t> broadcast_shapes(const shape_t& a, const shape_t& b) {
    const size_t n = std::max(a.size(), b.size());
    shape_t out(n);
    for (size_t i = 0; i < n; ++i) {
        const std::int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
        const std::int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
        if (x == y || y == 1)
            out[i] = x;
        else if (x == 1)
            out[i] = y;
        else
            return std::nullopt;
    }
    return out;
}

std::optional<int> normalise_axis(std::int64_t axis, size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r) return std::nullopt;
    return static_cast<int>(axis < 0 ? axis + r : axis);
}

std::int64_t slice_start(std::int64_t s, std::int64_t d, std::int64_t step) {
    if (s < 0) s += d;
    return step > 0 ? std::clamp<std::int64_t>(s, 0, d) : std::clamp<std::int64_t>(s, 0, d - 1);
}

shape_t slice_shape(const shape_t& in, const std::vector<std::int64_t>& starts, const std::vector<std::int64_t>& ends,
                    const std::vector<std::int64_t>& axes, const std::vector<std::int64_t>& steps) {
    shape_t out = in;
    for (size_t i = 0; i < starts.size(); ++i) {
        const auto ax = normalise_axis(axes.empty() ? static_cast<std::int64_t>(i) : axes[i], in.size());
        if (!ax) continue;
        const std::int64_t d = in[static_cast<size_t>(*ax)];
        const std::int64_t st = steps.empty() ? 1 : steps[i];
        const std::int64_t s = slice_start(starts[i], d, st);
        std::int64_t e = ends[i];
        if (e < 0) e += d;
        std::int64_t len;
        if (st > 0) {
            e = std::clamp<std::int64_t>(e, 0, d);
            len = e > s ? (e - s + st - 1) / st : 0;
        } else {
            e = std::clamp<std::int64_t>(e, -1, d - 1);
            len = s > e ? (s - e + (-st) - 1) / (-st) : 0;
        }
        out[static_cast<size_t>(*ax)] = len;
    }
    return out;
}

namespace {

struct out_desc {
    shape_t shape;
    dtype type;
};

std::int64_t product(const shape_t& s, size_t from = 0, size_t to = ~size_t{0}) {
    const size_t end = std::min(to, s.size());
    if (from >= end) return 1;
    return checked_elements(
        shape_t(s.begin() + static_cast<std::ptrdiff_t>(from), s.begin() + static_cast<std::ptrdiff_t>(end)),
        "a shape's element count");
}

std::vector<out_desc> one(shape_t s, dtype t) { return std::vector<out_desc>{{std::move(s), t}}; }

bool is_integer_type(dtype t) {
    return t == dtype::int8 || t == dtype::int4 || t == dtype::int32 || t == dtype::int64 || t == dtype::boolean;
}

/// Collects inputs and reports problems in the op's own words.
class inference {
public:
    inference(workload_graph& g, int index, const std::vector<char>& declared)
        : m_g(g), m_op(g.ops()[static_cast<size_t>(index)]), m_declared(declared) {}

    [[noreturn]] void bad(const std::string& what) const { fail(describe_op(m_op) + ": " + what, m_op.where); }

    const tensor_info& in(size_t i) const { return m_g.tensor(m_op.inputs[i]); }
    const shape_t& shape(size_t i) const { return in(i).shape; }
    size_t n_in() const { return m_op.own_inputs(); }
    std::string named(size_t i) const { return "'" + in(i).name + "' (" + shape_str(shape(i)) + ")"; }

    bool declared(size_t out) const {
        const int t = m_op.outputs[out];
        return static_cast<size_t>(t) < m_declared.size() && m_declared[static_cast<size_t>(t)];
    }
    const shape_t& declared_shape(size_t out) const { return m_g.tensor(m_op.outputs[out]).shape; }

    int axis(std::int64_t a, size_t rank, const std::string& what) const {
        const auto ax = normalise_axis(a, rank);
        if (!ax) bad(what + " " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
        return *ax;
    }

    void run();

private:
    workload_graph& m_g;
    op_node& m_op;
    const std::vector<char>& m_declared;

    std::vector<out_desc> infer();
    std::vector<out_desc> infer_declared() const;
    std::vector<out_desc> infer_matmul() const;
    std::vector<out_desc> infer_conv() const;
    std::vector<out_desc> infer_pool() const;
    std::vector<out_desc> infer_elementwise() const;
    std::vector<out_desc> infer_reduce() const;
    std::vector<out_desc> infer_layernorm() const;
    std::vector<out_desc> infer_batchnorm() const;
    std::vector<out_desc> infer_attention() const;
    std::vector<out_desc> infer_embedding() const;
    std::vector<out_desc> infer_gather() const;
    std::vector<out_desc> infer_reshape() const;
    std::vector<out_desc> infer_transpose() const;
    std::vector<out_desc> infer_concat() const;
    std::vector<out_desc> infer_split() const;
    std::vector<out_desc> infer_slice() const;
    std::vector<out_desc> infer_collective() const;
    std::vector<out_desc> infer_optimizer() const;
    dtype first_type() const { return n_in() > 0 ? in(0).type : dtype::fp16; }
    std::vector<out_desc> infer_grad();
    shape_t broadcast_all(size_t first, size_t count) const;
    shape_t conv_out(const shape_t& x, std::int64_t oc, std::int64_t kh, std::int64_t kw, bool ceil_mode) const;
    shape_t reduced(const shape_t& x, const std::vector<std::int64_t>& axes, bool keep) const;
};

shape_t inference::broadcast_all(size_t first, size_t count) const {
    shape_t s = shape(first);
    for (size_t i = first + 1; i < first + count; ++i) {
        const auto b = broadcast_shapes(s, shape(i));
        if (!b) bad("shapes " + shape_str(s) + " and " + named(i) + " do not broadcast");
        s = *b;
    }
    return s;
}

shape_t inference::conv_out(const shape_t& x, std::int64_t oc, std::int64_t kh, std::int64_t kw, bool ceil_mode) const {
    const auto st = attr_ints(m_op, "stride"), pad = attr_ints(m_op, "padding"), dil = attr_ints(m_op, "dilation");
    const std::int64_t k[2] = {kh, kw};
    shape_t out = {x[0], oc, 0, 0};
    for (size_t d = 0; d < 2; ++d) {
        if (st[d] < 1 || dil[d] < 1) bad("stride and dilation must be at least 1");
        const std::int64_t span = dil[d] * (k[d] - 1) + 1;
        const std::int64_t in = x[2 + d] + pad[d] + pad[d + 2];
        if (in < span)
            bad("window of " + std::to_string(span) + " does not fit the padded input of " + std::to_string(in) +
                " (input " + named(0) + ")");
        std::int64_t o = ceil_mode ? (in - span + st[d] - 1) / st[d] + 1 : (in - span) / st[d] + 1;
        // A window may not start in the trailing padding (PyTorch and ONNX rule for ceil_mode).
        if (ceil_mode && (o - 1) * st[d] >= x[2 + d] + pad[d]) --o;
        out[2 + d] = o;
    }
    return out;
}

shape_t inference::reduced(const shape_t& x, const std::vector<std::int64_t>& axes, bool keep) const {
    std::vector<char> hit(x.size(), axes.empty() ? 1 : 0);
    for (auto a : axes) hit[static_cast<size_t>(axis(a, x.size(), "axis"))] = 1;
    shape_t out;
    for (size_t i = 0; i < x.size(); ++i) {
        if (!hit[i])
            out.push_back(x[i]);
        else if (keep)
            out.push_back(1);
    }
    return out;
}

std::vector<out_desc> inference::infer_matmul() const {
    const size_t n = n_in();
    const dtype t0 = first_type();
    shape_t a = shape(0), b = shape(1);
    if (a.empty() || b.empty()) bad("operands must have at least one axis, got " + named(0) + " and " + named(1));
    const bool drop_m = a.size() == 1, drop_n = b.size() == 1;
    if (drop_m) a.insert(a.begin(), 1);
    if (drop_n) b.push_back(1);
    if (attr_int(m_op, "transpose_a")) std::swap(a[a.size() - 1], a[a.size() - 2]);
    if (attr_int(m_op, "transpose_b")) std::swap(b[b.size() - 1], b[b.size() - 2]);
    const std::int64_t m = a[a.size() - 2], k = a.back(), k2 = b[b.size() - 2], nn = b.back();
    if (k != k2)
        bad("inner dimensions differ: a " + named(0) + " has K = " + std::to_string(k) + ", b " + named(1) +
            " has K = " + std::to_string(k2));
    const auto batch = broadcast_shapes(shape_t(a.begin(), a.end() - 2), shape_t(b.begin(), b.end() - 2));
    if (!batch) bad("batch axes of " + named(0) + " and " + named(1) + " do not broadcast");
    shape_t out = attr_int(m_op, "accumulate_batch") ? shape_t{} : *batch;
    if (!drop_m) out.push_back(m);
    if (!drop_n) out.push_back(nn);
    if (n == 3 && broadcast_shapes(out, shape(2)) != out)
        bad("bias " + named(2) + " does not broadcast to the output " + shape_str(out));
    return one(out, t0);
}

/// conv2d and its two gradients.
std::vector<out_desc> inference::infer_conv() const {
    const size_t n = n_in();
    const dtype t0 = first_type();
    // All three are described by the forward geometry: x [N, C, H, W] and weight [OC, C/g, KH, KW].
    shape_t x, w;
    if (m_op.type == "conv2d") {
        x = shape(0);
        w = shape(1);
    } else if (m_op.type == "conv2d_grad_input") {
        x = attr_ints(m_op, "input_shape");
        w = shape(1);
    } else {
        x = shape(0);
        w = attr_ints(m_op, "weight_shape");
    }
    if (x.size() != 4) bad("input must be [N, C, H, W], got " + shape_str(x));
    if (w.size() != 4) bad("weight must be [OC, C/groups, KH, KW], got " + shape_str(w));
    const std::int64_t g = attr_int(m_op, "groups", 1);
    if (g < 1 || x[1] % g || w[0] % g)
        bad("groups = " + std::to_string(g) + " must divide the input channels (" + std::to_string(x[1]) +
            ") and the output channels (" + std::to_string(w[0]) + ")");
    if (w[1] * g != x[1])
        bad("weight " + shape_str(w) + " expects " + std::to_string(w[1] * g) + " input channels, the input " +
            shape_str(x) + " has " + std::to_string(x[1]));
    const shape_t y = conv_out(x, w[0], w[2], w[3], false);
    if (m_op.type == "conv2d") {
        if (n == 3 && (shape(2).size() != 1 || shape(2)[0] != w[0]))
            bad("bias " + named(2) + " must be [" + std::to_string(w[0]) + "]");
        return one(y, t0);
    }
    if (m_op.type == "conv2d_grad_input") {
        if (shape(0) != y) bad("output gradient " + named(0) + " must match the forward output " + shape_str(y));
        return one(x, t0);
    }
    if (shape(1) != y) bad("output gradient " + named(1) + " must match the forward output " + shape_str(y));
    return one(w, t0);
}

std::vector<out_desc> inference::infer_pool() const {
    const dtype t0 = first_type();
    const shape_t& x = shape(0);
    if (m_op.type == "global_avg_pool" || m_op.type == "global_max_pool") {
        if (x.size() < 3) bad("input must be [N, C, spatial...], got " + named(0));
        shape_t out = x;
        std::fill(out.begin() + 2, out.end(), 1);
        return one(out, t0);
    }
    if (x.size() != 4) bad("input must be [N, C, H, W], got " + named(0));
    const auto k = attr_ints(m_op, "kernel");
    return one(conv_out(x, x[1], k[0], k[1], attr_int(m_op, "ceil_mode") != 0), t0);
}

std::vector<out_desc> inference::infer_elementwise() const {
    const size_t n = n_in();
    const size_t n_out = m_op.outputs.size();
    const dtype t0 = first_type();
    const std::string& t = m_op.type;
    if (t == "cast") {
        const auto to = parse_dtype(attr_text(m_op, "to"));
        if (!to) bad("unknown data type '" + attr_text(m_op, "to") + "' (known: " + dtype_list() + ")");
        return one(shape(0), *to);
    }
    if (t == "expand") {
        if (!has_attr(m_op, "shape")) {
            if (n_out == 1 && declared(0)) return one(declared_shape(0), t0);
            bad("needs a 'shape'");
        }
        const auto s = broadcast_shapes(shape(0), attr_ints(m_op, "shape"));
        if (!s) bad(named(0) + " cannot expand to " + shape_str(attr_ints(m_op, "shape")));
        return one(*s, t0);
    }
    if (t == "clip" || t == "trilu" || t == "stencil7") {
        if (t == "trilu" && shape(0).size() < 2) bad("input must have at least 2 axes, got " + named(0));
        if (t == "stencil7" && shape(0).size() != 3) bad("field must be [X, Y, Z], got " + named(0));
        if (t == "stencil7" && n == 2 && shape(1) != shape(0) && in(1).elements() != 7)
            bad("coefficients " + named(1) + " must be 7 values or one per point like the field");
        return one(shape(0), t0);
    }
    if (t == "where") return one(broadcast_all(0, 3), in(1).type);
    const shape_t s = broadcast_all(0, n);
    const bool logical = t == "equal" || t == "less" || t == "less_equal" || t == "greater" || t == "greater_equal" ||
                         t == "and" || t == "or" || t == "xor" || t == "not" || t == "isnan";
    return one(s, logical ? dtype::boolean : t0);
}

std::vector<out_desc> inference::infer_reduce() const {
    const dtype t0 = first_type();
    if (m_op.type == "dot") {
        if (shape(0) != shape(1)) bad("operands must have equal shapes, got " + named(0) + " and " + named(1));
        return one({}, t0);
    }
    if (m_op.type == "argmax")
        return one(reduced(shape(0), {attr_int(m_op, "axis")}, attr_int(m_op, "keepdims") != 0), dtype::int64);
    return one(reduced(shape(0), attr_ints(m_op, "axes"), attr_int(m_op, "keepdims") != 0), t0);
}

std::vector<out_desc> inference::infer_layernorm() const {
    const size_t n = n_in();
    const size_t n_out = m_op.outputs.size();
    const dtype t0 = first_type();
    const shape_t& x = shape(0);
    const int ax = axis(attr_int(m_op, "axis", -1), x.size(), "axis");
    const std::int64_t norm = product(x, static_cast<size_t>(ax));
    for (size_t i = 1; i < n; ++i)
        if (in(i).elements() != norm)
            bad((i == 1 ? "scale " : "bias ") + named(i) + " must have " + std::to_string(norm) +
                " elements, one per normalised element of " + named(0));
    std::vector<out_desc> outs{{x, t0}};
    // ONNX LayerNormalization may also return the mean and inverse standard deviation.
    shape_t stat = x;
    for (size_t i = static_cast<size_t>(ax); i < stat.size(); ++i) stat[i] = 1;
    for (size_t o = 1; o < n_out; ++o) outs.push_back({stat, dtype::fp32});
    return outs;
}

std::vector<out_desc> inference::infer_batchnorm() const {
    const size_t n_out = m_op.outputs.size();
    const dtype t0 = first_type();
    const shape_t& x = shape(0);
    if (x.size() < 2) bad("input must be [N, C, ...], got " + named(0));
    for (size_t i = 1; i < 5; ++i)
        if (shape(i) != shape_t{x[1]})
            bad("input " + named(i) + " must be [" + std::to_string(x[1]) + "], one value per channel");
    std::vector<out_desc> outs{{x, t0}};
    for (size_t o = 1; o < n_out; ++o) outs.push_back({shape_t{x[1]}, in(3).type});
    return outs;
}

std::vector<out_desc> inference::infer_attention() const {
    const size_t n = n_in();
    const dtype t0 = first_type();
    const shape_t &q = shape(0), &k = shape(1), &v = shape(2);
    if (q.size() != 4 || k.size() != 4 || v.size() != 4)
        bad("q, k and v must be [batch, heads, seq, head size], got " + named(0) + ", " + named(1) + ", " + named(2));
    if (k[0] != q[0] || v[0] != q[0]) bad("q, k and v must have the same batch");
    if (k[1] != v[1] || k[1] < 1 || q[1] % k[1])
        bad("k and v must have the same number of heads, dividing q's: " + named(0) + ", " + named(1) + ", " +
            named(2));
    if (k[3] != q[3]) bad("q " + named(0) + " and k " + named(1) + " must have the same head size");
    if (v[2] != k[2]) bad("k " + named(1) + " and v " + named(2) + " must have the same sequence length");
    if (n == 4 && broadcast_shapes(shape(3), {q[0], q[1], q[2], k[2]}) != shape_t{q[0], q[1], q[2], k[2]})
        bad("mask " + named(3) + " must broadcast to the scores " + shape_str({q[0], q[1], q[2], k[2]}));
    return one({q[0], q[1], q[2], v[3]}, t0);
}

std::vector<out_desc> inference::infer_embedding() const {
    const dtype t0 = first_type();
    if (shape(0).size() != 2) bad("table must be [vocabulary, width], got " + named(0));
    if (!is_integer_type(in(1).type))
        bad("ids '" + in(1).name + "' must be an integer tensor, not " + dtype_name(in(1).type));
    shape_t out = shape(1);
    out.push_back(shape(0)[1]);
    return one(out, t0);
}

std::vector<out_desc> inference::infer_gather() const {
    const dtype t0 = first_type();
    const shape_t &d = shape(0), &idx = shape(1);
    if (!is_integer_type(in(1).type))
        bad("indices '" + in(1).name + "' must be an integer tensor, not " + dtype_name(in(1).type));
    const int ax = axis(attr_int(m_op, "axis"), d.size(), "axis");
    if (m_op.type == "gather_elements") {
        if (idx.size() != d.size()) bad("indices " + named(1) + " must have the rank of the data " + named(0));
        return one(idx, t0);
    }
    shape_t out(d.begin(), d.begin() + ax);
    out.insert(out.end(), idx.begin(), idx.end());
    out.insert(out.end(), d.begin() + ax + 1, d.end());
    return one(out, t0);
}

std::vector<out_desc> inference::infer_reshape() const {
    const size_t n_out = m_op.outputs.size();
    const dtype t0 = first_type();
    const shape_t& x = shape(0);
    shape_t out;
    if (m_op.type == "flatten") {
        const auto a = attr_int(m_op, "axis", 1);
        const auto r = static_cast<std::int64_t>(x.size());
        if (a < -r || a > r) bad("axis " + std::to_string(a) + " is out of range for " + named(0));
        const size_t ax = static_cast<size_t>(a < 0 ? a + r : a);
        out = {product(x, 0, ax), product(x, ax)};
    } else if (m_op.type == "squeeze") {
        const auto axes = attr_ints(m_op, "axes");
        std::vector<char> drop(x.size(), 0);
        for (size_t i = 0; i < x.size(); ++i) drop[i] = axes.empty() && x[i] == 1;
        for (auto a : axes) {
            const int ax = axis(a, x.size(), "axis");
            if (x[static_cast<size_t>(ax)] != 1) bad("axis " + std::to_string(a) + " of " + named(0) + " is not 1");
            drop[static_cast<size_t>(ax)] = 1;
        }
        for (size_t i = 0; i < x.size(); ++i)
            if (!drop[i]) out.push_back(x[i]);
    } else if (m_op.type == "cache_append") {
        const shape_t& y = shape(1);
        const int ax = axis(attr_int(m_op, "axis", 0), x.size(), "axis");
        bool fits = y.size() == x.size() && y[static_cast<size_t>(ax)] <= x[static_cast<size_t>(ax)];
        for (size_t i = 0; fits && i < x.size(); ++i) fits = static_cast<int>(i) == ax || y[i] == x[i];
        if (!fits)
            bad("the new entries " + named(1) + " do not fit the cache " + named(0) + " along axis " +
                std::to_string(ax));
        out = x;
    } else if (m_op.type == "unsqueeze") {
        const auto axes = attr_ints(m_op, "axes");
        const size_t rank = x.size() + axes.size();
        std::vector<char> ins(rank, 0);
        for (auto a : axes) {
            const int ax = axis(a, rank, "axis");
            if (ins[static_cast<size_t>(ax)]) bad("axis " + std::to_string(a) + " given twice");
            ins[static_cast<size_t>(ax)] = 1;
        }
        size_t j = 0;
        for (size_t i = 0; i < rank; ++i) out.push_back(ins[i] ? 1 : x[j++]);
    } else {
        if (!has_attr(m_op, "shape")) {
            if (n_out == 1 && declared(0))
                out = declared_shape(0);
            else
                bad("needs a 'shape' (or a declared output shape)");
        } else {
            out = attr_ints(m_op, "shape");
            int infer_at = -1;
            for (size_t i = 0; i < out.size(); ++i) {
                if (out[i] == 0 && i < x.size())
                    out[i] = x[i];
                else if (out[i] == -1) {
                    if (infer_at >= 0) bad("shape " + shape_str(out) + " has more than one -1");
                    infer_at = static_cast<int>(i);
                } else if (out[i] < 0)
                    bad("shape has a negative size " + std::to_string(out[i]));
            }
            if (infer_at >= 0) {
                out[static_cast<size_t>(infer_at)] = 1;
                const std::int64_t rest = product(out);
                if (rest == 0 || in(0).elements() % rest)
                    bad("cannot reshape " + named(0) + " to " + shape_str(attr_ints(m_op, "shape")));
                out[static_cast<size_t>(infer_at)] = in(0).elements() / rest;
            }
        }
        if (product(out) != in(0).elements())
            bad("cannot reshape " + named(0) + " (" + std::to_string(in(0).elements()) + " elements) to " +
                shape_str(out) + " (" + std::to_string(product(out)) + " elements)");
    }
    return one(out, t0);
}

std::vector<out_desc> inference::infer_transpose() const {
    const dtype t0 = first_type();
    const shape_t& x = shape(0);
    auto perm = attr_ints(m_op, "perm");
    if (perm.empty())
        for (size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
    if (perm.size() != x.size())
        bad("perm has " + std::to_string(perm.size()) + " axes, the input " + named(0) + " has " +
            std::to_string(x.size()));
    std::vector<char> seen(x.size(), 0);
    shape_t out;
    for (auto p : perm) {
        const int ax = axis(p, x.size(), "perm entry");
        if (seen[static_cast<size_t>(ax)]++) bad("perm repeats axis " + std::to_string(p));
        out.push_back(x[static_cast<size_t>(ax)]);
    }
    return one(out, t0);
}

std::vector<out_desc> inference::infer_concat() const {
    const size_t n = n_in();
    const dtype t0 = first_type();
    shape_t out = shape(0);
    const int ax = axis(attr_int(m_op, "axis"), out.size(), "axis");
    for (size_t i = 1; i < n; ++i) {
        const shape_t& s = shape(i);
        bool ok = s.size() == out.size();
        for (size_t d = 0; ok && d < s.size(); ++d) ok = static_cast<int>(d) == ax || s[d] == out[d];
        if (!ok) bad("input " + named(i) + " does not match " + named(0) + " outside axis " + std::to_string(ax));
        out[static_cast<size_t>(ax)] += s[static_cast<size_t>(ax)];
    }
    return one(out, t0);
}

std::vector<out_desc> inference::infer_split() const {
    const size_t n_out = m_op.outputs.size();
    const dtype t0 = first_type();
    const shape_t& x = shape(0);
    const int ax = axis(attr_int(m_op, "axis"), x.size(), "axis");
    auto sizes = attr_ints(m_op, "sizes");
    const std::int64_t d = x[static_cast<size_t>(ax)];
    if (sizes.empty()) {
        const auto parts = static_cast<std::int64_t>(n_out);
        if (parts < 1) bad("has no outputs");
        // Equal parts; the last may be smaller (ONNX opset 18 num_outputs rule).
        const std::int64_t each = (d + parts - 1) / parts;
        for (std::int64_t p = 0; p < parts; ++p) sizes.push_back(std::min(each, d - p * each));
    }
    if (sizes.size() != n_out) bad(std::to_string(sizes.size()) + " sizes for " + std::to_string(n_out) + " outputs");
    if (std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}) != d)
        bad("sizes " + shape_str(sizes) + " do not add up to axis " + std::to_string(ax) + " of " + named(0));
    std::vector<out_desc> outs;
    for (auto s : sizes) {
        if (s < 0) bad("negative part size");
        shape_t o = x;
        o[static_cast<size_t>(ax)] = s;
        outs.push_back({o, t0});
    }
    return outs;
}

std::vector<out_desc> inference::infer_slice() const {
    const dtype t0 = first_type();
    const auto starts = attr_ints(m_op, "starts"), ends = attr_ints(m_op, "ends");
    const auto axes = attr_ints(m_op, "axes"), steps = attr_ints(m_op, "steps");
    if (ends.size() != starts.size() || (!axes.empty() && axes.size() != starts.size()) ||
        (!steps.empty() && steps.size() != starts.size()))
        bad("starts, ends, axes and steps must have the same length");
    for (size_t i = 0; i < starts.size(); ++i) {
        axis(axes.empty() ? static_cast<std::int64_t>(i) : axes[i], shape(0).size(), "axis");
        if (!steps.empty() && steps[i] == 0) bad("a step of 0");
    }
    return one(slice_shape(shape(0), starts, ends, axes, steps), t0);
}

std::vector<out_desc> inference::infer_collective() const {
    const dtype t0 = first_type();
    shape_t out = shape(0);
    const std::int64_t ranks = attr_int(m_op, "ranks");
    if (ranks < 1) bad("ranks must be at least 1");
    if (m_op.type == "all_gather" || m_op.type == "reduce_scatter") {
        const int ax = axis(attr_int(m_op, "axis"), out.size(), "axis");
        auto& d = out[static_cast<size_t>(ax)];
        if (m_op.type == "all_gather")
            d *= ranks;
        else if (d % ranks)
            bad("axis " + std::to_string(ax) + " of " + named(0) + " does not divide into " + std::to_string(ranks) +
                " ranks");
        else
            d /= ranks;
    }
    return one(out, t0);
}

std::vector<out_desc> inference::infer_optimizer() const {
    const size_t n = n_in();
    const size_t n_out = m_op.outputs.size();
    // Outputs are the updated versions of the weight and the optimizer states, in input order (the
    // gradient, input 1, is consumed).
    for (size_t i = 1; i < n; ++i)
        if (in(i).elements() != in(0).elements())
            bad("input " + named(i) + " must have as many elements as the weight " + named(0));
    std::vector<out_desc> outs;
    for (size_t i = 0; i < n_out; ++i) {
        const size_t src = i == 0 ? 0 : i + 1;
        if (src >= n) bad("has more outputs than updated inputs");
        outs.push_back({shape(src), in(src).type});
    }
    return outs;
}

/// The outputs' declared shapes, for ops whose shapes cannot be inferred.
std::vector<out_desc> inference::infer_declared() const {
    const size_t n_out = m_op.outputs.size();
    std::vector<out_desc> v;
    for (size_t o = 0; o < n_out; ++o) {
        if (!declared(o))
            bad("the shape of output '" + m_g.tensor(m_op.outputs[o]).name +
                "' cannot be inferred for this op: declare it under tensors:");
        v.push_back({declared_shape(o), m_g.tensor(m_op.outputs[o]).type});
    }
    return v;
}

std::vector<out_desc> inference::infer() {
    const op_type_info* info = find_op_type(m_op.type);
    const dtype t0 = first_type();
    if (m_op.kind == op_kind::generic || m_op.kind == op_kind::shape_only) return infer_declared();
    if (!info) bad("unknown op type");

    if (m_op.type == "matmul") return infer_matmul();
    if (m_op.type == "conv2d" || m_op.type == "conv2d_grad_input" || m_op.type == "conv2d_grad_weight")
        return infer_conv();
    switch (info->kind) {
        case op_kind::pool:
            return infer_pool();
        case op_kind::elementwise:
            return infer_elementwise();
        case op_kind::reduce:
            return infer_reduce();
        case op_kind::softmax:
            axis(attr_int(m_op, "axis", -1), shape(0).size(), "axis");
            return one(shape(0), t0);
        case op_kind::layernorm:
            return infer_layernorm();
        case op_kind::batchnorm:
            return infer_batchnorm();
        case op_kind::attention:
            return infer_attention();
        case op_kind::embedding:
            return infer_embedding();
        case op_kind::gather:
            return infer_gather();
        case op_kind::reshape:
            return infer_reshape();
        case op_kind::transpose:
            return infer_transpose();
        case op_kind::concat:
            return infer_concat();
        case op_kind::split:
            return infer_split();
        case op_kind::slice:
            return infer_slice();
        case op_kind::collective:
            return infer_collective();
        case op_kind::optimizer:
            return infer_optimizer();
        default:
            break;
    }
    bad("cannot infer shapes for this op");
}

std::vector<out_desc> inference::infer_grad() {
    // "<type>_grad": inputs are the output gradient(s) and the forward tensors it reads; `like` names, per
    // output, the input whose shape and type the gradient has.
    const auto like = attr_ints(m_op, "like");
    if (like.size() != m_op.outputs.size())
        bad("'like' must name one input per output (" + std::to_string(m_op.outputs.size()) + ")");
    std::vector<out_desc> outs;
    for (auto l : like) {
        if (l < 0 || static_cast<size_t>(l) >= n_in()) bad("'like' index " + std::to_string(l) + " is not an input");
        outs.push_back({shape(static_cast<size_t>(l)), in(static_cast<size_t>(l)).type});
    }
    return outs;
}

void inference::run() {
    for (size_t i = 0; i < m_op.inputs.size(); ++i)
        if (m_op.inputs[i] < 0) bad("input " + std::to_string(i) + " is missing");
    const op_type_info* info = m_op.kind == op_kind::generic || m_op.kind == op_kind::shape_only
                                   ? find_op_type(op_kind_name(m_op.kind))
                                   : find_op_type(m_op.type);
    if (!info) bad("unknown op type");
    const auto n = static_cast<int>(n_in());
    if (n < info->min_inputs || (info->max_inputs >= 0 && n > info->max_inputs && !is_grad_type(m_op.type)))
        bad("takes " + std::to_string(info->min_inputs) +
            (info->max_inputs == info->min_inputs ? std::string()
             : info->max_inputs < 0               ? " or more"
                                                  : " to " + std::to_string(info->max_inputs)) +
            " inputs, got " + std::to_string(n));
    const auto outs = is_grad_type(m_op.type) ? infer_grad() : infer();
    if (outs.size() != m_op.outputs.size())
        bad("produces " + std::to_string(outs.size()) + " outputs, " + std::to_string(m_op.outputs.size()) +
            " are named");
    for (size_t o = 0; o < outs.size(); ++o) {
        auto& t = m_g.tensors()[static_cast<size_t>(m_op.outputs[o])];
        for (auto d : outs[o].shape)
            if (d < 0) bad("output '" + t.name + "' would have a negative size: " + shape_str(outs[o].shape));
        try {
            (void)checked_elements(outs[o].shape, "output '" + t.name + "'");
        } catch (const input_error& e) {
            bad(e.message());
        }
        if (declared(o)) {
            if (t.shape != outs[o].shape)
                bad("output '" + t.name + "' is declared " + shape_str(t.shape) + " but the op produces " +
                    shape_str(outs[o].shape));
            continue;
        }
        t.shape = outs[o].shape;
        t.type = outs[o].type;
    }
    // A fused epilogue works on the host's output; its extra inputs must broadcast to it.
    size_t next = m_op.own_inputs();
    for (const auto& f : m_op.fused) {
        for (int k = 0; k < f.extra_inputs; ++k, ++next) {
            const auto& x = m_g.tensor(m_op.inputs[next]);
            const shape_t& y = m_g.tensor(m_op.outputs[0]).shape;
            if (broadcast_shapes(y, x.shape) != y)
                bad("fused '" + f.name + "' input '" + x.name + "' (" + shape_str(x.shape) +
                    ") does not broadcast to " + shape_str(y));
        }
    }
}

}  // namespace

void infer_op(workload_graph& g, int index, const std::vector<char>& declared) { inference(g, index, declared).run(); }

}  // namespace tessel
