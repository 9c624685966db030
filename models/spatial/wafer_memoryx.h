// `wafer_memoryx`: the external memory service of a wafer-scale system (Cerebras MemoryX behind the CS system's
// I/O), from the wafer's point of view: a large store whose data enter and leave the wafer through ports on its
// edge. Its units are those edge ports (each attaches to a router on the wafer's edge); all of them share the
// system's I/O bandwidth, one busy-until reservation per direction (into the wafer: weights and inputs; out of
// it: results and gradients), plus a fixed latency. The bandwidth is the system's I/O (12 x 100 GbE on a
// CS-2), which is far below what the fabric's edge could take, so it is what limits weight streaming.
// Leaves out: MemoryX's internal DRAM/flash tiers, SwarmX broadcast and reduction between several systems,
// Ethernet framing and retries.
#pragma once

#include "models/core/component.h"
#include "models/core/energy.h"

namespace tessel {

class wafer_memoryx : public component {
public:
    struct params {
        frequency clock;
        std::int64_t ports = 0;
        byte_size capacity;
        bandwidth io_bandwidth;
        duration latency;
        byte_size interleave;
        memory_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    wafer_memoryx(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::memory; }
    std::vector<int> unit_shape() const override { return {static_cast<int>(m_p.ports)}; }
    int unit_for_address(std::uint64_t address) const override;
    std::uint64_t capacity_bytes() const override { return m_p.capacity.bytes(); }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

    /// Bytes per second in each direction.
    double bytes_per_second() const { return m_bps; }
    double peak_bytes_per_second() const override { return m_bps; }
    tick latency_ticks() const { return m_latency; }

private:
    params m_p;
    double m_bps = 0;
    tick m_latency = 0;
    reservation m_dir[2];  // 0: into the wafer (reads), 1: out of it (writes)
    double m_bytes[2] = {0, 0};
    int m_tracks[2] = {-1, -1};
    std::uint64_t m_ser_bytes = ~std::uint64_t{0};
    tick m_ser_ticks = 0;
};

}  // namespace tessel
