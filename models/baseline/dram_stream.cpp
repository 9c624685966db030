#include "models/baseline/dram_stream.h"

#include <algorithm>
#include <cmath>

namespace tessel {

dram_stream_result stream_to_memory(tlm::tlm_fw_transport_if<>& memory, txn_payload& payload,
                                    const std::vector<block_cache::dram_access>& accesses, tick start,
                                    double bytes_per_second, std::uint64_t segment, std::uint32_t op,
                                    std::uint64_t step, bool whole_streams) {
    dram_stream_result r;
    r.first = max_tick;
    r.last = start;
    segment = std::max<std::uint64_t>(segment, 1);
    double issued = 0;
    // Pacing: bytes may not be requested before the bytes ahead of them could have moved at the rate.
    auto paced = [&] { return start + (bytes_per_second > 0 ? seconds_to_ticks(issued / bytes_per_second) : 0); };
    auto send = [&](std::uint64_t address, std::uint64_t bytes, bool write) {
        txn& t = payload.ext();
        t.kind = write ? txn_kind::write : txn_kind::read;
        t.unit = -1;  // the memory picks the channel from the address
        t.address = address;
        t.bytes = bytes;
        t.head = t.tail = paced();
        t.op = op;
        t.step = step;
        t.w = nullptr;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        memory.b_transport(payload.gp(), delay);
        r.first = std::min(r.first, t.head);
        r.last = std::max(r.last, t.tail);
        (write ? r.write_bytes : r.read_bytes) += static_cast<double>(bytes);
        issued += static_cast<double>(bytes);
    };
    if (whole_streams) {
        // One open stream per direction: a run of misses stays one request though write-backs interleave.
        struct run {
            std::uint64_t from = 0, to = 0;
        } open[2];
        for (const auto& a : accesses) {
            run& o = open[a.write ? 1 : 0];
            const std::uint64_t bytes = static_cast<std::uint64_t>(std::ceil(a.bytes));
            if (o.to > o.from && a.address == o.to) {
                o.to += bytes;
                continue;
            }
            if (o.to > o.from) send(o.from, o.to - o.from, a.write);
            o = {a.address, a.address + bytes};
        }
        for (int w = 0; w < 2; ++w)
            if (open[w].to > open[w].from) send(open[w].from, open[w].to - open[w].from, w == 1);
        if (bytes_per_second > 0 && issued > 0) r.last = std::max(r.last, paced());
    } else {
        for (const auto& a : accesses) {
            const std::uint64_t total = static_cast<std::uint64_t>(std::ceil(a.bytes));
            for (std::uint64_t off = 0; off < total; off += segment)
                send(a.address + off, std::min(segment, total - off), a.write);
        }
    }
    if (r.first == max_tick) r.first = start;
    return r;
}

}  // namespace tessel
