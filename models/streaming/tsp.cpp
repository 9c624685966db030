#include "models/streaming/tsp.h"

#include <algorithm>
#include <cmath>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void tsp::mxm_params::declare(param_decl& d) {
    d(planes, "planes", "2", "independent matrix planes in each hemisphere's MXM", bound::positive);
    d(macs_per_cycle, "macs_per_cycle", "{int8: 102400, fp16: 25600}",
      "multiply-accumulates per cycle of one plane, per type: a sqrt x sqrt array (320 x 320 int8, 160 x 160 fp16)");
    d(weight_streams, "weight_streams", "4", "stream registers that carry weight rows into a plane at once",
      bound::positive);
    d(latency, "latency", "24cycles", "from an activation vector entering a plane to its result vector leaving");
}

void tsp::vxm_params::declare(param_decl& d) {
    d(alus, "alus", "16", "ALUs per lane in the vector unit: instructions that run at once", bound::positive);
    d(chain, "chain", "4", "element operations one VXM instruction applies per element per cycle (chained ALUs)",
      bound::positive);
    d(latency, "latency", "4cycles", "from a vector entering the VXM to its result leaving");
}

void tsp::sxm_params::declare(param_decl& d) {
    d(latency, "latency", "4cycles", "from a vector entering the switch unit (shift, permute, transpose) to leaving");
}

void tsp::mem_params::declare(param_decl& d) {
    d(slices, "slices", "44", "MEM slices in each hemisphere", bound::positive);
    d(slice_capacity, "slice_capacity", "2.5MiB", "SRAM per MEM slice", bound::positive);
    d(latency, "latency", "5cycles", "from a read instruction to its first vector on the stream");
}

void tsp::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "chip clock (default: the platform clock)");
    d(superlanes, "superlanes", "20", "superlanes (rows of the chip); the instruction stream moves down one per cycle",
      bound::positive);
    d(lanes, "lanes", "16", "byte lanes per superlane: a vector is superlanes x lanes bytes", bound::positive);
    d(streams, "streams", "32", "stream registers in each direction (east and west)", bound::positive);
    d.group(mxm, "mxm", "matrix units (one per hemisphere, at the chip's edges)");
    d.group(vxm, "vxm", "the vector unit between the hemispheres");
    d.group(sxm, "sxm", "switch units (one per hemisphere)");
    d.group(mem, "mem", "memory slices");
    declare_energy(d, energy, energy_7nm::compute, "energy",
                   "energy per MXM multiply-accumulate and VXM operation, and the static power of the whole chip");
    declare_energy(d, mem_energy, energy_7nm::sram_mb, "mem_energy",
                   "energy per byte a MEM slice reads or writes (reads and writes are counted together: the read "
                   "figure is charged), and their static power");
}

const char* tsp::op_kind_name(op_kind k) {
    switch (k) {
        case op_kind::mem_read:
            return "read";
        case op_kind::mem_write:
            return "write";
        case op_kind::mxm_weights:
            return "install weights";
        case op_kind::mxm_matmul:
            return "matmul";
        case op_kind::vxm:
            return "vector op";
        case op_kind::sxm:
            return "switch op";
    }
    return "?";
}

tsp::timing::timing(const params& prm) : p(prm), clk(prm.clock.clock()) {
    auto add = [&](slice_kind k, std::int32_t pos, std::vector<std::uint32_t>& list) {
        list.push_back(units);
        kind.push_back(k);
        position.push_back(pos);
        ++units;
    };
    const auto n_mem = static_cast<std::int32_t>(p.mem.slices);
    for (std::int64_t i = 0; i < p.mxm.planes; ++i) add(slice_kind::mxm, 0, mxm_units);
    add(slice_kind::sxm, 1, sxm_units);
    for (std::int32_t i = 0; i < n_mem; ++i) add(slice_kind::mem, 2 + i, mem_units);
    vxm_position = 2 + n_mem;
    for (std::int64_t i = 0; i < p.vxm.alus; ++i) add(slice_kind::vxm, vxm_position, vxm_units);
    for (std::int32_t i = 0; i < n_mem; ++i) add(slice_kind::mem, vxm_position + 1 + i, mem_units);
    add(slice_kind::sxm, vxm_position + n_mem + 1, sxm_units);
    for (std::int64_t i = 0; i < p.mxm.planes; ++i) add(slice_kind::mxm, vxm_position + n_mem + 2, mxm_units);
    mem_latency = static_cast<std::int64_t>(std::llround(p.mem.latency.to_cycles(clk)));
    mxm_latency = static_cast<std::int64_t>(std::llround(p.mxm.latency.to_cycles(clk)));
    vxm_latency = static_cast<std::int64_t>(std::llround(p.vxm.latency.to_cycles(clk)));
    sxm_latency = static_cast<std::int64_t>(std::llround(p.sxm.latency.to_cycles(clk)));
    skew = p.superlanes - 1;
}

std::int64_t tsp::timing::array_dim(dtype t) const {
    const double r = p.mxm.macs_per_cycle_of(t);
    return static_cast<std::int64_t>(std::floor(std::sqrt(r) + 1e-9));
}

std::int64_t tsp::timing::busy(const instruction& i) const {
    switch (i.kind) {
        case op_kind::mxm_weights:
            return (i.rows + p.mxm.weight_streams - 1) / p.mxm.weight_streams;
        default:
            return i.vectors * std::max<std::int64_t>(1, i.spacing);
    }
}

std::int64_t tsp::timing::out_offset(op_kind k) const {
    switch (k) {
        case op_kind::mem_read:
            return mem_latency;
        case op_kind::mxm_matmul:
            return mxm_latency;
        case op_kind::vxm:
            return vxm_latency;
        case op_kind::sxm:
            return sxm_latency;
        default:
            return 0;
    }
}

tsp::slice_kind tsp::timing::expected(op_kind k) const {
    switch (k) {
        case op_kind::mem_read:
        case op_kind::mem_write:
            return slice_kind::mem;
        case op_kind::mxm_weights:
        case op_kind::mxm_matmul:
            return slice_kind::mxm;
        case op_kind::vxm:
            return slice_kind::vxm;
        case op_kind::sxm:
            return slice_kind::sxm;
    }
    return slice_kind::vxm;
}

std::string tsp::timing::unit_name(std::uint32_t u) const {
    if (u >= units) return "slice " + std::to_string(u);
    const auto idx = [&](const std::vector<std::uint32_t>& list) {
        return std::to_string(std::find(list.begin(), list.end(), u) - list.begin());
    };
    switch (kind[u]) {
        case slice_kind::mxm:
            return "MXM plane " + idx(mxm_units);
        case slice_kind::sxm:
            return std::string("SXM ") + (position[u] < vxm_position ? "west" : "east");
        case slice_kind::mem:
            return "MEM slice " + idx(mem_units);
        case slice_kind::vxm:
            return "VXM ALU " + idx(vxm_units);
    }
    return "slice " + std::to_string(u);
}

std::vector<stat_decl> tsp::stat_table() {
    return {
        {"macs", "MAC", "multiply-accumulates on the MXM planes"},
        {"vector_ops", "op", "element operations on the VXM"},
        {"mem_bytes", "B", "bytes read from and written to MEM slices"},
        {"instructions", "instr", "instructions executed"},
        {"cycles", "cycle", "cycles of the last schedule, all superlanes"},
        {"busy", "s", "time each slice was busy (west to east)", stat_shape::per_unit},
    };
}

tsp::tsp(sc_core::sc_module_name n, const component_args& a)
    : component(n, a),
      m_macs(stats().scalar("macs")),
      m_vector_ops(stats().scalar("vector_ops")),
      m_mem_bytes(stats().scalar("mem_bytes")),
      m_instructions(stats().scalar("instructions")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    m_tm = std::make_unique<timing>(m_p);
    if (m_tm->array_dim(dtype::int8) <= 0 && m_tm->array_dim(dtype::fp16) <= 0)
        throw input_error("component '" + a.config_path + "' (tsp): mxm.macs_per_cycle lists no type", a.where);
    m_free.assign(m_tm->units, {0, 0});
    m_holder.assign(m_tm->units, {~std::uint64_t{0}, ~std::uint64_t{0}});
    m_streams.resize(static_cast<size_t>(2 * m_p.streams));
    m_busy.assign(m_tm->units, 0.0);
    m_tracks.assign(m_tm->units, -2);
    stats().formula("cycles", [this](double) { return static_cast<double>(m_last_cycle); });
    stats().per_unit("busy", [this](double) { return m_busy; });
}

std::shared_ptr<const step_payload> tsp::instruction::shifted(std::uint32_t offset) const {
    auto moved = std::make_shared<instruction>(*this);
    for (auto& p : moved->producer)
        if (p != ~0u) p += offset;
    if (moved->after != ~0u) moved->after += offset;
    return moved;
}

void tsp::begin_program(tick origin, const std::vector<grid_placement>& /*placements*/) {
    m_origin = origin;
    m_ran.clear();
    for (auto& f : m_free) f = {0, 0};
    for (auto& h : m_holder) h = {~std::uint64_t{0}, ~std::uint64_t{0}};
    for (auto& s : m_streams) s.clear();
    m_last_cycle = 0;
}

std::string tsp::who(std::uint64_t step) const {
    const auto it = m_ran.find(step);
    return "'" + (it != m_ran.end() ? it->second.in->name : std::string("?")) + "' (step " + std::to_string(step) + ")";
}

void tsp::conflict(const std::string& what) const {
    throw input_error("static schedule conflict on " + path() + ": " + what);
}

void tsp::check_streams(std::uint64_t step, const instruction& ins, std::int64_t start) {
    // Blocks this instruction puts on stream registers: its output, and external feeds it reads (weights).
    std::vector<occupancy> mine;
    if (ins.out.valid())
        mine.push_back(
            {static_cast<std::uint32_t>(step), ins.out, start + m_tm->out_offset(ins.kind), m_tm->busy(ins)});
    for (size_t k = 0; k < ins.in.size(); ++k)
        if (ins.in[k].valid() && ins.producer[k] == ~0u)
            mine.push_back({static_cast<std::uint32_t>(step), ins.in[k],
                            start - m_tm->distance(ins.in[k].from, ins.in[k].to), m_tm->busy(ins)});
    for (const occupancy& o : mine) {
        const stream_use& u = o.use;
        if (u.stream < 0 || u.stream + u.count > m_p.streams)
            conflict(who(step) + " uses stream registers " + std::to_string(u.stream) + ".." +
                     std::to_string(u.stream + u.count - 1) + " but the chip has " + std::to_string(m_p.streams) +
                     " per direction");
        const std::int32_t lo = std::min(u.from, u.to), hi = std::max(u.from, u.to);
        for (std::int16_t s = u.stream; s < u.stream + u.count; ++s) {
            auto& list = m_streams[static_cast<size_t>((u.east ? 0 : m_p.streams) + s)];
            // Forget blocks that left the chip long before this one starts.
            list.erase(std::remove_if(list.begin(), list.end(),
                                      [&](const occupancy& x) {
                                          return x.first + m_tm->distance(x.use.from, x.use.to) + x.length +
                                                     4 * m_tm->units <
                                                 o.first;
                                      }),
                       list.end());
            for (const occupancy& x : list) {
                const std::int32_t xlo = std::min(x.use.from, x.use.to), xhi = std::max(x.use.from, x.use.to);
                const std::int32_t qlo = std::max(lo, xlo), qhi = std::min(hi, xhi);
                if (qlo > qhi) continue;
                // Both move one position per cycle the same way: compare where they first share a position.
                const std::int32_t q = u.east ? qlo : qhi;
                const std::int64_t a0 = o.first + m_tm->distance(u.from, q), a1 = a0 + o.length;
                const std::int64_t b0 = x.first + m_tm->distance(x.use.from, q), b1 = b0 + x.length;
                if (a0 < b1 && b0 < a1) {
                    // Name the slice at that position.
                    std::string at = "position " + std::to_string(q);
                    for (std::uint32_t k = 0; k < m_tm->units; ++k)
                        if (m_tm->position[k] == q) {
                            at = m_tm->unit_name(k);
                            break;
                        }
                    conflict("stream register " + std::to_string(s) + (u.east ? " east" : " west") + " at " + at +
                             ", cycle " + std::to_string(std::max(a0, b0)) + ": " + who(step) +
                             " would overwrite a vector of " + who(x.step) + " still on it");
                }
            }
            list.push_back(o);
        }
    }
}

void tsp::transport(txn& t) {
    if (t.kind == txn_kind::read || t.kind == txn_kind::write) {
        // A C2C transfer's data leaving or landing in MEM (see the file comment).
        const tick latency = m_p.mem.latency.to_ticks(clock());
        t.head += latency;
        t.tail += latency;
        return;
    }
    const instruction* carried = payload_as<instruction>(t.payload);
    if (!carried)
        throw input_error(
            path() + ": step " + std::to_string(t.step) +
            " carries no instruction (programs for a tsp come from its mapper, impl: tsp, or from one it emitted)");
    const instruction& ins = *carried;
    ran& record = m_ran[t.step];
    record = {carried, 0, 0};
    if (ins.unit >= m_tm->units)
        conflict(who(t.step) + " names slice " + std::to_string(ins.unit) + "; the chip has " +
                 std::to_string(m_tm->units));
    if (m_tm->kind[ins.unit] != m_tm->expected(ins.kind))
        conflict(who(t.step) + " is a " + op_kind_name(ins.kind) + " but runs on " + m_tm->unit_name(ins.unit));
    // The schedule's cycle 0 is the program's start or, for a schedule placed after its inputs, its anchor's
    // clock edge (t.origin): its cycles are offset by whole cycles on the chip's own count.
    const std::int64_t offset = std::llround(clock().to_cycles(t.origin - m_origin));
    const std::int64_t start = offset + ins.cycle;
    const tick expected = m_origin + clock().cycles(static_cast<double>(start));
    // The origin and the offsets into it round to whole ticks separately: within half a cycle is the same edge.
    const tick half = clock().cycles(0.5);
    if (t.head + half < expected || t.head > expected + half) {
        const double at = clock().to_cycles(t.head - t.origin);
        conflict(who(t.step) + " is scheduled at cycle " + std::to_string(ins.cycle) +
                 " but could not start before cycle " + format_number(at, 12) +
                 " (a program step it depends on finished late)");
    }
    if (ins.kind == op_kind::vxm) {
        const std::int64_t need = (ins.ops + m_p.vxm.chain - 1) / m_p.vxm.chain;
        if (ins.spacing < need)
            conflict(who(t.step) + " streams a vector every " + std::to_string(ins.spacing) + " cycle(s) but its " +
                     std::to_string(ins.ops) + " operations per element need " + std::to_string(need) + " with " +
                     std::to_string(m_p.vxm.chain) + " chained ALUs");
    }
    const std::int64_t busy = m_tm->busy(ins);
    const int port = timing::port(ins.kind);
    if (m_free[ins.unit][static_cast<size_t>(port)] > start)
        conflict(m_tm->unit_name(ins.unit) + (port ? " (second port)" : "") + " at cycle " + std::to_string(start) +
                 ": " + who(t.step) + " is scheduled there but " + who(m_holder[ins.unit][static_cast<size_t>(port)]) +
                 " holds it until cycle " + std::to_string(m_free[ins.unit][static_cast<size_t>(port)]));
    if (ins.after != ~0u) {
        const auto e = m_ran.find(ins.after);
        if (e == m_ran.end() || ins.after == t.step)  // this step's own record is not finished
            conflict(who(t.step) + " at cycle " + std::to_string(start) + " needs " + who(ins.after) +
                     " finished, but that has not run");
        if (e->second.ended > start)
            conflict(who(t.step) + " starts at cycle " + std::to_string(start) + " but needs " + who(ins.after) +
                     ", which runs until cycle " + std::to_string(e->second.ended));
    }
    // Operands must be on the input streams exactly when the instruction starts.
    for (size_t k = 0; k < ins.in.size(); ++k) {
        const stream_use& u = ins.in[k];
        if (!u.valid() || ins.producer[k] == ~0u) continue;
        const auto ps = m_ran.find(ins.producer[k]);
        if (ps == m_ran.end() || ins.producer[k] == t.step)
            conflict(who(t.step) + " reads stream " + std::to_string(u.stream) + " at cycle " + std::to_string(start) +
                     " from " + who(ins.producer[k]) + ", which has not run");
        const instruction& producer = *ps->second.in;
        const stream_use& pu = producer.out;
        const std::int32_t lo = std::min(pu.from, pu.to), hi = std::max(pu.from, pu.to);
        const std::int64_t arrive =
            ps->second.started + m_tm->out_offset(producer.kind) + m_tm->distance(pu.from, u.to);
        if (pu.stream != u.stream || pu.east != u.east || u.to < lo || u.to > hi || producer.spacing != ins.spacing)
            conflict(who(t.step) + " reads stream " + std::to_string(u.stream) + (u.east ? " east" : " west") + " at " +
                     m_tm->unit_name(ins.unit) + " but " + who(ins.producer[k]) + " writes stream " +
                     std::to_string(pu.stream) + (pu.east ? " east" : " west") + " from position " +
                     std::to_string(pu.from) + " to " + std::to_string(pu.to));
        if (arrive != start)
            conflict(who(t.step) + " expects its operands on stream " + std::to_string(u.stream) +
                     (u.east ? " east" : " west") + " at " + m_tm->unit_name(ins.unit) + " at cycle " +
                     std::to_string(start) + ", but " + who(ins.producer[k]) + " delivers them there at cycle " +
                     std::to_string(arrive));
    }
    check_streams(t.step, ins, start);
    m_free[ins.unit][static_cast<size_t>(port)] = start + busy;
    m_holder[ins.unit][static_cast<size_t>(port)] = t.step;
    record.started = start;
    record.ended = start + busy;
    const std::int64_t end = start + busy + m_tm->skew;
    m_last_cycle = std::max(m_last_cycle, end);
    t.tail = m_origin + clock().cycles(static_cast<double>(end));
    const tick busy_end = m_origin + clock().cycles(static_cast<double>(start + busy));
    m_busy[ins.unit] += ticks_to_seconds(busy_end - expected);
    m_instructions += 1;
    if (t.w) {
        m_macs += t.w->macs;
        m_macs_by_type[static_cast<size_t>(t.w->type)] += t.w->macs;
        m_vector_ops += t.w->vector_ops;
        m_mem_bytes += t.w->bytes_in + t.w->bytes_out;
        if (ins.kind == op_kind::mxm_matmul && t.w->macs > 0)
            m_ideal_mxm += t.w->macs / (m_p.mxm.macs_per_cycle_of(t.w->type) * clock().hz);
        if (ins.kind == op_kind::vxm && t.w->vector_ops > 0) {
            const double per_vector = static_cast<double>(m_p.superlanes * m_p.lanes) / (dtype_bits(t.w->type) / 8.0);
            m_ideal_vxm += t.w->vector_ops / (per_vector * static_cast<double>(m_p.vxm.chain) * clock().hz);
        }
    }
    // Energy as usage() charges it: MACs and vector operations to compute, MEM bytes to SRAM, and the active power of
    // the slice over its busy time to the part that slice belongs to.
    double compute_j = 0, sram_j = 0;
    if (t.w) {
        compute_j = m_p.energy.joules(t.w->type, t.w->macs, t.w->vector_ops, name());
        sram_j = (t.w->bytes_in + t.w->bytes_out) * m_p.mem_energy.read.joules();
    }
    const double active_j = m_p.energy.busy_joules(ticks_to_seconds(busy_end - expected));
    switch (m_tm->kind[ins.unit]) {
        case slice_kind::mxm:
        case slice_kind::vxm:
            compute_j += active_j;
            break;
        case slice_kind::mem:
            sram_j += active_j;
            break;
        case slice_kind::sxm:
            break;
    }
    spend(t, energy_part::compute, compute_j, expected, busy_end);
    spend(t, energy_part::sram, sram_j, expected, busy_end);
    if (sim().trace.enabled() && m_tracks[ins.unit] == -2) m_tracks[ins.unit] = trace_track(m_tm->unit_name(ins.unit));
    sim().trace.slice(m_tracks[ins.unit], expected, busy_end, t.op, t.step);
}

std::vector<double> tsp::unit_busy() const {
    // Every superlane runs the same instructions, one cycle apart: the same busy time per superlane.
    std::vector<double> v;
    v.reserve(m_busy.size() * static_cast<size_t>(m_p.superlanes));
    for (std::int64_t s = 0; s < m_p.superlanes; ++s) v.insert(v.end(), m_busy.begin(), m_busy.end());
    return v;
}

void tsp::usage(std::vector<resource_usage>& out) const {
    double mxm_busy = 0, mxm_max = 0, vxm_busy = 0, vxm_max = 0, mem_busy = 0, mem_max = 0;
    for (std::uint32_t u = 0; u < m_tm->units; ++u) {
        const double b = m_busy[u];
        switch (m_tm->kind[u]) {
            case slice_kind::mxm:
                mxm_busy += b, mxm_max = std::max(mxm_max, b);
                break;
            case slice_kind::vxm:
                vxm_busy += b, vxm_max = std::max(vxm_max, b);
                break;
            case slice_kind::mem:
                mem_busy += b, mem_max = std::max(mem_max, b);
                break;
            default:
                break;
        }
    }
    size_t best = static_cast<size_t>(dtype::int8);
    for (size_t i = 0; i < m_macs_by_type.size(); ++i)
        if (m_macs_by_type[i] > m_macs_by_type[best]) best = i;
    resource_usage c;
    c.name = path() + ".mxm";
    c.kind = kind_name();
    c.cls = resource_class::compute;
    c.work = 2 * m_macs;
    c.work_unit = "FLOP";
    c.peak_rate = 2 * m_p.mxm.macs_per_cycle_of(static_cast<dtype>(best)) * clock().hz;
    c.units = static_cast<double>(m_tm->mxm_units.size());
    c.ideal_seconds = m_ideal_mxm;
    c.ideal_max = 0;  // per-plane split not tracked; the total over planes bounds the run
    c.busy_seconds = mxm_busy;
    c.busy_max = mxm_max;
    std::array<double, dtype_count> no_macs{};
    // Active power is per slice busy: MXM, VXM and MEM slices clock only while an instruction runs on them.
    charge(c, m_p.energy.joules(m_macs_by_type, 0, path()) + m_p.energy.busy_joules(mxm_busy),
           m_p.energy.leakage.watts());
    out.push_back(c);
    resource_usage v;
    v.name = path() + ".vxm";
    v.kind = kind_name();
    v.cls = resource_class::compute;
    v.work = m_vector_ops;
    v.work_unit = "FLOP";
    v.peak_rate = static_cast<double>(m_p.superlanes * m_p.lanes * m_p.vxm.chain) * clock().hz;
    v.units = static_cast<double>(m_tm->vxm_units.size());
    v.ideal_seconds = m_ideal_vxm;
    v.busy_seconds = vxm_busy;
    v.busy_max = vxm_max;
    charge(v, m_p.energy.joules(no_macs, m_vector_ops, path()) + m_p.energy.busy_joules(vxm_busy), 0.0);
    out.push_back(v);
    resource_usage m;
    m.name = path() + ".mem";
    m.kind = kind_name();
    m.cls = resource_class::memory;
    m.work = m_mem_bytes;
    m.work_unit = "B";
    m.peak_rate = 2.0 * static_cast<double>(m_p.superlanes * m_p.lanes) * clock().hz;  // a read and a write port
    m.units = static_cast<double>(m_tm->mem_units.size());
    m.ideal_seconds = m_mem_bytes / m.peak_rate;
    m.busy_seconds = mem_busy;
    m.busy_max = mem_max;
    charge(m, m_mem_bytes * m_p.mem_energy.read.joules() + m_p.energy.busy_joules(mem_busy),
           m_p.mem_energy.leakage.watts());
    out.push_back(m);
}

TESSEL_REGISTER_KIND(
    make_kind<tsp>("tsp", "composite",
                   "Groq Tensor Streaming Processor: MXM/SXM/MEM/VXM slices across superlanes, stream registers "
                   "east and west, a static schedule checked cycle by cycle"));

}  // namespace tessel
