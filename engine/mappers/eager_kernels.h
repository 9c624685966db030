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

/// Storage for the eager kernels: graph tensors where the mapper put them, temporaries (fp32 copies, NHWC
/// copies, the optimizer's scratch lists) from `scratch`, which the mapper frees once the op's kernels ran.
struct eager_storage {
    address_fn tensor;
    std::function<std::uint64_t(double bytes)> scratch;
};

/// The kernels eager PyTorch launches for op `o`, in order, where they differ from the single kernel
/// lower_op gives; empty where eager PyTorch runs that one kernel.
std::vector<lowered_kernel> eager_kernels(const workload_graph& g, int o, const eager_storage& s,
                                          std::optional<dtype> compute_type);

/// The multi-tensor launches of torch.optim's foreach Adam(W) or SGD (momentum) step over the optimizer ops
/// `ops` (one per parameter, as the training expansion builds them), in the order the optimizer runs them.
std::vector<lowered_kernel> foreach_optimizer(const workload_graph& g, const std::vector<int>& ops, const eager_storage& s);

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
