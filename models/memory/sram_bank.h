// `sram_bank`: an on-chip scratchpad of several banks, each with a number of ports of a given width.
// Addresses interleave across banks every `interleave` bytes; an access occupies, in each bank it touches, one
// port for (its bytes in that bank) / (bank bandwidth), so two accesses to one bank serialise (a bank conflict)
// while accesses to different banks proceed together. Leaves out: read/write turnaround, ECC.
#pragma once

#include <array>
#include <memory>

#include "models/core/component.h"
#include "models/core/energy.h"

namespace tessel {

class sram_bank : public component {
public:
    struct params {
        frequency clock;
        byte_size capacity;
        std::int64_t banks = 0;
        std::int64_t ports = 0;
        bandwidth bank_bandwidth;
        duration latency;
        byte_size interleave;
        memory_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();
    /// What any memory timed by these bank rules counts (bytes, accesses, port time, bandwidth).
    static std::vector<stat_decl> access_stats();

    /// The state of one scratchpad: a reservation per bank port and bytes per bank.
    struct state {
        std::vector<reservation> ports;  // banks x ports
        std::vector<double> bank_bytes;
    };

    /// The timing rules, shared by every scratchpad with the same parameters (sram_bank owns one state,
    /// tile_array one per tile).
    class timing {
    public:
        explicit timing(const params& p);
        /// One timing for every scratchpad of these parameters in the process: its split cache is a pure function
        /// of them (a 32-socket SN40L's 33,280 PMUs built 100 MB of identical caches).
        static std::shared_ptr<const timing> shared(const params& p);
        state make_state() const;
        /// Reserves banks for `bytes` at `address`, first byte at `head`, last at `tail`.
        /// Returns {first byte out, last byte out}; `served`, if given, gets when its ports began and ended serving
        /// it (what a trace shows: the wait for a port and the access latency are not service).
        std::pair<tick, tick> access(state& s, std::uint64_t address, std::uint64_t bytes, tick head, tick tail,
                                     std::pair<tick, tick>* served = nullptr) const;
        tick busy_total(const state& s) const;
        tick busy_max(const state& s) const;
        double ideal_max_seconds(const state& s) const;  // the busiest bank's bytes at its peak
        double port_bytes_per_second() const { return m_bank_bps; }
        std::size_t port_count() const { return m_banks * m_ports; }
        std::uint64_t capacity() const { return m_capacity; }

    private:
        /// How an access splits over the banks: bytes and port time per bank touched. It depends only on the
        /// bytes and the address modulo interleave x banks (the phase), so the last few splits are kept (a
        /// small direct-mapped cache: scratchpads see the same few access shapes over and over).
        struct share {
            std::size_t bank;
            double bytes;
            tick dur;
        };
        struct split {
            std::uint64_t phase = ~std::uint64_t{0}, bytes = 0;
            std::size_t count = 0;  // shares, at m_shares[slot * m_banks]
        };
        /// Fills `sp` (slot `slot`) for an access of `bytes` at `phase`.
        void make_split(split& sp, std::size_t slot, std::uint64_t phase, std::uint64_t bytes) const;
        std::size_t m_banks, m_ports;
        std::uint64_t m_interleave, m_capacity;
        double m_bank_bps;
        double m_fs_per_byte;
        tick m_latency;
        static constexpr std::size_t splits_kept = 8;
        mutable std::array<split, splits_kept> m_splits;
        mutable std::vector<share> m_shares;  // splits_kept x banks
    };

    sram_bank(const sc_core::sc_module_name& name, const component_args& args);

    bool has_role(role r) const override { return r == role::memory; }
    std::uint64_t capacity_bytes() const override { return m_p.capacity.bytes(); }
    /// Every port of every bank at once.
    double peak_bytes_per_second() const override {
        return m_timing->port_bytes_per_second() * static_cast<double>(m_timing->port_count());
    }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

private:
    void init(const component_args& a);
    params m_p;
    std::unique_ptr<timing> m_timing;
    state m_state;
    int m_track = -1;
    double& m_read_bytes;
    double& m_write_bytes;
    double& m_accesses;
};

}  // namespace tessel
