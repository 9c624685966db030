// `tpu`: a TPU (Google TPU v4 class) running one XLA operation after another. TensorCores with 128 x 128
// matrix units (MXUs), a vector unit and a transcendental unit; an on-chip common memory (CMEM) that keeps data
// between operations (block_cache: LRU, write-back); HBM as a nested `hbm` component reached through a TLM
// socket. Each compute transaction is one (fused) operation:
//  - matrix products and convolutions are folded onto the MXUs weight-stationary: K and N are padded to the
//    array (ceil(K/R) x ceil(N/C) folds per batch), M to the 8 sublanes; the folds are spread over every MXU
//    of both cores, each fold streams the M rows (the next fold's weights shift in meanwhile, so a fold takes
//    max(M, R) cycles) and the array fills and drains once per operation (R + C - 2 cycles), as in the
//    systolic timing of SCALE-Sim (Samajdar et al., ISPASS 2020) with double-buffered weights;
//  - fused attention is its two products on the MXUs (causal: the blocks above the diagonal skipped) with the
//    softmax on the vector and transcendental units;
//  - element operations run on the vector unit, transcendentals on the transcendental unit, overlapping the
//    MXU work of the same fused operation.
// Operands stream from CMEM (hits) or HBM (misses, paced to an achievable fraction of the peak). An operation
// ends when the slowest of MXUs, vector unit, CMEM and HBM is done, after a fixed issue overhead.
// Leaves out: VMEM capacity and tiling of large operands, the scalar unit, inter-chip links (ICI), sparse cores,
// layout changes (transposes are assumed fused into their consumers by XLA).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <memory>

#include "models/baseline/block_cache.h"
#include "models/baseline/kernel_device.h"
#include "models/memory/hbm.h"

namespace tessel {

class tpu : public component, public kernel_device {
public:
    struct core_params {
        std::int64_t mxus = 0;
        std::int64_t mxu_rows = 0, mxu_cols = 0;
        rate_table mxu_types;
        std::int64_t sublanes = 0;
        std::int64_t vector_ops_per_cycle = 0;
        std::int64_t special_ops_per_cycle = 0;
        void declare(param_decl& d);
    };
    struct cmem_params {
        byte_size capacity;
        bandwidth bw;
        byte_size block;
        void declare(param_decl& d);
    };
    struct op_params {
        duration op_overhead;
        double mxu_efficiency = 1;
        double hbm_efficiency = 1;
        byte_size segment;
        void declare(param_decl& d);
    };
    struct params {
        frequency clock;
        std::int64_t cores = 0;
        core_params core;
        cmem_params cmem;
        op_params op;
        part_spec hbm;              // the device memory
        compute_energy energy;      // MXU MACs, vector and transcendental operations; leakage of the whole chip
        memory_energy cmem_energy;  // per byte between the cores and CMEM
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    struct op_plan {
        std::string text;
        double mxu_s = 0, vector_s = 0, cache_bytes = 0, cache_s = 0;
        double mxu_macs = 0;  // useful MACs on the MXUs
        double lane_ops = 0;  // vector-unit operations
        double special_ops = 0;
        double fill_fraction = 0;  // useful MACs over MXU capacity in the time
    };

    /// The timing rules without the module.
    struct timing {
        params p;
        clock_domain clk;
        explicit timing(const params& prm, const std::string& who = "tpu");
        op_plan plan(const work& w, const kernel_desc* d) const;
        /// Cycles of `mxus` arrays for a batch x (M x K).(K x N) product, weight-stationary.
        double mxu_cycles(double batch, double m, double n, double k) const;
        double mxu_peak() const;     // MACs per second, whole chip
        double vector_peak() const;  // element operations per second, whole chip
        double special_peak() const;
        double cmem_peak() const;
    };

    tpu(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::compute || r == role::composite; }
    std::uint64_t capacity_bytes() const override { return m_hbm->capacity_bytes(); }
    kernel_device* kernels() override { return this; }
    const kernel_device* kernels() const override { return this; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

    const std::vector<kernel_record>& records() const override { return m_records; }
    void clear_records() override { m_records.clear(); }
    void reset_caches() override { m_cmem.clear(); }
    void warm(const kernel_desc& d) override;
    std::vector<tunable> tunables() override;
    std::uint64_t memory_capacity() const override { return m_hbm->capacity_bytes(); }
    double cache_capacity() const override { return static_cast<double>(m_cmem.capacity()); }
    std::string summary() const override;

    const timing& model() const { return *m_timing; }

private:
    params m_p;
    std::unique_ptr<timing> m_timing;
    std::unique_ptr<component> m_hbm;
    tlm_utils::simple_initiator_socket<tpu> m_to_hbm{"to_hbm"};
    txn_payload m_payload;
    block_cache m_cmem;
    std::vector<block_cache::dram_access> m_dram;
    std::vector<kernel_record> m_records;
    reservation m_busy;
    int m_track = -1;
    double& m_ops;
    double& m_flops;
    double& m_hits;
    double& m_operand_bytes;
    double m_mxu_macs = 0, m_mxu_ideal = 0, m_lane_ops = 0, m_special = 0, m_cache_bytes = 0;
    std::array<double, dtype_count>
        m_mxu_macs_by_type{};  // the MXU multiplies bf16 (int8 natively): other types' passes are bf16
    // Time the MXUs, the vector units and CMEM were working (each op's own time on them, at most its length),
    // not the ops' residency.
    double m_mxu_busy = 0, m_vector_busy = 0, m_cmem_busy = 0;
};

}  // namespace tessel
