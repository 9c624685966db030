// Disaggregated serving's KV transfers (Splitwise, DistServe): a prefilled request's KV cache goes from the chips
// of a prefill replica to those of a decode replica. Each chip sends its shard (its layers' keys and values of its
// heads) to the chip that holds the same layers and heads, all at once, as a program of transfers over the
// system's links, simulated by `tessel run --program` at a few cache lengths through the sweep engine (resumable
// in the output folder like the batch steps). Every prefill-decode pair is timed as the first prefill replica's
// transfer to the first decode replica: the system mapper's symmetry assumption, which a system whose replicas
// sit at different distances (across nodes) breaks.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "engine/serve/step_table.h"
#include "engine/sweep/driver.h"

namespace tessel::serve {

struct kv_transfer_plan {
    std::string platform_file;
    std::vector<std::pair<std::string, std::string>> platform_sets;  // the platform's own (no parallel.*, mapper.*)
    std::vector<std::pair<std::string, std::string>> routes;         // per chip: its memory, the receiver's
    double bytes_per_token = 0;                                      // per chip
    std::vector<std::int64_t> lengths;                               // cache lengths to simulate (tokens)
    std::string dir;                                                 // where the programs and results go
};

/// The program that sends a `tokens`-long cache: one transfer per route, all at once.
std::string kv_transfer_program(const kv_transfer_plan& p, std::int64_t tokens);

/// Simulates the transfers at each length (a sweep run with `sw`'s backend and jobs). Returns false when
/// interrupted (`status` is then the sweep's); a failed run is an input_error naming it.
bool simulate_kv_transfers(const kv_transfer_plan& p, sweep::sweep_options sw, std::ostream& err, transfer_table& out,
                           int& status);

}  // namespace tessel::serve
