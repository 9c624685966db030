// What the graph-compiled chips built of separate fixed-function engines share: Intel Gaudi (matrix engines and
// tensor processor cores, `gaudi`) and AWS NeuronCores (tensor, vector, scalar engines, `neuron`). Their compilers
// run a workload operation after operation, elementwise ops fused into their producers, and inside one operation
// they pipeline the engines over slices of it: the matrix engine multiplies one slice while the vector engine
// finishes the slice before. So an operation holds each of its engines for the time its share of the work takes
// there, and ends when the slowest of its engines, the on-chip SRAM and the device memory is done, after a fixed
// overhead. The SRAM keeps data between operations (block_cache: LRU, write-back); the device memory is a nested
// part (an `hbm`) reached through a TLM socket. A derived kind names its engines and plans an operation as
// seconds on each (`plan`); this base runs the operation, keeps the statistics, the records and the energy.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "models/baseline/block_cache.h"
#include "models/baseline/kernel_device.h"
#include "models/core/component.h"
#include "models/core/energy.h"

namespace tessel {

class engine_chip : public component, public kernel_device {
public:
    /// One engine (or group of like engines) of the chip, as the resource table shows it.
    struct engine {
        std::string name;                   // below the chip's path: "mme", "tpc", "tensor"
        std::string work_unit;              // "FLOP", "op"
        double peak = 0;                    // work per second, whole chip (a matrix engine: MACs of a type at rate 1)
        bool matrix = false;                // its work is MACs (charged at the MAC energy of the step's type)
        const rate_table* rates = nullptr;  // a matrix engine's rate multiple by data type (fp8: 2)
        /// The engine's peak for data type t.
        double peak_for(dtype t) const { return rates && rates->has(t) ? peak * rates->at(t) : peak; }
    };
    /// The on-chip SRAM that keeps data between operations.
    struct sram_params {
        byte_size capacity;
        bandwidth bw;
        byte_size block;
        void declare(param_decl& d);
    };
    struct op_params {
        duration op_overhead;
        double matrix_efficiency = 1;
        double hbm_efficiency = 1;
        byte_size segment;
        void declare(param_decl& d);
    };
    /// The host CPU behind the chip's host link, for the ops its compiler does not take (mapper.host_ops): their
    /// operands cross the link to the host, the host computes, the results cross back.
    struct host_params {
        bandwidth link;  // per direction
        frequency clock;
        std::int64_t flops_per_cycle = 0;
        duration latency;
        void declare(param_decl& d);
    };
    /// What every such chip declares beside its engines.
    struct common_params {
        frequency clock;
        sram_params sram;
        op_params op;
        host_params host;
        part_spec hbm;
        compute_energy energy;      // MACs by type, element operations, the chip's static power
        memory_energy sram_energy;  // per byte between the engines and the SRAM
        void declare(param_decl& d, const char* sram_what);
    };
    /// One operation as the derived kind plans it.
    struct op_plan {
        std::string text;
        std::vector<double> seconds;  // per engine, in engines() order
        std::vector<double> work;     // per engine, in its unit (MACs for a matrix engine)
        double sram_bytes = 0;        // bytes between the engines and the SRAM
    };

    const std::vector<kernel_record>& records() const override { return m_records; }
    void clear_records() override { m_records.clear(); }
    void reset_caches() override { m_sram.clear(); }
    void warm(const kernel_desc& d) override;
    std::vector<tunable> tunables() override;
    std::uint64_t memory_capacity() const override { return m_hbm->capacity_bytes(); }
    double cache_capacity() const override { return static_cast<double>(m_sram.capacity()); }
    bool has_host() const override { return m_common->host.flops_per_cycle > 0; }

    bool has_role(role r) const override { return r == role::compute || r == role::composite; }
    std::uint64_t capacity_bytes() const override { return m_hbm->capacity_bytes(); }
    kernel_device* kernels() override { return this; }
    const kernel_device* kernels() const override { return this; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

    const std::vector<engine>& engines() const { return m_engines; }
    /// Plans one operation (pure: the same work and descriptor give the same plan).
    virtual op_plan plan(const work& w, const kernel_desc* d) const = 0;
    /// The SRAM's peak bandwidth, bytes per second.
    double sram_peak() const { return m_common->sram.bw.bytes_per_second(clock()); }
    double hbm_peak() const { return m_hbm->peak_bytes_per_second(); }
    double host_peak() const;       // the host's FLOPs per second
    double host_link_peak() const;  // bytes per second each way

    /// The statistics every such chip reports (a derived kind's stat_table returns them).
    static std::vector<stat_decl> common_stats();

protected:
    engine_chip(const sc_core::sc_module_name& name, const component_args& args);
    /// Called by the derived constructor once its parameters are loaded: `common` stays owned by the derived
    /// kind (tunables change it between calibration runs).
    void start(common_params& common, std::vector<engine> engines, const component_args& args);
    const common_params& common() const { return *m_common; }

private:
    /// Runs a kernel the device does not take on the host: operands over the link, host compute, results back.
    void run_on_host(txn& t, const work& w, const kernel_desc& d);

    common_params* m_common = nullptr;
    std::vector<engine> m_engines;
    std::unique_ptr<component> m_hbm;
    tlm_utils::simple_initiator_socket<engine_chip> m_to_hbm{"to_hbm"};
    txn_payload m_payload;
    block_cache m_sram;
    std::vector<block_cache::dram_access> m_dram;
    std::vector<kernel_record> m_records;
    reservation m_busy;
    int m_track = -1;
    double& m_ops;
    double& m_flops;
    double& m_hits;
    double& m_operand_bytes;
    std::vector<double> m_work, m_ideal, m_engine_busy;  // per engine
    std::array<double, dtype_count> m_macs_by_type{};
    double m_elem_ops = 0, m_sram_bytes = 0, m_sram_busy = 0;
    double m_host_flops = 0, m_host_busy = 0, m_link_bytes = 0, m_link_busy = 0;
};

}  // namespace tessel
