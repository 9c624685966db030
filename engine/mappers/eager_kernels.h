// The kernels eager PyTorch launches, for the `kernels` mapper's `framework: eager`. A graph op is what a model
// computes; eager PyTorch (with cuDNN and Hugging Face model code) often runs it as several kernels, each
// reading and writing device memory: cuDNN converts NCHW tensors to NHWC around most convolutions, batch norm
// in training collects its statistics with one CTA per channel, Hugging Face's RMSNorm is eight kernels on an
// fp32 copy, cross-entropy runs on an fp32 copy of the logits, and torch.optim's default (foreach) optimizers
// update every parameter in several passes of multi-tensor launches. Which kernels each op becomes was read
// off the kernel names PyTorch's profiler recorded on an H100 (validation/gpu/h100_framework.jsonl) and
// PyTorch's own sources (torch/optim/adam.py and sgd.py, ATen's MultiTensorApply.cuh); each kernel is then
// timed by the device like any other, so nothing here is a fitted time.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "engine/mappers/kernel_mapper.h"

namespace tessel {

/// torch.autocast in a mixed-precision training step (framework: eager): parameters are fp32 (the master
/// weights; the graph's 16-bit weight tensors are autocast's cached copies, cast once per step at their first
/// use by a matrix product), matrix products and convolutions run in the 16-bit type and cast fp32 activations
/// first, layer norm, softmax and sums run in fp32 and cast 16-bit inputs first (PyTorch's autocast op lists),
/// and every other op computes in the widest type of its inputs (type promotion: a residual add of an fp32
/// stream and a 16-bit branch is fp32). A gradient has its tensor's type; a backward op computing in another
/// type casts its incoming gradient first and its outgoing gradients after (autograd's ToCopyBackward).
struct autocast_plan {
    bool active = false;
    dtype low = dtype::bf16;
    std::vector<dtype> held;  // per tensor: its type when the kernels run
    struct op_plan {
        std::optional<dtype> compute;                 // the type the op computes in, when not its own
        std::vector<std::pair<int, dtype>> read_as;   // inputs read in another type than `held` (saved casts)
        std::vector<std::pair<int, dtype>> cast_in;   // inputs cast to this type by a kernel before the op
        std::vector<std::pair<int, dtype>> cast_out;  // outputs computed in this type, cast to `held` after
        std::vector<std::pair<int, int>>
            weight_casts;  // (weight, its fp32 master or -1) cast before the op (first use)
    };
    std::vector<op_plan> ops;
};

/// The autocast plan of `g` (inactive unless `g` is a training step in a 16-bit precision, which the training
/// expansion always gives fp32 master weights).
autocast_plan plan_autocast(const workload_graph& g);

/// Storage for the eager kernels: graph tensors where the mapper put them, temporaries (fp32 copies, NHWC
/// copies, the optimizer's scratch lists) from `scratch`, which the mapper frees once the op's kernels ran.
struct eager_storage {
    address_fn tensor;
    std::function<std::uint64_t(double bytes)> scratch;
    type_fn type_of;  // the type the op reads or writes each tensor in (empty: the graph's)
    dtype type(const workload_graph& g, int t) const { return type_of ? type_of(t) : g.tensor(t).type; }
    double bytes(const workload_graph& g, int t) const {
        return static_cast<double>(dtype_bytes(type(g, t), static_cast<std::uint64_t>(g.tensor(t).elements())));
    }
};

/// One streaming kernel of op `o`: reads and writes `operands` (its work's bytes are theirs), `vector_ops`
/// element operations and `special` transcendentals; traces name its step `name`.
lowered_kernel stream_kernel(int o, std::string name, op_class cls, dtype type, std::vector<kernel_operand> operands,
                             double vector_ops = 0, double special = 0);

/// The kernels eager PyTorch launches for op `o`, in order, where they differ from the single kernel
/// lower_op gives; empty where eager PyTorch runs that one kernel.
std::vector<lowered_kernel> eager_kernels(const workload_graph& g, int o, const eager_storage& s,
                                          std::optional<dtype> compute_type);

/// The multi-tensor launches of torch.optim's foreach Adam(W) or SGD (momentum) step over the optimizer ops
/// `ops` (one per parameter, as the training expansion builds them), in the order the optimizer runs them.
std::vector<lowered_kernel> foreach_optimizer(const workload_graph& g, const std::vector<int>& ops,
                                              const eager_storage& s);

/// The launches ATen's multi_tensor_apply makes for one foreach op over tensors of `numels` elements with
/// `depth` tensor lists (`scalar_list`: the op also takes one scalar per tensor): chunks of 65,536 elements,
/// at most 320 chunks and 110/64/48/36/30 tensors (96/64/... with a scalar list) per launch (the 4 KiB
/// kernel-argument limits). Each launch: for each tensor in it, its first element and element count.
struct foreach_launch {
    struct part {
        size_t tensor = 0;
        std::int64_t first = 0, count = 0;
    };
    std::vector<part> parts;
};
std::vector<foreach_launch> multi_tensor_launches(const std::vector<std::int64_t>& numels, int depth, bool scalar_list);

}  // namespace tessel
