// `hbm`: DRAM behind a memory controller, with HBM's organisation (channels, pseudo-channels, bank groups, banks)
// and timing (tRCD, tCL, tRP, tRAS, tRRD, tFAW, refresh tREFI/tRFC). Each access is mapped to a channel,
// pseudo-channel, bank and row; an open row gives a row-buffer hit (tCL), another open row a miss
// (precharge + activate + tCL), and the pseudo-channel's data bus is a busy-until reservation for the bursts.
// Streaming therefore reaches most of peak (rows stay open, activations overlap data) while random access is
// limited by activations (tRRD, tFAW, tRC). A DDR4 channel is the same model with one channel and 8 KiB rows
// (preset ddr4_3200). Leaves out: command-bus conflicts, read/write turnaround, scheduler reordering (FR-FCFS),
// per-bank refresh.
//
// Level of detail (`detail`): `banks` times every interleave block as above; `stream` times each request as a
// sequential stream through one device-wide queue at the sustained rate and first-data latency that the bank
// model of the same parameters reaches on a long stream (measured on a scratch copy, once per parameter set).
// A request then costs O(1) however many bytes it moves: systems of hundreds of GPUs stay cheap. It keeps the
// refresh and activation losses of streaming; it loses bank conflicts of random or strided traffic.
#pragma once

#include "models/core/component.h"
#include "models/core/energy.h"

namespace tessel {

class hbm : public component {
public:
    struct params {
        frequency clock;
        std::int64_t channels = 0;
        std::int64_t pseudo_channels = 0;
        std::int64_t bank_groups = 0;
        std::int64_t banks_per_group = 0;
        bandwidth pin_rate;
        std::int64_t width = 0;
        std::int64_t burst_length = 0;
        byte_size row_bytes;
        byte_size interleave;
        byte_size capacity;
        duration tCL, tRCD, tRP, tRAS, tRRD, tFAW, tREFI, tRFC;
        std::string page_policy;
        std::string bank_hash;
        std::string detail;
        dram_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    hbm(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::memory; }
    std::vector<int> unit_shape() const override { return {static_cast<int>(m_p.channels)}; }
    int unit_for_address(std::uint64_t address) const override;
    std::uint64_t capacity_bytes() const override { return m_p.capacity.bytes(); }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

    /// Peak bandwidth of the whole device.
    double peak_bytes_per_second() const override { return m_pc_bps * static_cast<double>(m_pcs.size()); }
    bool takes_whole_streams() const override { return m_stream_detail; }

    /// What a long sequential read stream reaches on the bank model from idle: bytes per second in the steady
    /// state and the time to first data.
    struct stream_rate {
        double bytes_per_second = 0;
        double latency_s = 0;
    };
    stream_rate sustained_stream();

    struct location {
        std::uint32_t channel, pc, bank;
        std::uint64_t row;
    };
    location map(std::uint64_t address, int forced_channel) const;

private:
    struct bank_state {
        std::int64_t open_row = -1;
        tick act_at = 0;     // last activation
        tick col_ready = 0;  // earliest next column command
        tick data_end = 0;   // last data transfer of this bank ends
        tick pre_ready = 0;  // closed-page policy: bank precharged and ready to activate
        std::uint64_t epoch = 0;
    };
    struct pc_state {
        reservation bus;
        tick acts[4] = {0, 0, 0, 0};  // last four activations (tFAW window)
        unsigned act_next = 0;
        unsigned act_count = 0;
        bool any_act = false;
        tick last_act = 0;
        double bytes = 0;
        std::vector<bank_state> banks;
    };
    /// One access to one pseudo-channel; returns {data start, data end}.
    std::pair<tick, tick> access_pc(const location& loc, std::uint64_t bytes, tick at, tick tail);
    tick after_refresh(std::uint32_t channel, tick t, std::uint64_t* epoch) const;
    /// Pseudo-channel, bank and row of interleave block `rest` of `channel` (the block's number within its channel).
    location locate(std::uint32_t channel, std::uint64_t rest) const;
    /// The bank model's timing of [address, address + bytes); returns {first data, last data}.
    std::pair<tick, tick> access_range(std::uint64_t address, std::uint64_t bytes, int unit, tick at, tick tail,
                                       const txn* traced);
    void transport_stream(txn& t);

    /// A divisor fixed at construction, taken as a shift and a mask when it is a power of two (every shipped
    /// geometry): locate() runs once per interleave block of every transfer, and its divisions were a sixth of
    /// an IPU-POD's run through its streaming memory.
    struct divisor {
        std::uint64_t d = 1;
        int shift = 0;  // log2(d), or -1 when d is not a power of two
        divisor() = default;
        explicit divisor(std::uint64_t v);
        std::uint64_t div(std::uint64_t x) const { return shift >= 0 ? x >> shift : x / d; }
        std::uint64_t mod(std::uint64_t x) const { return shift >= 0 ? x & (d - 1) : x % d; }
    };

    params m_p;
    divisor m_by_pcs, m_by_row_blocks, m_by_banks, m_by_groups;  // pseudo-channels, blocks per row, banks, groups
    std::vector<pc_state> m_pcs;
    std::vector<int> m_tracks;
    double m_pc_bps = 0;
    bool m_xor_hash = true, m_closed_page = false, m_stream_detail = false;
    reservation m_stream;  // detail = stream: the device as one queue
    tick m_stream_latency = 0;
    double m_stream_bps = 0;
    double m_stream_bytes = 0;
    tick m_burst = 0;
    std::uint64_t m_burst_bytes = 0;
    tick m_cl = 0, m_rcd = 0, m_rp = 0, m_ras = 0, m_rrd = 0, m_faw = 0, m_refi = 0, m_rfc = 0;
    std::vector<tick> m_refresh_offset;  // per channel: its first refresh (channels refresh staggered)
    struct refresh_window {
        tick start = 0;  // the k-th refresh of the channel (from its offset)
        std::uint64_t k = 0;
    };
    mutable std::vector<refresh_window> m_refresh_window;  // per channel: the interval its last access fell in
    double& m_read_bytes;
    double& m_write_bytes;
    double& m_hits;
    double& m_misses;
    double& m_empty;
    double& m_refresh_stall;
};

}  // namespace tessel
