// `tsp`: a Groq Tensor Streaming Processor (GroqChip 1) as one data-oriented component. Functional slices stand
// side by side from west to east: MXM planes | SXM | MEM x n | VXM (ALUs) | MEM x n | SXM | MXM planes; every
// slice spans all superlanes, and each superlane holds `lanes` lanes, so a vector is superlanes x lanes elements.
// Vectors move between slices on stream registers, `streams` in each direction, one slice position per cycle.
// There are no caches and no arbiters: a program is a static schedule of instructions, each fixed to a cycle, a
// slice (and a port of it), and the stream registers it reads and writes. The instruction stream enters
// superlane 0 and moves down one superlane per cycle, so superlane s runs every instruction s cycles later:
// an instruction occupies its slice for its duration (timed at superlane 0) and ends superlanes - 1 cycles later.
//
// The component executes the schedule and checks it: an instruction whose slice port is still busy, whose
// output would overwrite a vector still travelling on the same stream register (same stream, same direction,
// overlapping positions and cycles), whose operands are not on its input stream exactly when it starts, or that
// starts before an instruction it depends on has finished, stops the run with an error naming both
// instructions and the cycle. Timing is in whole cycles of the chip clock, converted to ticks from absolute
// cycle numbers, so the simulated time equals the schedule's prediction exactly. A schedule placed after its
// inputs in a larger program (a system's pass behind a transfer: step::anchor) counts its cycle 0 from the
// clock edge its anchor gives (txn::origin), on the same count, so its checks and timing hold there too.
//
// Leaves out: instruction queues and their fetch (one instruction per slice per cycle is assumed), the MEM
// reads that feed weight installs (weights arrive on dedicated weight streams), stream groups for wide types
// (a stream register carries one vector of any type), power and clock throttling. Chip-to-chip transfers (a
// system's C2C links) read and write MEM with its latency and without taking a slice port: Groq schedules them
// beside the compute, and at 14 GB/s a link is far slower than the slices.
#pragma once

#include <array>
#include <memory>
#include <unordered_map>

#include "models/core/component.h"
#include "models/core/energy.h"

namespace tessel {

class tsp : public component {
public:
    struct mxm_params {
        std::int64_t planes = 0;  // per hemisphere
        rate_table macs_per_cycle;
        std::int64_t weight_streams = 0;
        duration latency;
        void declare(param_decl& d);
        double macs_per_cycle_of(dtype t) const { return macs_per_cycle.at(t); }
    };
    struct vxm_params {
        std::int64_t alus = 0;
        std::int64_t chain = 0;
        duration latency;
        void declare(param_decl& d);
    };
    struct sxm_params {
        duration latency;
        void declare(param_decl& d);
    };
    struct mem_params {
        std::int64_t slices = 0;  // per hemisphere
        byte_size slice_capacity;
        duration latency;
        void declare(param_decl& d);
    };
    struct params {
        frequency clock;
        std::int64_t superlanes = 0, lanes = 0;
        std::int64_t streams = 0;
        mxm_params mxm;
        vxm_params vxm;
        sxm_params sxm;
        mem_params mem;
        compute_energy energy;     // the MXM's MACs and the VXM's operations; leakage of the whole chip
        memory_energy mem_energy;  // the MEM slices, per byte read or written
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    enum class slice_kind : std::uint8_t { mxm, sxm, mem, vxm };
    enum class op_kind : std::uint8_t { mem_read, mem_write, mxm_weights, mxm_matmul, vxm, sxm };
    static const char* op_kind_name(op_kind k);

    /// Vectors on a block of stream registers: `count` streams from `stream`, heading east or west, from slice
    /// position `from` to `to`; the first vector leaves `from` `offset` cycles after the instruction starts and
    /// one follows every `spacing` cycles.
    struct stream_use {
        std::int16_t stream = -1;  // -1: none
        std::int16_t count = 1;
        bool east = true;
        std::int32_t from = 0, to = 0;
        std::int64_t offset = 0;
        bool valid() const { return stream >= 0; }
    };

    /// One instruction of a static schedule: the payload of one compute step of the program.
    struct instruction : step_payload {
        static constexpr type payload_type_tag = type::tsp_instruction;
        instruction() : step_payload(type::tsp_instruction) {}
        /// Producers and `after` name steps: moved with the program they belong to.
        std::shared_ptr<const step_payload> shifted(std::uint32_t offset) const override;
        op_kind kind = op_kind::vxm;
        std::uint32_t unit = 0;        // the slice
        std::int64_t cycle = 0;        // scheduled start at superlane 0, cycles from the schedule's origin
        std::int64_t vectors = 0;      // vectors it streams
        std::int64_t spacing = 1;      // cycles per vector
        std::int64_t ops = 1;          // VXM: element operations per element
        std::int64_t rows = 0;         // MXM weight install: weight rows
        stream_use out;                // what it writes
        std::array<stream_use, 2> in;  // what it reads (arriving at its own position at `cycle`)
        std::array<std::uint32_t, 2> producer{~0u, ~0u};  // the steps that put them there
        std::uint32_t after = ~0u;  // a step that must have finished (weights installed, data written)
        std::string name;
    };

    /// The timing rules, usable without a module (the static-schedule mapper plans with them).
    struct timing {
        explicit timing(const params& p);
        params p;
        clock_domain clk;
        std::uint32_t units = 0;
        std::vector<slice_kind> kind;                                           // per unit
        std::vector<std::int32_t> position;                                     // per unit, west to east
        std::vector<std::uint32_t> mxm_units, mem_units, vxm_units, sxm_units;  // west to east
        std::int32_t vxm_position = 0;
        std::int64_t mem_latency = 0, mxm_latency = 0, vxm_latency = 0, sxm_latency = 0, skew = 0;

        std::int64_t vector_elements() const { return p.superlanes * p.lanes; }
        /// Side of the square MXM array for a type (sqrt of its MACs per cycle per plane); 0 = unsupported.
        std::int64_t array_dim(dtype t) const;
        /// Cycles an instruction holds its slice port (superlane 0).
        std::int64_t busy(const instruction& i) const;
        /// Which port of its slice an instruction takes: 0 (issue/read), 1 (MEM write, MXM weight install).
        static int port(op_kind k) { return k == op_kind::mem_write || k == op_kind::mxm_weights ? 1 : 0; }
        /// Latency from an instruction's start to its first output vector.
        std::int64_t out_offset(op_kind k) const;
        std::int32_t distance(std::int32_t a, std::int32_t b) const { return a > b ? a - b : b - a; }
        std::string unit_name(std::uint32_t u) const;
        slice_kind expected(op_kind k) const;
    };

    tsp(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::compute || r == role::memory; }
    /// Slices west to east, times superlanes (for floorplans); instructions address superlane 0 (unit = slice).
    std::vector<int> unit_shape() const override {
        return {static_cast<int>(m_tm->units), static_cast<int>(m_p.superlanes)};
    }
    /// Every MEM slice of both hemispheres: what a chip holds (a system's plan is checked against it).
    std::uint64_t capacity_bytes() const override {
        return 2 * static_cast<std::uint64_t>(m_p.mem.slices) * m_p.mem.slice_capacity.bytes();
    }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;
    std::vector<double> unit_busy() const override;

    const timing& model() const { return *m_tm; }
    /// Cycle 0 of the schedule is the program's start.
    void begin_program(tick origin, const std::vector<grid_placement>& placements) override;
    /// Cycle of the last instruction's end (all superlanes) in the last run.
    std::int64_t last_cycle() const { return m_last_cycle; }

private:
    struct occupancy {
        std::uint32_t step;
        stream_use use;
        std::int64_t first;   // cycle the first vector leaves `use.from`
        std::int64_t length;  // cycles the block holds a position
    };
    [[noreturn]] void conflict(const std::string& what) const;
    std::string who(std::uint64_t step) const;
    void check_streams(std::uint64_t step, const instruction& ins, std::int64_t start);

    params m_p;
    std::unique_ptr<timing> m_tm;
    tick m_origin = 0;
    /// A step this chip has run: its instruction (the program's) and the cycles it held its unit.
    struct ran {
        const instruction* in;
        std::int64_t started, ended;
    };
    std::unordered_map<std::uint64_t, ran> m_ran;        // by step (one table: a large program runs millions)
    std::vector<std::array<std::int64_t, 2>> m_free;     // per unit and port: free from this cycle
    std::vector<std::array<std::uint64_t, 2>> m_holder;  // per unit and port: the last step there
    std::vector<std::vector<occupancy>> m_streams;       // per direction x stream: blocks in flight
    std::vector<double> m_busy;                          // per unit, seconds
    std::vector<int> m_tracks;
    std::int64_t m_last_cycle = 0;
    double& m_macs;
    double& m_vector_ops;
    double& m_mem_bytes;
    double& m_instructions;
    std::array<double, dtype_count> m_macs_by_type{};
    double m_ideal_mxm = 0, m_ideal_vxm = 0;
};

}  // namespace tessel
