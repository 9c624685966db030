#include "models/baseline/dram_stream.h"

#include <algorithm>
#include <cmath>

namespace tessel {

dram_stream_result stream_to_memory(tlm::tlm_fw_transport_if<>& memory, txn_payload& payload,
                                    const std::vector<block_cache::dram_access>& accesses, tick start,
                                    double bytes_per_second, std::uint64_t segment, std::uint32_t op, std::uint64_t step) {
    dram_stream_result r;
    r.first = max_tick;
    r.last = start;
    segment = std::max<std::uint64_t>(segment, 1);
    double issued = 0;
    for (const auto& a : accesses) {
        const std::uint64_t total = static_cast<std::uint64_t>(std::ceil(a.bytes));
        for (std::uint64_t off = 0; off < total; off += segment) {
            const std::uint64_t bytes = std::min(segment, total - off);
            // Pacing: segment i may not be requested before the bytes ahead of it could have moved at the rate.
            const tick at = start + (bytes_per_second > 0 ? seconds_to_ticks(issued / bytes_per_second) : 0);
            txn& t = payload.ext();
            t.kind = a.write ? txn_kind::write : txn_kind::read;
            t.unit = -1;  // the memory picks the channel from the address
            t.address = a.address + off;
            t.bytes = bytes;
            t.head = t.tail = at;
            t.op = op;
            t.step = step;
            t.w = nullptr;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            memory.b_transport(payload.gp(), delay);
            r.first = std::min(r.first, t.head);
            r.last = std::max(r.last, t.tail);
            (a.write ? r.write_bytes : r.read_bytes) += static_cast<double>(bytes);
            issued += static_cast<double>(bytes);
        }
    }
    if (r.first == max_tick) r.first = start;
    return r;
}

}  // namespace tessel
