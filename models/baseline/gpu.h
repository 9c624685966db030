// `gpu`: a GPU (NVIDIA A100/H100 class) running one kernel after another. Streaming multiprocessors with tensor
// cores, FP32 lanes, special-function units and shared memory; an L2 cache that keeps data between kernels
// (block_cache: LRU, write-back); the device memory is a nested `hbm` component reached through a TLM socket.
// Each compute transaction is one kernel, timed by the tiling model in gpu::timing:
//  - matrix products and convolutions (implicit GEMM) pick, like a BLAS heuristic, the CTA tile and split-K
//    that finish first: ceil(M/BM) x ceil(N/BN) x split CTAs run in waves over the SMs (wave quantisation), each
//    CTA's main loop at the tensor-core (or FP32) rate times an achievable fraction, limited by shared-memory
//    bandwidth and by its share of L2 bandwidth for its operand tiles (shared by a cluster), plus a fixed CTA
//    latency (pipeline fill, epilogue); K is padded to the K tile; operands that do not fit in L2 are re-read
//    from DRAM once per wave;
//  - fused attention (flash attention) runs query-block CTAs that loop over key blocks (causal ones skip the
//    keys after the diagonal), tensor-core and softmax work in turn, list-scheduled over the SMs;
//  - everything else streams its bytes through L2 at an achievable fraction of its bandwidth, with element
//    operations on the FP32 lanes and transcendentals on the SFUs; row-wise kernels (softmax, norms) also pay a
//    latency per dependent pass over a row, in waves of the rows the SMs hold at once.
// A kernel's DRAM traffic (its L2 misses and write-backs) goes to the hbm, paced to an achievable fraction of
// peak; pages whose translation the last-level TLB does not hold stall the stream for a page walk each. The
// kernel ends when the slowest of compute, L2 and DRAM is done, after a fixed launch overhead.
// Leaves out: concurrent kernels and streams, warp scheduling and instruction issue, register pressure and
// occupancy beyond shared memory and thread limits, clock and power throttling (the fitted fractions absorb
// them), NVLink.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <memory>
#include <unordered_map>

#include "models/baseline/block_cache.h"
#include "models/baseline/extent_lru.h"
#include "models/baseline/kernel_device.h"
#include "models/memory/hbm.h"

namespace tessel {

/// The widest vector load (at most 16 bytes) that rows of `elems` elements of `eb` bytes each stay aligned to:
/// a GEMM whose leading dimension gives less than 16 runs the library's fallback kernels.
double operand_alignment(std::int64_t elems, double eb);

class gpu : public component, public kernel_device {
public:
    struct sm_params {
        rate_table tensor_macs_per_cycle;
        std::int64_t fp32_lanes = 0;
        std::int64_t sfu_lanes = 0;
        byte_size smem;
        bandwidth smem_bandwidth;
        std::int64_t max_threads = 0;
        std::int64_t max_ctas = 0;
        void declare(param_decl& d);
    };
    struct l2_params {
        byte_size capacity;
        bandwidth bw;
        byte_size block;
        void declare(param_decl& d);
    };
    struct tlb_params {
        byte_size page;
        byte_size reach;
        duration miss_cost;
        void declare(param_decl& d);
    };
    struct kernel_params {
        duration launch_overhead;
        duration cta_latency;
        duration row_latency;
        double tensor_efficiency = 1;
        double simt_efficiency = 1;
        double l2_efficiency = 1;
        double dram_efficiency = 1;
        std::string tiles;
        std::int64_t k_tile = 0;
        std::int64_t max_split_k = 0;
        std::int64_t cluster = 0;
        std::string attention_tile;
        std::string decode_tile;
        double fallback_efficiency = 1;
        double attention_overlap = 0;
        double narrow_load = 0;
        std::array<double, k_row_kernels> row_rate{};  // by row_kernel, "row_rate_<word>" (none for vector)
        bool stream_k = false;
        byte_size vector_bytes;
        byte_size segment;
        void declare(param_decl& d);
    };
    struct params {
        frequency clock;
        std::int64_t sms = 0;
        sm_params sm;
        l2_params l2;
        tlb_params tlb;
        kernel_params kernel;
        part_spec hbm;            // the device memory
        compute_energy energy;    // tensor-core MACs, FP32-lane and SFU operations; leakage of the whole chip
        memory_energy l2_energy;  // per byte between the SMs and L2
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    /// One kernel's plan, before DRAM: what the SMs and L2 need, independent of what L2 holds.
    struct kernel_plan {
        std::string text;          // the tiling decision, for notes
        double compute_s = 0;      // SM pipeline: waves x CTA time, or element operations
        double cache_bytes = 0;    // SM <-> L2 bytes
        double cache_s = 0;        // at the L2 rate this kernel reaches
        double row_s = 0;          // dependent passes over rows (row-wise kernels)
        bool row_streams = false;  // row_s is the rows' own streaming (it overlaps DRAM time instead of adding)
        double extra_s = 0;        // serial extra work after the kernel (split-K reduction kernel)
        double reread_bytes = 0;   // operand bytes read from DRAM again because they do not stay in L2
        double tensor_macs = 0;    // MACs on tensor cores (padding excluded)
        double lane_ops = 0;       // FMA-lane operations (FP32 path MACs, element operations)
        double special_ops = 0;    // SFU operations
        dtype type = dtype::fp16;
        int kernels = 1;  // launches (2 with a split-K reduction)
    };

    /// The timing rules without the module: mappers and tests use them directly.
    struct timing {
        params p;
        clock_domain clk;
        struct tile {
            int bm, bn;
        };
        std::vector<tile> tiles;
        int attn_bq = 0, attn_bkv = 0;
        int decode_bq = 0, decode_bkv = 0;
        explicit timing(const params& prm, const std::string& who = "gpu");
        kernel_plan plan(const work& w, const kernel_desc* d) const;
        kernel_plan plan_gemm(const work& w, bool may_split_k) const;
        kernel_plan plan_attention(const work& w, const kernel_desc* d) const;
        kernel_plan plan_stream(const work& w, const kernel_desc* d) const;
        /// Peak MACs per second of the whole GPU on tensor cores for a data type (0 when it has none).
        double tensor_peak(dtype t) const;
        double lane_peak() const;  // FMA-lane operations per second, whole GPU
        double sfu_peak() const;
        double row_rate(row_kernel kind) const;  // elements per cycle per SM; 0: no limit
        double l2_peak() const;                  // bytes per second
    };

    gpu(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::compute || r == role::composite; }
    std::uint64_t capacity_bytes() const override { return m_hbm->capacity_bytes(); }
    kernel_device* kernels() override { return this; }
    const kernel_device* kernels() const override { return this; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

    // kernel_device
    const std::vector<kernel_record>& records() const override { return m_records; }
    void clear_records() override { m_records.clear(); }
    void reset_caches() override {
        m_l2.clear();
        m_tlb.clear();
    }
    void warm(const kernel_desc& d) override;
    std::vector<tunable> tunables() override;
    std::uint64_t memory_capacity() const override { return m_hbm->capacity_bytes(); }
    double cache_capacity() const override { return static_cast<double>(m_l2.capacity()); }
    std::string summary() const override;

    const timing& model() const { return *m_timing; }
    component& memory() { return *m_hbm; }

private:
    params m_p;
    std::unique_ptr<timing> m_timing;
    std::unique_ptr<component> m_hbm;
    tlm_utils::simple_initiator_socket<gpu> m_to_hbm{"to_hbm"};
    txn_payload m_payload;
    block_cache m_l2;
    extent_lru m_tlb;  // pages whose translations the last-level TLB holds
    std::vector<block_cache::dram_access> m_dram;
    /// The last plan of each of the program's works: a system run replays a pass's kernels once per microbatch,
    /// and a plan searches every tile and split. Reused only while the work, the descriptor fields a plan reads
    /// and the parameters (tunables() clears it) are unchanged.
    struct planned {
        bool made = false;
        work w;
        bool has_desc = false, causal = false, split_k = true;
        row_kernel row_kind = row_kernel::vector;
        std::int64_t rows = 0, cols = 0;
        int passes = 0, rereads = 0;
        double special_ops = 0;
        kernel_plan plan;
    };
    std::unordered_map<const work*, planned> m_plans;
    const kernel_plan& plan_of(const work& w, const kernel_desc* d);
    /// TLB misses of a kernel's operands (pages not held), updating what the TLB holds.
    double translate(const kernel_desc& d);
    std::vector<kernel_record> m_records;
    reservation m_busy;
    int m_track = -1;
    double& m_kernels;
    double& m_flops;
    double& m_l2_hits;
    double& m_l2_bytes;
    double& m_launch;
    double& m_tlb_misses;
    std::array<double, dtype_count> m_tensor_macs{};
    double m_tensor_ideal = 0, m_lane_ops = 0, m_special = 0, m_cache_bytes = 0;
    // Time the tensor cores, the other SM pipes and the L2 were working (each kernel's work at their sustained
    // rates, at most its length), not the kernels' residency: a DRAM-bound kernel keeps its SMs resident but idle.
    double m_tensor_busy = 0, m_lane_busy = 0, m_l2_busy = 0;
};

}  // namespace tessel
