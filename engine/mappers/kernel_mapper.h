// `kernels` mapper: runs a workload kernel after kernel on one device (a `gpu` or `tpu`, anything that is a
// kernel_device), the way a framework runs a model in eager mode or an XLA program op by op. Every op becomes a
// kernel, in topological order, each waiting for the one before (one stream). What frameworks do not launch is
// not launched: views (reshape, flatten, squeeze) never move data, and with `strided_views` a transpose, slice
// or split whose results only feed matrix products is read in place by them (strided operands), as cuBLAS and
// XLA do; other transposes, slices, concatenations are copy kernels. With `fuse: elementwise` an elementwise op
// (and an inference batchnorm) whose input comes from the kernel just before, and is read by nothing else, runs
// in that kernel's epilogue (torch.compile, XLA): the intermediate is neither written nor read back. Ops the
// workload's own fusion pass merged (`fuse: true` in the workload) are one kernel already.
// Tensors get device addresses from a best-fit allocator that frees an activation after its last reader (a
// caching allocator): weights, inputs and state first, then activations; a model that does not fit is an error.
// Each kernel step carries its operands as a payload (kernel_desc) so the device's cache can keep what it holds.
// Its explainer (engine/report/explain/kernels.cpp) adds each kernel's time, plan and bound, and the time per layer
// (ops grouped by name prefix up to the first number: "encoder.layer.3", "h.5", "layer1.0").
#pragma once

#include <functional>
#include <optional>

#include "engine/mappers/mapper.h"
#include "models/baseline/kernel_device.h"

namespace tessel {

/// One kernel: the ops it runs (a host op, then the elementwise ops fused into it), its work and descriptor.
struct lowered_kernel {
    std::vector<int> ops;
    work w;
    kernel_desc desc;
    bool own_name = false;  // the step (in traces) is named desc.name, not its first op: one of an op's eager kernels
};

/// How a tensor's bytes are read by op `o`: its address (from `address_of`) and the bytes the op touches.
using address_fn = std::function<std::uint64_t(int tensor)>;

/// The data type a tensor has when the kernels run (autocast's choices under framework: eager), by index.
using type_fn = std::function<dtype(int tensor)>;

/// Lowers op `o` of `g` on its own (no fusion): its work (in `compute_type` when given, else the op's own)
/// and its operands at the addresses `address_of` gives, each tensor's bytes in the type `type_of` gives (the
/// graph's own when empty). `tessel calibrate` replays exactly this.
lowered_kernel lower_op(const workload_graph& g, int o, const address_fn& address_of,
                        std::optional<dtype> compute_type = std::nullopt, const type_fn& type_of = {});

/// What the kernels mapper planned, for its explainer: the device the kernels ran on (each kernel's op, class
/// and step are in mapping::details["kernels"], which the summary keeps too).
struct kernel_mapping_record : mapping_record {
    std::uint32_t device = 0;  // the kernel_device's component id
};

class kernel_mapper : public mapper {
public:
    struct options {
        std::string device;
        std::string framework;
        std::string fuse;
        std::string softmax;
        bool strided_views = true;
        std::string float16_as;
        std::string host_ops;
        void declare(param_decl& d);
    };
    explicit kernel_mapper(options o) : m_opt(std::move(o)) {}
    mapping map(const workload_graph& g, const platform& plat) const override;
    /// The device's memory (HBM).
    std::uint64_t memory_capacity(const platform& plat) const override;

    /// The device component of `plat` a mapper with these options runs on (throws input_error when none).
    static std::uint32_t find_device(const platform& plat, const std::string& group);

private:
    options m_opt;
};

/// "encoder.layer.3" for "encoder.layer.3.attention.query", "lm_head" for "lm_head".
std::string layer_of(const std::string& op_name);

}  // namespace tessel
