// `ipu_tiles`: the tiles of a Graphcore IPU held as data (one module for 1,216 or 1,472 tiles). Each tile is
// a processor with private SRAM that only it can touch, and `threads` barrel-scheduled worker threads: every
// worker issues one instruction every `threads` cycles, so a tile reaches its peak only when all its workers
// have the same amount of work. A compute step is split over the workers by its largest independent dimension
// (output rows or columns of a matrix product, elements of vector work); the tile takes as long as its most
// loaded worker, or as long as its SRAM ports need for the step's operand bytes, whichever is longer, plus a
// fixed compute-set overhead (the supervisor starting and joining the workers). Exchange traffic reads the
// sender's SRAM at the load bandwidth and writes the receiver's at the store bandwidth; a read of the same
// address and size that leaves at the same time as the tile's previous read is the same message going to
// another receiver (the exchange multicasts), so it is read once.
// Leaves out: the instruction mix inside codelets, AMP operand alignment, bank conflicts, code memory (mappers
// reserve a share of each tile's memory for it), the supervisor's own instructions.
#pragma once

#include <array>

#include "models/bsp/bsp_superstep.h"
#include "models/core/component.h"
#include "models/core/compute_model.h"
#include "models/core/energy.h"

namespace tessel {

class ipu_exchange;

class ipu_tiles : public component {
public:
    struct params {
        frequency clock;
        std::int64_t width = 0, height = 0;
        std::int64_t threads = 0;
        rate_table amp_macs_per_cycle;
        rate_table vector_ops_per_cycle;
        duration compute_set_overhead;
        byte_size memory;
        bandwidth load_bandwidth, store_bandwidth;
        duration memory_latency;
        compute_energy energy;      // of one tile's datapath
        memory_energy sram_energy;  // of one tile's SRAM
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    /// The timing rules of one tile, usable without a module (the BSP mapper plans with them).
    struct timing final : compute_model {
        explicit timing(const params& p);
        params p;
        clock_domain clk;
        std::array<double, dtype_count> amp{};     // MACs per cycle per tile, 0 = unsupported
        std::array<double, dtype_count> vector{};  // element operations per cycle per tile
        double load_bps = 0, store_bps = 0;

        double amp_rate(dtype t) const { return amp[static_cast<size_t>(t)]; }
        double vector_rate(dtype t) const;
        double peak_macs_per_cycle(dtype t) const override { return amp_rate(t); }
        double peak_vector_ops_per_cycle(dtype t) const override { return vector_rate(t); }
        const clock_domain& clock() const override { return clk; }
        /// Cycles the most loaded worker needs for the arithmetic of `w` (no overhead, no memory).
        double worker_cycles(const work& w) const;
        /// Cycles the SRAM ports need for the operand bytes of `w`.
        double memory_cycles(const work& w) const;
        /// Cycles one compute step occupies a tile: overhead + max(workers, memory).
        double cycles(const work& w) const override;
        tick ticks(const work& w) const { return clk.cycles(cycles(w)); }
        /// Seconds the arithmetic would take at the tile's peak (all workers busy, no overhead).
        double ideal_seconds(const work& w) const override;
        /// Throws input_error when the tile cannot compute the data type of `w`.
        void check(const work& w, const std::string& who) const override;
    };

    ipu_tiles(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::compute || r == role::memory; }
    std::vector<int> unit_shape() const override { return {static_cast<int>(m_p.width), static_cast<int>(m_p.height)}; }
    std::uint64_t capacity_bytes() const override { return m_p.memory.bytes(); }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;
    std::vector<double> unit_busy() const override;

    const timing& model() const { return m_timing; }
    const compute_model* unit_model() const override { return &m_timing; }
    std::uint32_t tiles() const { return static_cast<std::uint32_t>(m_pipe.size()); }

private:
    /// A compute step of `w` on tile `u`, no earlier than `at`; returns its start and end.
    std::pair<tick, tick> compute_on(const txn& t, size_t u, const work& w, tick at);
    /// A whole superstep in coarse form (bsp_superstep.h): every tile's exchange phase on the chip's exchange,
    /// its SRAM traffic, then its compute step once its own data is in. Head: the last tile's data in; tail: the
    /// last compute done.
    void run_superstep(txn& t, const bsp_superstep& ss);
    /// The ipu_exchange of this chip (the one beside these tiles in the netlist), found on first use.
    ipu_exchange& exchange();

    params m_p;
    timing m_timing;
    ipu_exchange* m_exchange = nullptr;
    std::vector<reservation> m_pipe, m_load, m_store;
    std::vector<double> m_ideal, m_mem_bytes;
    std::vector<int> m_tracks;
    struct last_read {
        std::uint64_t address = ~std::uint64_t{0}, bytes = 0;
        tick at = 0, head = 0, tail = 0;
    };
    std::vector<last_read> m_last_read;
    double& m_macs;
    double& m_vector_ops;
    double& m_load_bytes;
    double& m_store_bytes;
    double& m_steps;
    std::array<double, dtype_count> m_macs_by_type{};
};

}  // namespace tessel
