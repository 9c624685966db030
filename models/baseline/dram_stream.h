// A kernel's DRAM traffic, sent to the device's memory component (an `hbm`) through its TLM socket: the misses
// and write-backs of the kernel's cache, split into segments and paced so that the kernel never requests more
// than its achievable share of the memory's peak (the memory-level parallelism its threads sustain). Requests
// go in the order the cache produced them, each operand as one sequential stream, the way a memory controller's
// reordering batches row hits; the memory component decides when each byte moves.
#pragma once

#include <tlm>

#include <vector>

#include "models/baseline/block_cache.h"
#include "models/core/component.h"

namespace tessel {

struct dram_stream_result {
    tick first = 0;  // first data
    tick last = 0;   // last data (the start time when nothing moved)
    double read_bytes = 0, write_bytes = 0;
};

/// Sends `accesses` to `memory` from `start` on, at most `bytes_per_second` on average, in segments of at most
/// `segment` bytes. `op` and `step` name the requests in traces. With `whole_streams` (a memory that times a
/// request as a stream, component::takes_whole_streams) contiguous accesses in one direction go as one request
/// each, and the pacing bounds the result directly: the cost is per stream, not per segment.
dram_stream_result stream_to_memory(tlm::tlm_fw_transport_if<>& memory, txn_payload& payload,
                                    const std::vector<block_cache::dram_access>& accesses, tick start,
                                    double bytes_per_second, std::uint64_t segment, std::uint32_t op,
                                    std::uint64_t step, bool whole_streams = false);

}  // namespace tessel
