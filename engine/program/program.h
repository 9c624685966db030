// A program: steps bound to platform resources, with dependencies. Mappers produce programs from workload
// graphs; course exercises and microbenchmarks write them by hand in YAML (program_yaml.h). The executor runs
// them. Steps are plain data in flat arrays (a wafer-scale program has millions).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/netlist/endpoint.h"
#include "models/core/error.h"
#include "models/core/grid_placement.h"
#include "models/core/transaction.h"
#include "models/core/units.h"

namespace tessel {

enum class step_kind : std::uint8_t {
    compute,   // work on a compute unit
    transfer,  // bytes from one endpoint to another (load, store, send), packet by packet
    sync,      // a barrier: released after the last dependency plus the barrier's latency
    delay      // a fixed time with no resource (reconfiguration, launch overhead)
};
const char* step_kind_name(step_kind k);

struct step {
    step_kind kind = step_kind::compute;
    std::uint32_t op = 0;     // index into program::op_names (what the step belongs to)
    endpoint at;              // compute/sync target; transfer source
    endpoint to;              // transfer destination
    std::uint64_t bytes = 0;  // transfer size
    std::uint32_t work = 0;   // index into program::works (compute)
    /// not_before counts from this step's end instead of the program start, rounded up to the next edge of the
    /// clock of the component the step runs on: a static schedule placed after its inputs (program::append).
    /// The anchor is an earlier step every path to this one passes through; ~0u: none.
    std::uint32_t anchor = ~0u;
    tick not_before = 0;          // earliest start from the program start or the anchor (`start:`, schedules, traffic)
    tick length = 0;              // delay steps
    std::uint32_t payload = ~0u;  // index into program::payloads (compute), ~0u: none; steps may share one
    std::uint32_t dep_begin = 0, dep_count = 0;
};

/// Synthetic traffic (a program's `traffic:` block, engine/program/traffic.h): what the executor needs to
/// report latency over the measurement window and offered against accepted load. Packets are transfer steps
/// between ports of one network; a packet is measured when its step's `not_before` (its creation time) falls
/// in [measure_begin, measure_end).
struct traffic_spec {
    std::string pattern;             // uniform, transpose, ...
    std::uint32_t network = ~0u;     // component id of the network the packets cross
    std::uint32_t nodes = 0;         // ports that inject
    double rate = 0;                 // offered flits per node per cycle
    std::uint64_t flit_bytes = 0;    // one flit on the network's links
    std::uint64_t packet_flits = 0;  // flits per packet (header included)
    tick cycle = 0;                  // one cycle of the network's clock
    tick measure_begin = 0, measure_end = 0;
    bool enabled() const { return network != ~0u; }
    bool measured(tick created) const { return created >= measure_begin && created < measure_end; }
};

/// SRAM the program keeps on the PEs of a component for its whole run (a wafer mapper's weights, state and
/// buffers): checked when planned (toolkit::sram_ledger), given to the component when the run begins
/// (component::begin_program), which reports it in its statistics.
struct placement {
    std::uint32_t comp = ~0u;  // the component holding the PEs (one with component::grid())
    grid_placement data;       // which PEs, bytes on each, and what
};

/// A program grew past the steps limit while it was built (limits().steps), a step at a time or by appending
/// another: a system mapper that meets it while mapping a chip's pieces or joining them into the iteration may map
/// them again in a coarser form. `what` says by how much; `fewer` is the advice appended to it.
class steps_limit_error : public input_error {
public:
    steps_limit_error(const std::string& what, double count)
        : input_error(what + fewer), what_alone(what), steps(count) {}
    static constexpr const char* fewer = "; a smaller workload or a coarser mapping needs fewer";
    std::string what_alone;
    double steps;
};

class program {
public:
    std::string name;
    std::vector<step> steps;
    std::vector<std::uint32_t> deps;  // steps[i]'s dependencies are deps[dep_begin, dep_begin + dep_count)
    std::vector<work> works;
    std::vector<std::string> op_names;
    std::vector<std::string> step_labels;  // optional user-facing names (program YAML ids); may be empty
    /// What compute steps carry for their device (kernel descriptors, TSP instructions, spans of PEs); shared,
    /// never changed.
    std::vector<std::shared_ptr<const step_payload>> payloads;
    /// SRAM kept on arrays of PEs for the whole run, in the order it was placed.
    std::vector<placement> placements;
    /// Static schedule: a step that cannot start exactly at its not_before is an error naming the conflict.
    bool strict_schedule = false;
    traffic_spec traffic;  // set when the program has a `traffic:` block
    /// How far ahead of requests still queued a request may be served, set by a mapper that knows its program's
    /// time scale (the wafer's: a share of its pipeline's interval); the run uses the larger of this and the
    /// platform's `quantum:`. 0: exact arrival order.
    tick quantum = 0;
    /// Fewest bytes of a packet on any network, set by a mapper for a coarse form of its program (the RDU's):
    /// transfers go in packets of at least this size whatever the networks' own packet_bytes. 0: theirs.
    std::uint64_t packet_bytes = 0;

    /// The index of `op` in op_names, appending it when new (the last entry of that name if several).
    std::uint32_t intern_op(const std::string& op);
    /// The index of a work equal to `w` in works, appending it when new: a stage's PCUs and tiles mostly share
    /// a few works, and an entry per compute step was a third of a training step's memory.
    std::uint32_t add_work(const work& w);
    std::uint32_t add_compute(std::uint32_t op, endpoint at, std::uint32_t work,
                              const std::vector<std::uint32_t>& after);
    std::uint32_t add_transfer(std::uint32_t op, endpoint from, endpoint to, std::uint64_t bytes,
                               const std::vector<std::uint32_t>& after);
    std::uint32_t add_sync(std::uint32_t op, endpoint barrier, const std::vector<std::uint32_t>& after);
    std::uint32_t add_delay(std::uint32_t op, tick length, const std::vector<std::uint32_t>& after);
    /// Attaches a payload to compute step `s`; it reaches the device in the step's transaction.
    void set_payload(std::uint32_t s, std::shared_ptr<const step_payload> p);
    /// Adds a payload that several compute steps may carry (a span of PEs that every chunk of an op runs on);
    /// returns its index for use_payload.
    std::uint32_t add_payload(std::shared_ptr<const step_payload> p);
    /// Makes compute step `s` carry payload `index` (from add_payload).
    void use_payload(std::uint32_t s, std::uint32_t index);
    const step_payload* payload_of(std::uint32_t s) const {
        return steps[s].payload == ~0u ? nullptr : payloads[steps[s].payload].get();
    }

    /// Adds every step of `other` beside this program's (both start together; add dependencies between them
    /// afterwards), and its placements, with each component id re-bound through `comp_of` (identity when
    /// empty): how per-chip programs join into one. Returns the offset of `other`'s steps here. Step labels are kept
    /// where either program has them; two programs with synthetic traffic cannot be joined.
    /// `after`: dependencies given to each of `other`'s steps that has none (where the appended part starts).
    /// A static schedule (`other.strict_schedule`) appended after something keeps its shape: its start times
    /// count from the moment `after` is done (one zero-length step joining `after` becomes their anchor).
    /// `memo`: kept by a caller that appends the same program many times (a system's pass per microbatch):
    /// the works, payloads and op names of `other` are then added once and shared by every copy.
    struct append_memo {
        const program* source = nullptr;
        std::uint32_t works = ~0u, payloads = ~0u;
        std::vector<std::uint32_t> op_of;
    };
    std::uint32_t append(const program& other, const std::function<std::uint32_t(std::uint32_t)>& comp_of = {},
                         const std::vector<std::uint32_t>& after = {}, append_memo* memo = nullptr);

    size_t size() const { return steps.size(); }
    const std::uint32_t* deps_of(std::uint32_t s) const { return deps.data() + steps[s].dep_begin; }
    /// "step 12 'load_a'" or "step 12 (transfer of op 'fc1')" for messages.
    std::string describe(std::uint32_t s) const;

    /// Why the steps can never all finish: one cycle of dependencies, for a message.
    struct dependency_cycle {
        /// Along the data flow (each step waits for the one before it, the first for the last), from the cycle's
        /// step listed first, each step once; empty when every step can run.
        std::vector<std::uint32_t> steps;
        size_t blocked = 0;  // steps that can never start: the cycle's and every step waiting on them
    };
    /// Finds one (the steps in dependency order, then a walk back along unfinished dependencies). Every
    /// dependency must name an existing step. Linear in steps and dependencies.
    dependency_cycle find_cycle() const;
    /// "program 'p' can never finish: its steps wait on each other in a cycle: step 0 'a' -> step 1 'b' -> step 0
    /// 'a' (2 steps are blocked)"; a cycle of one step "waits for itself".
    std::string cycle_message(const dependency_cycle& c) const;

private:
    std::uint32_t push(step st, const std::vector<std::uint32_t>& after);

private:
    // op_names -> index, brought up to date lazily (op_names is public: readers append to it directly). A system
    // program interns a name per pass instance; a linear search made that quadratic.
    std::unordered_map<std::string, std::uint32_t> m_op_index;
    size_t m_op_indexed = 0;
    // works -> index, kept the same way (appends and readers add works directly).
    struct work_hash {
        std::size_t operator()(const work& w) const;
    };
    std::unordered_map<work, std::uint32_t, work_hash> m_work_index;
    size_t m_work_indexed = 0;
};

}  // namespace tessel
