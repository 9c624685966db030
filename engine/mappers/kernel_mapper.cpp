#include "engine/mappers/kernel_mapper.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "engine/mappers/eager_kernels.h"
#include "engine/mappers/toolkit/allocator.h"
#include "engine/mappers/toolkit/liveness.h"
#include "engine/mappers/toolkit/parts.h"
#include "engine/workload/op_types.h"

namespace tessel {

void kernel_mapper::options::declare(param_decl& d) {
    d(device, "device", "", "the component group that runs the kernels (default: the first that does: a gpu or tpu)");
    d.choice(framework, "framework", "ops", {"ops", "eager"},
             "ops: one kernel per op of the graph; eager: the kernels eager PyTorch (cuDNN, Hugging Face model code, "
             "torch.optim's foreach optimizers) launches for each op: NCHW<->NHWC conversions around convolutions, "
             "batch norm's per-channel statistics, RMSNorm on an fp32 copy, cross-entropy on fp32 logits, "
             "multi-tensor optimizer passes");
    d.choice(fuse, "fuse", "none", {"none", "elementwise"},
             "none: one kernel per op; elementwise: elementwise ops and inference batchnorm run in the epilogue of "
             "the kernel producing their input (torch.compile, XLA)");
    d.choice(softmax, "softmax", "pytorch", {"pytorch", "megatron"},
             "pytorch: the softmax kernel ATen picks by row length (a warp per row up to 1024 elements, else a "
             "1024-thread CTA per row); megatron: Megatron-LM's fused scale-mask-softmax kernel (a warp per row, the "
             "row in registers, one pass) for rows of up to 2048 elements, PyTorch's beyond");
    d(strided_views, "strided_views", "true",
      "transposes, slices and splits that only feed matrix products are read in place (strided operands), not copied");
    d(float16_as, "float16_as", "",
      "run fp16 ops in this type instead (bf16 on TPUs, whose MXUs multiply bf16); empty: as the workload says");
    d(host_ops, "host_ops", "",
      "op types the device's compiler does not take, comma-separated: each runs on the host CPU, its operands "
      "copied over the host link and its results back (Inferentia's CPU fallback); the device must model a host; "
      "empty or none: every op runs on the device");
}

namespace {

/// Transcendental evaluations per element of an elementwise op type.
double special_per_element(const std::string& type) {
    static const std::set<std::string> one = {"gelu", "silu",  "sigmoid", "tanh", "erf",        "exp", "log",
                                              "sqrt", "rsqrt", "sin",     "cos",  "reciprocal", "div", "pow"};
    if (one.count(type)) return 1;
    if (type == "softplus") return 2;
    return 0;
}

double elements(const tensor_info& t) { return static_cast<double>(t.elements()); }

bool is_product(const op_node& op) { return op.kind == op_kind::matmul || op.kind == op_kind::attention; }

/// Whether every reader of tensor t (through views) is a matrix product that can take it strided.
bool feeds_only_products(const workload_graph& g, int t, int depth = 0) {
    const tensor_info& ti = g.tensor(t);
    if (ti.consumers.empty() || ti.role == tensor_role::output || depth > 8) return false;
    for (int c : ti.consumers) {
        const op_node& op = g.op(c);
        if (is_product(op)) continue;
        if (is_view(op) || op.kind == op_kind::transpose) {
            for (int o : op.outputs)
                if (!feeds_only_products(g, o, depth + 1)) return false;
            continue;
        }
        return false;
    }
    return true;
}

void add_row_info(const workload_graph& g, const op_node& op, kernel_desc& d) {
    if (op.outputs.empty() || op.inputs.empty()) return;
    const tensor_info& x = g.tensor(op.inputs[0]);
    if (x.shape.empty()) return;
    int passes = 0;
    double special_rows = 0, special_elems = 0;
    switch (op.kind) {
        case op_kind::softmax:
            passes = 2;
            special_elems = 1;
            break;  // max, then sum of exp
        case op_kind::layernorm:
            passes = 2;
            special_rows = 1;
            break;  // mean and variance (Welford), then normalise
        case op_kind::reduce:
            passes = 1;
            break;
        default:
            return;
    }
    std::int64_t axis = static_cast<std::int64_t>(x.shape.size()) - 1;
    if (op.kind == op_kind::softmax && has_attr(op, "axis")) {
        axis = attr_int(op, "axis", -1);
        if (axis < 0) axis += static_cast<std::int64_t>(x.shape.size());
    }
    std::int64_t cols = 1;
    if (op.kind == op_kind::reduce) {
        // The reduced axes (all when none are named) form the row.
        const auto axes = attr_ints(op, "axes");
        if (axes.empty()) cols = x.elements();
        const auto rank = static_cast<std::int64_t>(x.shape.size());
        for (auto a : axes) {
            const std::int64_t ax = a < 0 ? a + rank : a;
            if (ax >= 0 && ax < rank) cols *= x.shape[static_cast<size_t>(ax)];  // shape inference rejects others
        }
    } else {
        cols = x.shape[static_cast<size_t>(
            std::clamp<std::int64_t>(axis, 0, static_cast<std::int64_t>(x.shape.size()) - 1))];
    }
    cols = std::max<std::int64_t>(1, cols);
    d.rows = std::max<std::int64_t>(1, x.elements() / cols);
    d.cols = cols;
    // The kernels PyTorch picks (their names are in validation/gpu/h100_operators.jsonl; the choice is
    // host_softmax in ATen's SoftMax.cu). Softmax: rows of up to 1024 elements (and 4 KiB) one warp each, max
    // and sum by warp shuffles in one pass; longer rows one 1024-thread CTA each, held in registers while a
    // thread holds fewer than 10 elements, else in shared memory while the row fits the CTA's 48 KiB (and is a
    // whole number of 16-byte vectors), else read three times (max; sum of exponentials; output). Layer and
    // RMS norm read the row for its statistics, then again to normalise it.
    const double elem_bytes = dtype_bits(x.type) / 8.0;
    const double row_bytes = static_cast<double>(cols) * elem_bytes;
    int rereads = 0;
    if (op.kind == op_kind::softmax) {
        const double per_vector = std::max(1.0, 16 / elem_bytes);
        const double reduction_bytes = 1024.0 / 32 * 4;  // one FP32 partial per warp
        if (cols <= 1024 && row_bytes <= 4096) {
            d.row_kind = row_kernel::warp;
            passes = 1;
        } else if (std::ceil(static_cast<double>(cols) / 1024) < 10) {
            d.row_kind = row_kernel::registers;
        } else if (row_bytes + reduction_bytes <= 48.0 * 1024 &&
                   std::fmod(static_cast<double>(cols), per_vector) == 0) {
            d.row_kind = row_kernel::shared;
        } else {
            d.row_kind = row_kernel::blocked;
            rereads = 2;
        }
    } else if (op.kind == op_kind::layernorm) {
        rereads = 1;
        // One kernel for both (ATen's vectorized_layer_norm_kernel<T, T_ACC, rms_norm>): layer norm's statistics
        // update a running mean and variance per element (Welford: a division each); RMS norm only sums squares.
        d.row_kind = op.type == "layernorm" ? row_kernel::welford : row_kernel::norm;
    }
    d.passes = passes;
    d.rereads = rereads;
    d.special_ops += special_elems * elements(x) + special_rows * static_cast<double>(d.rows);
}

/// Megatron-LM's fused softmax (SC21: "custom kernels that enable the fusion of scale, mask, and softmax"):
/// each warp holds a row of up to 2048 elements in registers and reduces it by shuffles, as PyTorch's warp kernel
/// does for rows of up to 1024; longer rows (beyond its kernels of the time) run PyTorch's.
void use_megatron_softmax(kernel_desc& d) {
    const bool softmax =
        d.row_kind == row_kernel::registers || d.row_kind == row_kernel::shared || d.row_kind == row_kernel::blocked;
    if (!softmax || d.cols > 2048) return;
    d.row_kind = row_kernel::warp;
    d.passes = 1;
    d.rereads = 0;
}

/// Bytes op `o` reads of its input number i (index-based reads touch only what they select).
double read_bytes(const workload_graph& g, const op_node& op, size_t i) {
    const tensor_info& ti = g.tensor(op.inputs[i]);
    const double whole = static_cast<double>(ti.bytes());
    if ((op.kind == op_kind::embedding || op.kind == op_kind::gather || op.kind == op_kind::slice) && i == 0) {
        double others = 0;
        for (size_t j = 1; j < op.inputs.size(); ++j)
            if (g.tensor(op.inputs[j]).role != tensor_role::constant)
                others += static_cast<double>(g.tensor(op.inputs[j]).bytes());
        return std::clamp(op.cost.bytes_in + op.cost.bytes_weight - others, 0.0, whole);
    }
    return whole;
}

}  // namespace

lowered_kernel lower_op(const workload_graph& g, int o, const address_fn& address_of, std::optional<dtype> compute_type,
                        const type_fn& type_of) {
    const op_node& op = g.op(o);
    lowered_kernel k;
    k.ops = {o};
    k.w = op.to_work();
    if (compute_type) k.w.type = *compute_type;
    k.desc.name = op.name;
    // A tensor held in another type than the graph's (autocast) moves that type's bytes.
    auto scale = [&](int t) {
        if (!type_of) return 1.0;
        const dtype held = type_of(t), declared = g.tensor(t).type;
        return held == declared ? 1.0 : static_cast<double>(dtype_bits(held)) / dtype_bits(declared);
    };
    double in_declared = 0, in_held = 0, out_declared = 0, out_held = 0;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
        const int t = op.inputs[i];
        if (g.tensor(t).role == tensor_role::constant) continue;
        const double b = read_bytes(g, op, i);
        in_declared += b;
        in_held += b * scale(t);
        if (b > 0) k.desc.operands.push_back(kernel_operand{address_of(t), b * scale(t), false});
    }
    for (int t : op.outputs) {
        const double b = static_cast<double>(g.tensor(t).bytes());
        out_declared += b;
        out_held += b * scale(t);
        if (b > 0) k.desc.operands.push_back(kernel_operand{address_of(t), b * scale(t), true});
    }
    if (in_declared > 0 && in_held != in_declared) {
        k.w.bytes_in *= in_held / in_declared;
        k.w.bytes_weight *= in_held / in_declared;
    }
    if (out_declared > 0 && out_held != out_declared) k.w.bytes_out *= out_held / out_declared;
    if (!op.outputs.empty()) {
        const double out = elements(g.tensor(op.outputs[0]));
        if (op.kind == op_kind::elementwise) k.desc.special_ops += special_per_element(op.type) * out;
        for (const auto& f : op.fused) k.desc.special_ops += special_per_element(f.type) * out;
    }
    add_row_info(g, op, k.desc);
    if (op.type == "conv2d") {
        // cuDNN runs a convolution with a window or a stride as an implicit-GEMM kernel that does not split K
        // (h100_operators.jsonl: one kernel even for 1x512x7x7 3x3, K = 4608); 1x1 stride-1 ones are GEMMs.
        const auto& wshape = g.tensor(op.inputs[1]).shape;
        const auto stride = attr_ints(op, "stride");
        const bool window = wshape.size() == 4 && wshape[2] * wshape[3] > 1;
        const bool strided = std::any_of(stride.begin(), stride.end(), [](std::int64_t v) { return v > 1; });
        if (window || strided) k.desc.split_k = false;
    }
    if (op.kind == op_kind::attention) k.desc.causal = attr_int(op, "causal", 0) != 0;
    return k;
}

std::string layer_of(const std::string& name) {
    size_t pos = 0;
    bool first = true;
    while (pos < name.size()) {
        size_t dot = name.find('.', pos);
        if (dot == std::string::npos) dot = name.size();
        const std::string seg = name.substr(pos, dot - pos);
        const bool numeric = !seg.empty() && std::all_of(seg.begin(), seg.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        });
        if (numeric && !first) return name.substr(0, dot);
        first = false;
        pos = dot + 1;
    }
    const size_t dot = name.find('.');
    return dot == std::string::npos ? name : name.substr(0, dot);
}

std::uint32_t kernel_mapper::find_device(const platform& plat, const std::string& group) {
    const toolkit::part_query q{"kernels mapper", "device", "a device that runs kernels (a gpu or tpu)",
                                toolkit::runs_kernels};
    return toolkit::find_part(plat, group, q).ids.front();
}

std::uint64_t kernel_mapper::memory_capacity(const platform& plat) const {
    return plat.comp(find_device(plat, m_opt.device)).kernels()->memory_capacity();
}

namespace {

/// What one run of the kernels mapper does, from its options checked against the device.
struct run_choices {
    std::optional<dtype> half_as;      // the type fp16 ops run in instead (mapper.float16_as)
    bool fuse = false;                 // elementwise ops run in the epilogue of the kernel before (mapper.fuse)
    bool eager = false;                // the kernels eager PyTorch launches (mapper.framework)
    std::set<std::string> host_types;  // op types that run on the host CPU (mapper.host_ops)
};

/// The op types of mapper.host_ops: comma-separated, spaces and brackets trimmed, "none" skipped.
std::set<std::string> parse_host_ops(const std::string& list) {
    std::set<std::string> host_types;
    for (size_t at = 0; at <= list.size();) {
        size_t end = list.find(',', at);
        if (end == std::string::npos) end = list.size();
        std::string t = list.substr(at, end - at);
        t.erase(0, t.find_first_not_of(" \t[]"));
        t.erase(t.find_last_not_of(" \t[]") + 1);
        if (!t.empty() && t != "none") host_types.insert(t);
        at = end + 1;
    }
    return host_types;
}

/// Reads and checks the options against the device (component `dev_id` of `plat`).
run_choices choose_run(const kernel_mapper::options& opt, const platform& plat, std::uint32_t dev_id,
                       const kernel_device& dev) {
    run_choices run;
    if (!opt.float16_as.empty()) {
        run.half_as = parse_dtype(opt.float16_as);
        if (!run.half_as)
            throw input_error("mapper.float16_as: unknown data type '" + opt.float16_as + "' (" + dtype_list() + ")");
    }
    run.fuse = opt.fuse == "elementwise";
    run.eager = opt.framework == "eager";
    run.host_types = parse_host_ops(opt.host_ops);
    if (!run.host_types.empty() && !dev.has_host())
        throw input_error("mapper.host_ops: '" + plat.title() + "' runs kernels on a " + plat.comp(dev_id).kind_name() +
                          " with no host CPU modelled (its host.flops_per_cycle is 0), so no op can fall back to one");
    if (run.eager && plat.comp(dev_id).kind_name() != "gpu")
        throw input_error("mapper.framework eager launches the kernels eager PyTorch launches on a GPU; '" +
                          plat.title() + "' runs kernels on a " + plat.comp(dev_id).kind_name() +
                          " (use framework: ops)");
    if (run.eager && run.fuse)
        throw input_error(
            "mapper.framework eager runs every op as eager PyTorch does, unfused: mapper.fuse must be none");
    return run;
}

/// The working state of one run: device memory (tensors and the eager kernels' temporaries), the kernels lowered
/// so far and the program steps they become, one stream, op after op in topological order.
class kernel_lowering {
public:
    kernel_lowering(const workload_graph& graph, const kernel_mapper::options& options, const run_choices& choices,
                    program& target, std::uint32_t device, std::uint64_t capacity);
    kernel_lowering(const kernel_lowering&) = delete;
    kernel_lowering& operator=(const kernel_lowering&) = delete;

    /// Lowers op `o`: storage shared with its input, an epilogue of the kernel before, or kernels of its own.
    void lower(int o);
    /// Closes the last kernel, then launches the optimizer steps held back to the end (eager).
    void finish();
    /// Fills `out`'s details, record and notes (and samples) with what was lowered on `dev`.
    void describe(mapping& out, const kernel_device& dev) const;

    const toolkit::address_allocator& memory() const { return mem; }

private:
    const workload_graph& g;
    const kernel_mapper::options& opt;
    const run_choices& run;
    program& prog;
    const std::uint32_t dev_id;

    // Storage: every tensor lives in its root's allocation (views alias their input), freed after its last read
    // unless it holds parameters, state or graph inputs.
    toolkit::tensor_liveness live;
    std::vector<bool> pinned, allocated;
    std::vector<std::uint64_t> addr;
    // Device memory: best fit over the freed ranges, 512-byte blocks (a caching allocator without size classes).
    toolkit::address_allocator mem;
    const address_fn address_of;

    std::vector<lowered_kernel> kernels;
    std::vector<std::uint32_t> kernel_step;
    int views = 0, fused = 0;
    std::vector<int> pending_release;            // inputs of the last kernel, released when it is closed
    std::vector<std::uint64_t> pending_scratch;  // temporaries of the last op's eager kernels
    const eager_storage storage;
    std::vector<int> optimizer_ops;  // eager: torch.optim steps after the backward pass, all parameters at once
    autocast_plan autocast;
    std::map<std::string, int> fell_back;

    bool on_host(const op_node& op) const {
        return run.host_types.count(op.type.empty() ? op_kind_name(op.kind) : op.type) != 0;
    }
    std::optional<dtype> type_for(const op_node& op) const {
        if (run.half_as && op.compute_type == dtype::fp16) return run.half_as;
        return std::nullopt;
    }

    std::uint64_t ensure(int t);
    void release(int t);
    void alias(int to, int from);
    void place_resident();

    void close_kernel();
    void push_kernels(std::vector<lowered_kernel> ks, const std::vector<int>& inputs);
    std::vector<lowered_kernel> autocast_kernels(int o);

    bool in_place(const op_node& op) const;
    void alias_view(const op_node& op);
    bool fuse_epilogue(int o);
    void launch(int o);
};

kernel_lowering::kernel_lowering(const workload_graph& graph, const kernel_mapper::options& options,
                                 const run_choices& choices, program& target, std::uint32_t device,
                                 std::uint64_t capacity)
    : g(graph),
      opt(options),
      run(choices),
      prog(target),
      dev_id(device),
      live(graph),
      pinned(graph.tensors().size(), false),
      allocated(graph.tensors().size(), false),
      addr(graph.tensors().size(), 0),
      mem({capacity, 512, 0, 1}),
      address_of([this](int t) { return ensure(t); }),
      storage{address_of,
              [this](double bytes) {
                  const std::uint64_t a = mem.alloc(static_cast<std::uint64_t>(std::ceil(bytes)));
                  pending_scratch.push_back(a);
                  return a;
              },
              {}} {
    place_resident();
    autocast = run.eager ? plan_autocast(g) : autocast_plan{};
}

std::uint64_t kernel_lowering::ensure(int t) {
    const auto r = static_cast<size_t>(live.root(t));
    if (!allocated[r]) {
        addr[r] = mem.alloc(g.tensor(static_cast<int>(r)).bytes());
        allocated[r] = true;
    }
    return addr[r];
}

void kernel_lowering::release(int t) {
    live.read(t, [&](int r) {
        if (!pinned[static_cast<size_t>(r)] && allocated[static_cast<size_t>(r)]) {
            mem.free(addr[static_cast<size_t>(r)]);
            allocated[static_cast<size_t>(r)] = false;
        }
    });
}

void kernel_lowering::alias(int to, int from) {
    live.share(to, from);
    if (g.tensor(to).role != tensor_role::activation) pinned[static_cast<size_t>(live.root(from))] = true;
}

/// Pins what is not an activation, and places parameters, state and graph inputs (and tensors that alias
/// another) before the first kernel.
void kernel_lowering::place_resident() {
    const size_t nt = g.tensors().size();
    for (size_t t = 0; t < nt; ++t) pinned[t] = g.tensors()[t].role != tensor_role::activation;
    // Parameters, state and graph inputs are in device memory before the first kernel.
    for (size_t t = 0; t < nt; ++t) {
        const tensor_role r = g.tensors()[t].role;
        if (r == tensor_role::weight || r == tensor_role::state || r == tensor_role::input) {
            if (g.tensors()[t].alias_of >= 0) continue;
            ensure(static_cast<int>(t));
        }
    }
    for (size_t t = 0; t < nt; ++t)
        if (g.tensors()[t].alias_of >= 0) {
            if (g.tensors()[t].producer >= 0) live.share(static_cast<int>(t), g.tensors()[t].alias_of);
            ensure(static_cast<int>(t));
        }
}

/// Turns the last kernel into a step (after the one before) unless it is one already, then releases its inputs
/// and temporaries.
void kernel_lowering::close_kernel() {
    if (kernels.empty()) return;
    lowered_kernel& k = kernels.back();
    if (kernel_step.size() < kernels.size()) {
        const std::uint32_t opi = prog.intern_op(k.own_name ? k.desc.name : g.op(k.ops.front()).name);
        std::vector<std::uint32_t> after;
        if (!kernel_step.empty()) after.push_back(kernel_step.back());
        const std::uint32_t s = prog.add_compute(opi, endpoint{dev_id, 0, 0}, prog.add_work(k.w), after);
        kernel_step.push_back(s);
        if (opt.softmax == "megatron") use_megatron_softmax(k.desc);
        prog.set_payload(s, std::make_shared<kernel_desc>(k.desc));
    }
    for (int t : pending_release) release(t);
    pending_release.clear();
    for (std::uint64_t a : pending_scratch) mem.free(a);
    pending_scratch.clear();
}

// An op that runs as several kernels: each is closed before the next; the op's inputs and temporaries are
// released after the last.
void kernel_lowering::push_kernels(std::vector<lowered_kernel> ks, const std::vector<int>& inputs) {
    std::vector<std::uint64_t> scratch;
    scratch.swap(pending_scratch);
    for (size_t i = 0; i < ks.size(); ++i) {
        kernels.push_back(std::move(ks[i]));
        if (i + 1 < ks.size()) close_kernel();
    }
    pending_scratch = std::move(scratch);
    for (int t : inputs) pending_release.push_back(t);
}

// An op under autocast: the casts before it (a weight's first use, inputs in another type), its kernels
// reading and writing each tensor in the type autocast gives it, and the casts of its outputs after it.
std::vector<lowered_kernel> kernel_lowering::autocast_kernels(int o) {
    const auto& plan = autocast.ops[static_cast<size_t>(o)];
    const op_node& op = g.op(o);
    auto held = [&](int t) { return autocast.held[static_cast<size_t>(t)]; };
    auto bytes = [&](int t, dtype ty) {
        return static_cast<double>(dtype_bytes(ty, static_cast<std::uint64_t>(g.tensor(t).elements())));
    };
    std::map<int, std::uint64_t> moved;
    std::map<int, dtype> as;
    std::vector<lowered_kernel> before, after;
    auto cast = [&](const std::string& name, std::uint64_t from, double from_bytes, std::uint64_t to, double to_bytes,
                    dtype ty) {
        return stream_kernel(o, name, op_class::data_movement, ty, {{from, from_bytes, false}, {to, to_bytes, true}});
    };
    for (const auto& [w, m] : plan.weight_casts)
        before.push_back(cast(g.tensor(w).name + ".autocast", ensure(m >= 0 ? m : w), bytes(w, dtype::fp32), ensure(w),
                              bytes(w, held(w)), held(w)));
    for (const auto& [t, ty] : plan.cast_in) {
        const std::uint64_t a = storage.scratch(bytes(t, ty));
        before.push_back(cast(op.name + ".autocast_in", ensure(t), bytes(t, held(t)), a, bytes(t, ty), ty));
        moved[t] = a;
        as[t] = ty;
    }
    for (const auto& [t, ty] : plan.read_as) as[t] = ty;
    for (const auto& [t, ty] : plan.cast_out) {
        const std::uint64_t a = storage.scratch(bytes(t, ty));
        after.push_back(cast(op.name + ".autocast_out", a, bytes(t, ty), ensure(t), bytes(t, held(t)), held(t)));
        moved[t] = a;
        as[t] = ty;
    }
    eager_storage here = storage;
    here.tensor = [&, moved](int t) {
        const auto it = moved.find(t);
        return it != moved.end() ? it->second : ensure(t);
    };
    here.type_of = [&, as](int t) {
        const auto it = as.find(t);
        return it != as.end() ? it->second : held(t);
    };
    const std::optional<dtype> compute = plan.compute ? plan.compute : type_for(op);
    auto ks = eager_kernels(g, o, here, compute);
    if (ks.empty()) ks.push_back(lower_op(g, o, here.tensor, compute, here.type_of));
    before.insert(before.end(), std::make_move_iterator(ks.begin()), std::make_move_iterator(ks.end()));
    before.insert(before.end(), std::make_move_iterator(after.begin()), std::make_move_iterator(after.end()));
    return before;
}

// Views (is_view, the workload's one rule), and with strided_views the transposes, slices and splits only
// matrix products read (this mapper's policy: cuBLAS and XLA take such operands in place): the output is
// the input's storage.
bool kernel_lowering::in_place(const op_node& op) const {
    const bool strided = opt.strided_views &&
                         (op.kind == op_kind::transpose || op.kind == op_kind::slice || op.kind == op_kind::split) &&
                         [&] {
                             for (int t : op.outputs)
                                 if (!feeds_only_products(g, t)) return false;
                             return true;
                         }();
    return is_view(op) || strided;
}

void kernel_lowering::alias_view(const op_node& op) {
    const int src = view_source(g, op);
    for (int t : op.outputs) {
        if (src >= 0)
            alias(t, src);
        else
            ensure(t);
    }
    for (int t : op.inputs) release(t);
    ++views;
}

// Epilogue fusion into the kernel just before: whether op `o` joined it.
bool kernel_lowering::fuse_epilogue(int o) {
    const op_node& op = g.op(o);
    if (!(run.fuse && !kernels.empty() && (op.kind == op_kind::elementwise || op.kind == op_kind::batchnorm) &&
          op.phase != op_phase::backward && !op.inputs.empty() && op.outputs.size() == 1 && !on_host(op) &&
          !kernels.back().desc.host))
        return false;
    lowered_kernel& k = kernels.back();
    const op_node& host = g.op(k.ops.back());
    const int x = op.inputs[0];
    const tensor_info& xi = g.tensor(x);
    const bool from_last = xi.producer == k.ops.back() && host.outputs.size() == 1 && host.outputs[0] == x;
    if (!(from_last && xi.consumers.size() == 1 && xi.role == tensor_role::activation &&
          xi.elements() == g.tensor(op.outputs[0]).elements()))
        return false;
    // The host no longer writes x; the kernel writes op's output and reads op's other inputs.
    auto& ops = k.desc.operands;
    ops.erase(std::remove_if(ops.begin(), ops.end(),
                             [&](const kernel_operand& e) {
                                 return e.write && e.address == addr[static_cast<size_t>(live.root(x))];
                             }),
              ops.end());
    // x is never written, so never read: its storage goes back now (its one read never comes).
    if (allocated[static_cast<size_t>(live.root(x))] && live.root(x) == x) {
        mem.free(addr[static_cast<size_t>(x)]);
        allocated[static_cast<size_t>(x)] = false;
    }
    double extra_bytes = 0;
    for (size_t i = 1; i < op.inputs.size(); ++i) {
        const int t = op.inputs[i];
        if (g.tensor(t).role == tensor_role::constant) continue;
        const double b = read_bytes(g, op, i);
        ops.push_back(kernel_operand{ensure(t), b, false});
        extra_bytes += b;
        pending_release.push_back(t);
    }
    const int y = op.outputs[0];
    ops.push_back(kernel_operand{ensure(y), static_cast<double>(g.tensor(y).bytes()), true});
    k.w.vector_ops += op.cost.flops;
    k.w.bytes_in += extra_bytes;
    k.w.bytes_out += static_cast<double>(g.tensor(y).bytes()) - static_cast<double>(xi.bytes());
    k.desc.special_ops += special_per_element(op.type) * elements(g.tensor(y));
    k.desc.name += "+" + op.name;
    k.ops.push_back(o);
    ++fused;
    return true;
}

// Op `o` as kernels of its own, after the kernel before has closed.
void kernel_lowering::launch(int o) {
    const op_node& op = g.op(o);
    // An optimizer updates in place: its outputs (the weight, then its state) are its inputs less the
    // gradient (engine/workload/training.cpp), not new storage beside them.
    if (op.kind == op_kind::optimizer && op.inputs.size() == op.outputs.size() + 1)
        for (size_t i = 0; i < op.outputs.size(); ++i) {
            const int in = op.inputs[i == 0 ? 0 : i + 1];
            if (g.tensor(in).bytes() == g.tensor(op.outputs[i]).bytes()) alias(op.outputs[i], in);
        }
    if (run.eager && op.kind == op_kind::optimizer) {
        optimizer_ops.push_back(o);
        return;
    }
    if (run.eager && autocast.active) {
        push_kernels(autocast_kernels(o), op.inputs);
        return;
    }
    if (run.eager) {
        auto ks = eager_kernels(g, o, storage, type_for(op));
        if (!ks.empty()) {
            push_kernels(std::move(ks), op.inputs);
            return;
        }
    }
    kernels.push_back(lower_op(g, o, address_of, type_for(op)));
    if (on_host(op)) {
        kernels.back().desc.host = true;
        ++fell_back[op.type.empty() ? op_kind_name(op.kind) : op.type];
    }
    for (int t : op.inputs) pending_release.push_back(t);
}

void kernel_lowering::lower(int o) {
    const op_node& op = g.op(o);
    if (in_place(op)) {
        alias_view(op);
        return;
    }
    if (fuse_epilogue(o)) return;
    close_kernel();
    launch(o);
}

void kernel_lowering::finish() {
    close_kernel();
    if (!optimizer_ops.empty()) {
        std::vector<int> inputs;
        for (int o : optimizer_ops) inputs.insert(inputs.end(), g.op(o).inputs.begin(), g.op(o).inputs.end());
        eager_storage held = storage;
        if (autocast.active) held.type_of = [&](int t) { return autocast.held[static_cast<size_t>(t)]; };
        push_kernels(foreach_optimizer(g, optimizer_ops, held), inputs);
        close_kernel();
    }
}

void kernel_lowering::describe(mapping& out, const kernel_device& dev) const {
    nlohmann::json ks = nlohmann::json::array();
    for (size_t i = 0; i < kernels.size(); ++i) {
        nlohmann::json k;
        k["step"] = kernel_step[i];
        k["name"] = kernels[i].desc.name;
        std::vector<std::string> names;
        for (int o : kernels[i].ops) names.push_back(g.op(o).name);
        k["ops"] = names;
        k["class"] = op_class_name(kernels[i].w.cls);
        ks.push_back(k);
    }
    out.details["mapper"] = "kernels";
    out.details["device"] = dev.summary();
    out.details["kernels"] = ks;
    out.details["device_memory_bytes"] = mem.high_water();
    auto planned = std::make_shared<kernel_mapping_record>();
    planned->device = dev_id;
    out.record = planned;
    out.notes.push_back(dev.summary());
    out.notes.push_back(std::to_string(kernels.size()) + " kernels for " + std::to_string(g.ops().size()) + " ops (" +
                        std::to_string(views) + " views or free ops, " + std::to_string(fused) +
                        " fused into epilogues); device memory " + format_bytes(static_cast<double>(mem.high_water())));
    if (run.eager)
        out.notes.emplace_back("framework eager: the kernels eager PyTorch launches for each op (mapper.framework)");
    if (run.half_as)
        out.notes.push_back("fp16 ops run in " + std::string(dtype_name(*run.half_as)) + " (mapper.float16_as)");
    if (!fell_back.empty()) {
        std::string n = "host fallback: ";
        int ops = 0;
        for (const auto& [t, c] : fell_back) {
            n += (ops ? ", " : "") + t + " x" + std::to_string(c);
            ops += c;
        }
        out.notes.push_back(n + " run on the host CPU over the host link (mapper.host_ops)");
    }
    out.samples = std::max(1.0, g.batch);
}

}  // namespace

mapping kernel_mapper::map(const workload_graph& g, const platform& plat) const {
    const std::uint32_t dev_id = find_device(plat, m_opt.device);
    const kernel_device* dev = plat.comp(dev_id).kernels();
    const run_choices run = choose_run(m_opt, plat, dev_id, *dev);
    mapping out;
    program& prog = out.prog;
    prog.name = g.name;

    kernel_lowering lowering(g, m_opt, run, prog, dev_id, dev->memory_capacity());
    for (int o : g.topological_order()) lowering.lower(o);
    lowering.finish();

    const toolkit::address_allocator& mem = lowering.memory();
    if (m_check_device_memory && mem.high_water() > mem.capacity() && mem.capacity() > 0)
        throw input_error("workload '" + g.name + "' needs " + format_bytes(static_cast<double>(mem.high_water())) +
                          " of device memory (weights, state, inputs and live activations) but '" + plat.title() +
                          "' has " + format_bytes(static_cast<double>(mem.capacity())));
    lowering.describe(out, *dev);
    return out;
}

TESSEL_REGISTER_MAPPER(make_mapper<kernel_mapper>(
    "kernels",
    "kernel after kernel on a GPU or TPU (eager frameworks, XLA): views not launched, optional epilogue "
    "fusion, a caching allocator for device memory; per-kernel and per-layer times"));

}  // namespace tessel
