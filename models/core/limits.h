// Resource budgets: what one run may ask of the machine, checked before anything large is allocated or
// simulated, so that no input can make tessel allocate without bound or run without end. Each limit has a
// name, a default that every shipped platform and workload is far inside, and a meaning; `--limit NAME=VALUE`
// (tessel run) raises or lowers one deliberately. An input over a limit is an input_error naming
// the limit, the amount the input needs and the flag that raises it (docs/reliability.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

/// Clocks tessel accepts: a cycle must be at least 100 ticks (10 THz) so cycle counts convert to femtoseconds
/// with room to spare, and at most one second (1 Hz). Anything outside is a typo (1e30Hz, 1GHz written 1Hz).
constexpr double k_max_clock_hz = 1e13;
constexpr double k_min_clock_hz = 1;
/// "clock: 1e+30 Hz is above 10 THz, the fastest clock tessel simulates" or "" when `hz` is in range.
std::string clock_out_of_range(double hz);

struct limit_info {
    const char* name;
    double value;
    const char* meaning;
};

struct resource_limits {
    double modules = 4e6;  // components plus their units (replicas, channels, banks, tiles of an array, ports)
    double ops = 5e5;      // ops, and tensors, of one workload graph (llama2-7b with adam: 3435 ops, 5860 tensors)
    double steps = 2e7;    // steps of one program (ResNet-50 on gc200: 4.95 M); about 1 GiB of program at the limit
    double packets = 2e9;  // network packets of one run, estimated up front from the transfers
    double sim_seconds = 3600;  // simulated time of one run, estimated up front (the representable end is ~5.1 h)

    /// Every limit with its current value and meaning (for messages and docs).
    std::vector<limit_info> all() const;
    /// Sets one from "NAME=VALUE" (a --limit argument); throws input_error naming the known limits.
    void set(const std::string& name_equals_value);
};

/// The process's limits (one run per process).
resource_limits& limits();

/// Refuses a component of `units` units (a grid's width x height, an array's channels) over the modules limit,
/// before it allocates them; `what` names it ("component 'noc' (mesh_noc): 100000 x 100000 routers").
void require_units(double units, const std::string& what);

/// Refuses an input file tessel would read whole into memory when it is not a plain file (a directory,
/// /dev/zero, a pipe) or is larger than `max_bytes`; `what` names it ("platform file").
void require_input_file(const std::string& path, const std::string& what, double max_bytes = 1024.0 * 1024 * 1024);

/// "needs N NOUN, over the limit of L (--limit NAME=...)": the tail of every budget message.
std::string over_limit(const std::string& name, double needed, const std::string& noun);

}  // namespace tessel
