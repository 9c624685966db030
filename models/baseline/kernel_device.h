// What the kernel-by-kernel baselines (the `gpu` and `tpu` kinds) share with the `kernels` mapper and with
// `tessel calibrate`. Such a device receives one compute transaction per kernel. A transaction carries the
// kernel's `work` (MACs, element operations, bytes, GEMM view) but not where its operands live, which the
// device's cache needs; so each compute step carries a descriptor as its payload (step_payload.h), the way a
// runtime passes tensor pointers with a kernel launch. After the run the device
// reports how each kernel ran (`records`), and it lists the few parameters a calibration may fit
// (`tunables`), which the calibrator changes between runs without rebuilding the platform.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/core/step_payload.h"
#include "models/core/units.h"

namespace tessel {

/// A range of device memory a kernel reads or writes.
struct kernel_operand {
    std::uint64_t address = 0;  // first byte
    double bytes = 0;           // bytes touched (each once: reuse inside the kernel is the device's business)
    bool write = false;
};

/// How a library kernel walks the rows of a row-wise op (PyTorch's softmax picks one of four by row length).
enum class row_kernel {
    vector,     // one CTA per row, each thread loading vector_bytes (reductions)
    welford,    // ATen's layer-norm kernel: 128 threads per row, Welford's running mean and variance (layer norm)
    warp,       // one warp per row, reductions by warp shuffles ("softmax_warp_forward", rows <= 1024)
    registers,  // one 1024-thread CTA per row, the row held in registers ("cunn_SoftMaxForwardReg")
    shared,     // one 1024-thread CTA per row, the row kept in shared memory ("cunn_SoftMaxForwardSmem")
    blocked,    // one 1024-thread CTA per row, the row read once per pass ("cunn_SoftMaxForward")
    norm,       // the layer-norm kernel summing squares for its statistics (RMS norm)
};

inline constexpr int k_row_kernels = static_cast<int>(row_kernel::norm) + 1;

/// The kernels that walk a row as ATen's vectorized_layer_norm_kernel does (128 threads, 4 elements a load).
inline bool is_norm_kernel(row_kernel k) { return k == row_kernel::welford || k == row_kernel::norm; }

/// The row kernel as one word ("registers"), as emitted programs and parameter names write it;
/// parse_row_kernel reads it back.
inline const char* row_kernel_word(row_kernel k) {
    static const char* const words[k_row_kernels] = {"vector", "welford", "warp", "registers",
                                                     "shared", "blocked", "norm"};
    return words[static_cast<int>(k)];
}

/// How a plan's text names the kernel ("row in registers"); empty for the plain vector kernel.
inline const char* row_kernel_phrase(row_kernel k) {
    static const char* const phrases[k_row_kernels] = {"",
                                                       "Welford",
                                                       "warp per row",
                                                       "row in registers",
                                                       "row in shared memory",
                                                       "row read per pass",
                                                       "sum of squares"};
    return phrases[static_cast<int>(k)];
}

inline std::optional<row_kernel> parse_row_kernel(std::string_view s) {
    for (int k = 0; k < k_row_kernels; ++k)
        if (s == row_kernel_word(static_cast<row_kernel>(k))) return static_cast<row_kernel>(k);
    return std::nullopt;
}

/// Everything about a kernel that its `work` does not say: the payload of a kernel's compute step.
struct kernel_desc : step_payload {
    static constexpr type payload_type_tag = type::kernel;
    kernel_desc() : step_payload(type::kernel) {}
    std::string name;                      // the op (or the fused ops) it runs
    std::vector<kernel_operand> operands;  // reads and writes, in the order the kernel touches them
    std::int64_t rows = 0, cols = 0;       // row-wise kernels (softmax, norms, reductions): rows x reduced length
    int passes = 0;                        // dependent passes over each row (softmax: max, then sum)
    row_kernel row_kind = row_kernel::vector;
    int rereads = 0;         // times each row is read again after its first read (from L2 while
                             // the rows in flight fit there, else from DRAM)
    double special_ops = 0;  // transcendental evaluations (exp, erf, tanh, rsqrt)
    bool split_k = true;     // GEMMs: the library may split K over CTAs (implicit-GEMM convolutions do not)
    bool causal = false;     // attention: keys after the query position are skipped
    bool host = false;       // the device's compiler does not take the op: it runs on the host CPU (mapper.host_ops)
};

/// How one kernel ran.
struct kernel_record {
    std::uint64_t step = 0;
    std::uint32_t op = 0;
    tick start = 0, end = 0;
    std::string plan;       // "128x256 tiles, 512 CTAs in 4 waves" and the like
    double compute_s = 0;   // compute pipeline (waves of CTAs, MXU folds, element operations)
    double cache_s = 0;     // on-chip cache or buffer streaming
    double dram_s = 0;      // from the first DRAM request to the last byte
    double overhead_s = 0;  // launch and fixed latencies
    double flops = 0;
    double cache_bytes = 0;  // bytes between the compute units and the on-chip cache
    double hit_bytes = 0;    // operand bytes found in the cache
    double dram_bytes = 0;   // DRAM reads and write-backs
    std::string bound;       // compute | cache | dram | overhead
};

/// A parameter `tessel calibrate` may fit.
struct tunable {
    std::string name;  // parameter path below the component, e.g. "kernel.tensor_efficiency"
    std::string unit;  // "" for a plain number, "s" for a time
    double lower = 0, upper = 1;
    bool log_scale = false;
    std::string affects;  // which measurements it explains: "gemm", "stream", "rowwise", "attention", "all"
    std::function<double()> get;
    std::function<void(double)> set;
};

class kernel_device {
public:
    virtual ~kernel_device() = default;
    /// Kernels run since the last clear, in order.
    virtual const std::vector<kernel_record>& records() const = 0;
    virtual void clear_records() = 0;
    /// Whether kernels are recorded at all (on unless switched off): a system run's many chips are explained by
    /// the system mapper, which reads no kernel records, and millions of them would cost time and gigabytes.
    void keep_records(bool on) { m_keep_records = on; }
    bool keeps_records() const { return m_keep_records; }
    /// Forgets what the caches hold (without write-backs): the calibrator starts every measurement cold.
    virtual void reset_caches() = 0;
    /// Updates what the caches (and address translation) hold as if `d` had run, without timing it: the
    /// steady state of a kernel replayed back to back, reached without simulating the warm-up replay.
    virtual void warm(const kernel_desc& d) = 0;
    virtual std::vector<tunable> tunables() = 0;
    /// Device memory for weights and activations.
    virtual std::uint64_t memory_capacity() const = 0;
    /// Bytes the on-chip cache (L2, CMEM) holds; 0 when it keeps nothing between kernels.
    virtual double cache_capacity() const = 0;
    /// "GPU: 132 SMs ..." for notes.
    virtual std::string summary() const = 0;
    /// Whether kernels marked `host` can run on a host CPU behind a host link this device models.
    virtual bool has_host() const { return false; }

private:
    bool m_keep_records = true;
};

/// Formats a tunable's value for YAML ("1.45us", "0.812").
std::string format_tunable(const tunable& t, double v);

}  // namespace tessel
