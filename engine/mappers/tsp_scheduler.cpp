#include "engine/mappers/tsp_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "engine/workload/op_types.h"

namespace tessel::tsp_sched {

using okind = tsp::op_kind;

stream_bands::stream_bands(const tsp::timing& tm) {
    const std::int64_t planes = tm.p.mxm.planes, streams = tm.p.mxm.weight_streams;
    act_w = 0;
    act_e = static_cast<std::int16_t>(planes);
    res_w = 0;
    res_e = static_cast<std::int16_t>(planes);
    weights = static_cast<std::int16_t>(2 * planes);
    epilogue = static_cast<std::int16_t>(2 * planes + planes * streams);
    vec_in = static_cast<std::int16_t>(epilogue + 2 * planes);
    vec_out = static_cast<std::int16_t>(vec_in + 2 * vector_chains);
    sxm_flow = static_cast<std::int16_t>(vec_out + vector_chains);
    needed = sxm_flow + 2;
    alus = vector_chains + 2 * planes;
}

scheduler::scheduler(const workload_graph& g, const tsp& chip, const tsp_mapper::options& o)
    : m_g(g), m_tm(chip.model()), m_opt(o), m_bands(m_tm), m_liveness(g) {
    m_free.assign(m_tm.units, {0, 0});
    m_slice_used.assign(m_tm.units, 0.0);
    m_store.resize(g.tensors().size());
    m_vector_bytes = static_cast<double>(m_tm.p.superlanes * m_tm.p.lanes);
    m_capacity = static_cast<double>(m_tm.p.mem.slice_capacity.bytes());
    m_plane_passes.assign(m_tm.mxm_units.size(), {});
    m_epilogue_clear.assign(m_tm.mxm_units.size(), {0, 0});
}

void scheduler::run(const std::string& platform_name) {
    m_platform = platform_name;
    if (m_tm.p.streams < m_bands.needed || m_tm.p.vxm.alus < m_bands.alus)
        throw input_error("tsp mapper: '" + m_platform + "' has " + std::to_string(m_tm.p.streams) +
                          " stream registers per direction and " + std::to_string(m_tm.p.vxm.alus) +
                          " VXM ALUs; its schedules need " + std::to_string(m_bands.needed) + " and " +
                          std::to_string(m_bands.alus) + " (with " + std::to_string(m_tm.p.mxm.planes) +
                          " MXM planes per hemisphere and " + std::to_string(m_tm.p.mxm.weight_streams) +
                          " weight streams per plane)");
    place_persistent();
    plan_fusion();
    for (int o : m_g.topological_order()) {
        const op_node& op = m_g.op(o);
        if (m_fused_into[static_cast<size_t>(o)] >= 0) {
            alias_output(o, m_fused_into[static_cast<size_t>(o)]);
        } else if (is_view(op)) {
            alias_view(o);
        } else if (op.cost.m > 0 && op.cost.n > 0 && op.cost.k > 0 && op.inputs.size() >= 2) {
            gemm(o);
        } else {
            stream_op(o);
        }
        release(o);
    }
    if (m_fused > 0)
        notes.push_back(std::to_string(m_fused) +
                        " elementwise/batchnorm op(s) fused into matrix-product epilogues on the VXM");
    details["peak_mem_bytes"] = m_peak_mem;
}

// ---- memory ---------------------------------------------------------------------------------------------
std::string scheduler::largest_live(size_t n) const {
    std::vector<std::pair<double, std::string>> v;
    for (size_t t = 0; t < m_store.size(); ++t)
        if (m_store[t].live) v.emplace_back(m_store[t].bytes, ti(static_cast<int>(t)).name);
    std::sort(v.rbegin(), v.rend());
    std::string s;
    for (size_t i = 0; i < v.size() && i < n; ++i) s += (i ? ", " : "") + v[i].second + " " + format_bytes(v[i].first);
    return s;
}

/// Spreads a tensor over MEM slices with room, `want` of them at most.
void scheduler::allocate(int t, size_t want) {
    tensor_store& s = m_store[static_cast<size_t>(t)];
    s.bytes = static_cast<double>(ti(t).bytes());
    const size_t n_mem = m_tm.mem_units.size();
    want = std::clamp<size_t>(want, 1, n_mem);
    for (;;) {
        s.slices.clear();
        const double share = s.bytes / static_cast<double>(want);
        for (size_t k = 0; k < n_mem && s.slices.size() < want; ++k) {
            const std::uint32_t u = m_tm.mem_units[(m_cursor + k) % n_mem];
            if (m_slice_used[u] + share <= m_capacity) s.slices.push_back(u);
        }
        if (s.slices.size() == want) break;
        if (want == n_mem) {
            double used = 0, fullest = 0;
            for (std::uint32_t u : m_tm.mem_units) {
                used += m_slice_used[u];
                fullest = std::max(fullest, m_slice_used[u]);
            }
            const double total = m_capacity * static_cast<double>(n_mem);
            // Short in total, or (the total would do) a slice too full for its share of the tensor.
            const std::string why = used + s.bytes > total
                                        ? "short by " + format_bytes(used + s.bytes - total)
                                        : "it needs " + format_bytes(share) + " in every slice and the fullest has " +
                                              format_bytes(m_capacity - fullest) + " free";
            throw input_error("workload '" + m_g.name + "' does not fit on '" + m_platform + "': tensor '" +
                              ti(t).name + "' (" + format_bytes(s.bytes) + ") finds no room next to " +
                              format_bytes(used) + " of live tensors in the " + std::to_string(n_mem) +
                              " MEM slices (" + format_capacity(total) + "); " + why +
                              "; largest live: " + largest_live(5) + ". A TSP has no off-chip memory");
        }
        want = n_mem;  // spread thinner
    }
    m_cursor = (m_cursor + static_cast<std::uint32_t>(want)) % static_cast<std::uint32_t>(n_mem);
    for (std::uint32_t u : s.slices) m_slice_used[u] += s.bytes / static_cast<double>(s.slices.size());
    s.live = true;
    m_live += s.bytes;
    m_peak_mem = std::max(m_peak_mem, m_live);
}

void scheduler::free_tensor(int t) {
    tensor_store& s = m_store[static_cast<size_t>(t)];
    if (!s.live) return;
    for (std::uint32_t u : s.slices) m_slice_used[u] -= s.bytes / static_cast<double>(s.slices.size());
    s.live = false;
    m_live -= s.bytes;
}

/// Advice for weights that overflow the chip: int8 when they are wider and would fit at int8, else nothing.
std::string scheduler::narrower(double total, double cap) const {
    double bits = 0;
    for (const tensor_info& x : m_g.tensors())
        if (x.role == tensor_role::weight) bits = std::max(bits, static_cast<double>(dtype_bits(x.type)));
    if (bits <= 8 || total * 8 / bits > cap) return "";
    return ", or int8 weights, which would fit (--set workload.precision=int8)";
}

void scheduler::place_persistent() {
    double total = 0;
    std::vector<std::pair<double, std::string>> big;
    for (size_t t = 0; t < m_g.tensors().size(); ++t) {
        const tensor_info& x = m_g.tensors()[t];
        if (x.producer >= 0 || x.consumers.empty() || x.alias_of >= 0 || x.role == tensor_role::constant) continue;
        if (x.role == tensor_role::weight || x.role == tensor_role::state) {
            total += static_cast<double>(x.bytes());
            big.emplace_back(static_cast<double>(x.bytes()), x.name);
        }
    }
    const double cap = m_capacity * static_cast<double>(m_tm.mem_units.size());
    if (total > cap) {
        std::sort(big.rbegin(), big.rend());
        std::string list;
        for (size_t i = 0; i < big.size() && i < 5; ++i)
            list += (i ? ", " : "") + big[i].second + " " + format_bytes(big[i].first);
        throw input_error(
            "workload '" + m_g.name + "' does not fit on '" + m_platform + "': its weights and state need " +
            format_bytes(total) + " but the " + std::to_string(m_tm.mem_units.size()) + " MEM slices hold " +
            format_capacity(cap) + ": short by " + format_bytes(total - cap) + " (largest: " + list +
            "). A TSP has no off-chip memory: it needs at least " +
            std::to_string(static_cast<int>(std::ceil(total / cap))) +
            " chips (systems/groqrack runs a rack of them over their chip-to-chip links)" + narrower(total, cap));
    }
    for (size_t t = 0; t < m_g.tensors().size(); ++t) {
        const tensor_info& x = m_g.tensors()[t];
        if (x.producer >= 0 || x.consumers.empty() || x.alias_of >= 0 || x.role == tensor_role::constant) continue;
        allocate(static_cast<int>(t), static_cast<size_t>(vectors(static_cast<double>(x.bytes())) / 64 + 1));
    }
}

void scheduler::release(int o) {
    m_liveness.read_inputs(m_g.op(o), [&](int r) {
        if (!persistent(r) && ti(r).role != tensor_role::output) free_tensor(r);
    });
}

void scheduler::alias_view(int o) {
    const int src = view_source(m_g, m_g.op(o));
    if (src >= 0)
        for (int t : m_g.op(o).outputs) m_liveness.share(t, src);
}

void scheduler::alias_output(int o, int host) {
    for (int t : m_g.op(o).outputs) m_liveness.share(t, m_g.op(host).outputs.front());
}

/// Elementwise and batchnorm ops that read only a matrix product's result (and weights) run in its epilogue.
/// So does a two-operand elementwise op (a residual add) when one operand is a matrix product's result read by
/// nothing else and the other (the residual) is written before that product runs: the epilogue's VXM ALU takes
/// the residual as a second stream from MEM, as Groq's compiler chains an add into the producing layer.
void scheduler::plan_fusion() {
    const size_t n = m_g.ops().size();
    m_fused_into.assign(n, -1);
    m_epilogue_ops.assign(n, 0.0);
    m_residual.assign(n, -1);
    if (!m_opt.fuse_epilogues) return;
    const std::vector<int> order = m_g.topological_order();
    std::vector<size_t> position(n, 0);
    for (size_t i = 0; i < order.size(); ++i) position[static_cast<size_t>(order[i])] = i;
    auto is_gemm = [&](int o) {
        const auto& c = m_g.op(o).cost;
        return c.m > 0 && c.n > 0 && c.k > 0;
    };
    // The matrix product whose epilogue would run an op reading `t` (-1: none).
    auto host_of = [&](int t) {
        int h = ti(t).producer;
        if (h >= 0 && m_fused_into[static_cast<size_t>(h)] >= 0) h = m_fused_into[static_cast<size_t>(h)];
        return h >= 0 && is_gemm(h) ? h : -1;
    };
    for (int o : order) {
        const op_node& op = m_g.op(o);
        if (op.kind != op_kind::elementwise && op.kind != op_kind::batchnorm) continue;
        std::vector<int> acts;
        for (int t : op.inputs) {
            const auto role = ti(t).role;
            if (role == tensor_role::weight || role == tensor_role::state || role == tensor_role::constant) continue;
            if (ti(t).elements() < ti(op.outputs.front()).elements()) continue;  // a broadcast operand
            acts.push_back(t);
        }
        int act = -1, residual = -1;
        if (acts.size() == 1) {
            act = acts[0];
        } else if (acts.size() == 2 && op.kind == op_kind::elementwise) {
            // The operand whose product runs last hosts; the other must be complete before it runs.
            const int h0 = host_of(acts[0]), h1 = host_of(acts[1]);
            const bool first =
                h0 >= 0 && (h1 < 0 || position[static_cast<size_t>(h0)] > position[static_cast<size_t>(h1)]);
            act = first ? acts[0] : acts[1];
            residual = first ? acts[1] : acts[0];
            const int rp = ti(residual).producer;
            const int h = host_of(act);
            if (h < 0 || m_residual[static_cast<size_t>(h)] >= 0 || ti(residual).type != ti(act).type ||
                (rp >= 0 && position[static_cast<size_t>(rp)] >= position[static_cast<size_t>(h)]))
                continue;
        } else {
            continue;
        }
        if (ti(act).producer < 0 || ti(act).consumers.size() != 1) continue;
        const int host = host_of(act);
        if (host < 0) continue;
        const op_node& h = m_g.op(host);
        if (ti(op.outputs.front()).elements() != ti(h.outputs.front()).elements()) continue;
        m_fused_into[static_cast<size_t>(o)] = host;
        if (residual >= 0) m_residual[static_cast<size_t>(host)] = residual;
        const double elems = static_cast<double>(std::max<std::int64_t>(1, ti(op.outputs.front()).elements()));
        m_epilogue_ops[static_cast<size_t>(host)] += std::max(1.0, std::round(op.cost.flops / elems));
        ++m_fused;
    }
}

std::uint32_t scheduler::slice_of(int t, std::int64_t chunk, std::uint32_t avoid) const {
    const tensor_store& s = m_store[static_cast<size_t>(root(t))];
    if (s.slices.empty()) throw std::logic_error("tsp mapper: tensor '" + ti(t).name + "' has no storage");
    const size_t n = s.slices.size();
    std::uint32_t u = s.slices[static_cast<size_t>(chunk) % n];
    if (u == avoid && n > 1) u = s.slices[static_cast<size_t>(chunk + 1) % n];
    return u;
}

/// The slice a pass reads its rows of `t` from: the one whose read port lets them reach position `to` first
/// (ties: chunk's own slice). A tensor spread over several slices serves passes on different planes at once:
/// each pass takes its rows from every slice in turn, the passes rotated so that no two read one slice in the
/// same cycle, which occupies each port as one pass per slice does.
std::uint32_t scheduler::read_slice(int t, std::int64_t chunk, std::int32_t to) const {
    const tensor_store& s = m_store[static_cast<size_t>(root(t))];
    std::uint32_t best = slice_of(t, chunk);
    auto arrival = [&](std::uint32_t u) { return m_free[u][0] + m_tm.distance(pos(u), to); };
    for (std::uint32_t u : s.slices)
        if (arrival(u) < arrival(best)) best = u;
    return best;
}

/// A MEM read of `vectors` vectors, one every `spacing` cycles, from `slice` at `cycle` onto stream `out`: books
/// the slice's read port and returns the instruction's record.
std::uint32_t scheduler::mem_read(std::uint32_t slice, std::int64_t cycle, std::int64_t vectors, std::int64_t spacing,
                                  std::uint32_t after, const tsp::stream_use& out, std::string name, dtype type,
                                  std::uint32_t opi) {
    instr rd;
    rd.kind = okind::mem_read;
    rd.unit = slice;
    rd.cycle = cycle;
    rd.vectors = vectors;
    rd.spacing = spacing;
    rd.after = after;
    rd.out = out;
    rd.name = std::move(name);
    work rw;
    rw.type = type;
    rw.cls = op_class::data_movement;
    rw.bytes_in = static_cast<double>(vectors) * m_vector_bytes;
    m_free[slice][0] = cycle + vectors * spacing;
    return add(rd, rw, opi);
}

/// The slice of residual `r` an epilogue writing to `wslice` reads it from: on the write slice's side (the
/// two flows share a band, in opposite directions), the one whose read port reaches the VXM first; ~0u: none.
std::uint32_t scheduler::residual_slice(int r, std::uint32_t wslice) const {
    std::uint32_t best = ~0u;
    std::int64_t at = 0;
    for (std::uint32_t u : m_store[static_cast<size_t>(root(r))].slices) {
        if (west_side(u) != west_side(wslice)) continue;
        const std::int64_t a = m_free[u][0] + m_tm.distance(pos(u), m_tm.vxm_position);
        if (best == ~0u || a < at) best = u, at = a;
    }
    return best;
}

/// A slice of `t` on a side where residual `r` has one (the result was allocated next to the residual).
std::uint32_t scheduler::side_slice(int t, int r) const {
    for (std::uint32_t u : m_store[static_cast<size_t>(root(t))].slices)
        if (residual_slice(r, u) != ~0u) return u;
    // The result was allocated from the residual's first slice on; only a MEM too full there to take any of it
    // leaves the two on opposite sides, where their flows would share a stream register the same way.
    throw input_error("tsp mapper: '" + ti(t).name +
                      "' found no room on the side of the MEM where its fused residual '" + ti(r).name +
                      "' lies (the epilogue reads the residual on the side it writes to); "
                      "--set mapper.fuse_epilogues=false schedules the add on its own");
}

void scheduler::produced(int t, std::uint32_t write, std::int64_t end) {
    tensor_store& s = m_store[static_cast<size_t>(root(t))];
    if (end >= s.ready) {
        s.ready = end;
        s.writer = write;
    }
}
// ---- matrix products -------------------------------------------------------------------------------------
void scheduler::gemm(int o) {
    const op_node& op = m_g.op(o);
    const dtype type = op.compute_type;
    const std::int64_t dim = m_tm.array_dim(type);
    if (dim <= 0)
        throw input_error("the MXM of '" + m_platform + "' cannot multiply in " + std::string(dtype_name(type)) +
                          " (mxm.macs_per_cycle lists the types it can); --set workload.precision=int8 or fp16");
    const std::int64_t batch = std::max<std::int64_t>(1, op.cost.batch), m = op.cost.m, n = op.cost.n, k = op.cost.k;
    const std::int64_t kb = (k + dim - 1) / dim, nb = (n + dim - 1) / dim;
    const std::int64_t planes = static_cast<std::int64_t>(m_tm.mxm_units.size());
    const std::int64_t mchunks = std::clamp<std::int64_t>((planes + batch * nb - 1) / (batch * nb), 1, m);
    const int a_in = op.inputs[0], b_in = op.inputs[1];
    const int out = op.outputs.front();
    const int res = m_residual[static_cast<size_t>(o)];
    if (res >= 0) {
        // The result goes next to the residual: an epilogue reads its residual on the side it writes to.
        const std::uint32_t first = m_store[static_cast<size_t>(root(res))].slices.front();
        m_cursor = static_cast<std::uint32_t>(std::find(m_tm.mem_units.begin(), m_tm.mem_units.end(), first) -
                                              m_tm.mem_units.begin());
    }
    allocate(out, static_cast<size_t>(std::min<std::int64_t>(batch * nb * mchunks, 88)));
    const double f = 1 + m_epilogue_ops[static_cast<size_t>(o)];  // requantise/round, plus fused ops
    const std::int64_t ops_per = static_cast<std::int64_t>(f);
    const std::int64_t spacing = (ops_per + m_tm.p.vxm.chain - 1) / m_tm.p.vxm.chain;
    const std::uint32_t opi = op_id(op.name);
    const tensor_store& a_store = m_store[static_cast<size_t>(root(a_in))];
    const tensor_store& b_store = m_store[static_cast<size_t>(root(b_in))];
    const std::int64_t first_cycle = std::max(a_store.ready, b_store.ready);
    const double out_elems = static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n);
    gemm_job job{op,      type,    dim,         batch, m, n, k, kb, nb, mchunks,  // the blocks
                 a_in,    b_in,    out,         res,                              // the operands, result and residual
                 f,       ops_per, spacing,     opi,                              // the epilogue
                 a_store, b_store, first_cycle, 0};  // the operands' storage, the last cycle, passes
    // Items (a batch entry, a block of N columns, a chunk of M rows) go to planes in waves of one per plane,
    // and a wave's planes take their K blocks in step, so that they share the MEM slices' read ports evenly
    // instead of the first item reading all its rows before the next can begin.
    std::vector<gemm_item> items;
    for (std::int64_t bi = 0; bi < batch; ++bi)
        for (std::int64_t j = 0; j < nb; ++j)
            for (std::int64_t mc = 0; mc < mchunks; ++mc) items.push_back({bi, j, mc, 0});
    const size_t planes_n = m_tm.mxm_units.size();
    for (size_t w0 = 0; w0 < items.size(); w0 += planes_n) {
        const size_t w1 = std::min(items.size(), w0 + planes_n);
        // The earliest free plane takes the next item.
        std::vector<bool> taken(planes_n, false);
        for (size_t i = w0; i < w1; ++i) {
            size_t pi = planes_n;
            for (size_t q = 0; q < planes_n; ++q)
                if (!taken[q] && (pi == planes_n || m_free[m_tm.mxm_units[q]][0] < m_free[m_tm.mxm_units[pi]][0]))
                    pi = q;
            taken[pi] = true;
            items[i].pi = pi;
        }
        for (std::int64_t l = 0; l < kb; ++l)
            for (size_t i = w0; i < w1; ++i) schedule_pass(job, items[i], l);
    }
    (void)out_elems;
    spans.emplace_back(op.name, first_cycle, job.last, "MXM");
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s: %s %lldx%lldx%lld%s in %lld plane passes (%lldx%lld blocks of %lld, %lld row chunk(s)), "
                  "cycles %lld-%lld",
                  op.name.c_str(), op_kind_name(op.kind), static_cast<long long>(m), static_cast<long long>(n),
                  static_cast<long long>(k), batch > 1 ? (" x" + std::to_string(batch)).c_str() : "",
                  static_cast<long long>(job.passes), static_cast<long long>(kb), static_cast<long long>(nb),
                  static_cast<long long>(dim), static_cast<long long>(mchunks), static_cast<long long>(first_cycle),
                  static_cast<long long>(job.last));
    notes.emplace_back(line);
}

/// Work item `it`'s K block `l`: the weight block, the activation rows through the plane and, after the last K
/// block, the epilogue and the write.
void scheduler::schedule_pass(gemm_job& job, const gemm_item& it, std::int64_t l) {
    const auto [bi, j, mc, pi] = it;
    const std::uint32_t plane = m_tm.mxm_units[pi];
    const bool west = pos(plane) < m_tm.vxm_position;
    const int q = static_cast<int>(pi % static_cast<size_t>(m_tm.p.mxm.planes));
    const std::int64_t m0 = job.m * mc / job.mchunks, m1 = job.m * (mc + 1) / job.mchunks, rows = m1 - m0;
    const std::int64_t ncols = std::min(job.dim, job.n - j * job.dim);
    const std::uint32_t alu = m_tm.vxm_units[static_cast<size_t>(stream_bands::vector_chains) + pi];
    std::uint32_t wslice = slice_of(job.out, (bi * job.nb + j) * job.mchunks + mc);
    if (job.res >= 0 && residual_slice(job.res, wslice) == ~0u) wslice = side_slice(job.out, job.res);
    const std::int64_t krows = std::min(job.dim, job.k - l * job.dim);
    const bool emit = l == job.kb - 1;
    const std::int64_t sp = emit ? job.spacing : 1;
    const std::int32_t d_res = m_tm.distance(pos(plane), m_tm.vxm_position);
    const std::int32_t d_out = m_tm.distance(m_tm.vxm_position, pos(wslice));
    const gemm_pass p{bi, j, mc, l, pi, plane, west, q, rows, ncols, krows, alu, wslice, emit, sp, d_res, d_out};
    const auto [wrec, wend] = install_weights(job, p);
    matmul_pass(job, p, wrec, wend);
}

/// Installs the weight block of pass `p` (double buffered: after the pass two back has finished): its record and
/// the cycle it ends.
std::pair<std::uint32_t, std::int64_t> scheduler::install_weights(const gemm_job& job, const gemm_pass& p) {
    const auto& ends = m_plane_passes[p.pi];
    instr wi;
    wi.kind = okind::mxm_weights;
    wi.unit = p.plane;
    wi.rows = p.krows;
    const std::uint32_t bsl = slice_of(job.b_in, (p.bi * job.nb + p.j) * job.kb + p.l);
    wi.in[0] = tsp::stream_use{static_cast<std::int16_t>(m_bands.weights + m_tm.p.mxm.weight_streams * p.q),
                               static_cast<std::int16_t>(m_tm.p.mxm.weight_streams),
                               !p.west,
                               pos(bsl),
                               pos(p.plane),
                               0};
    std::int64_t wstart =
        std::max({m_free[p.plane][1], ends.size() >= 2 ? ends[ends.size() - 2] : std::int64_t{0}, job.b_store.ready});
    // Weight rows must not reach the plane before cycle 0 has them leave their slice.
    wstart = std::max<std::int64_t>(wstart, dist(bsl, pos(p.plane)));
    wi.cycle = wstart;
    wi.after = job.b_store.writer;
    wi.name = job.op.name + " weights b" + std::to_string(p.bi) + " n" + std::to_string(p.j) + " k" +
              std::to_string(p.l) + " on " + m_tm.unit_name(p.plane);
    const std::int64_t wend = wstart + m_tm.busy(wi);
    work ww;
    ww.type = job.type;
    ww.cls = job.op.cost.cls;
    ww.bytes_in = static_cast<double>(p.krows) * m_vector_bytes;
    const std::uint32_t wrec = add(wi, ww, job.opi);
    m_free[p.plane][1] = wend;
    return {wrec, wend};
}

/// Pass `p` on its plane (after weight install `wrec`, which ends at `wend`): activation rows from their slice;
/// the plane, the epilogue ALU and the write slice in lockstep.
void scheduler::matmul_pass(gemm_job& job, const gemm_pass& p, std::uint32_t wrec, std::int64_t wend) {
    const op_node& op = job.op;
    const tensor_store& a_store = job.a_store;
    const std::uint32_t asl = read_slice(job.a_in, (p.bi * job.mchunks + p.mc) * job.kb + p.l, pos(p.plane));
    const std::int32_t d_in = dist(asl, pos(p.plane));
    std::int64_t cm = std::max(
        {m_free[p.plane][0], wend, a_store.ready + m_tm.mem_latency + d_in, m_free[asl][0] + m_tm.mem_latency + d_in});
    if (p.emit) {
        cm = std::max(cm, m_free[p.alu][0] - m_tm.mxm_latency - p.d_res);
        cm = std::max(cm, m_free[p.wslice][1] - m_tm.vxm_latency - p.d_out - m_tm.mxm_latency - p.d_res);
        if (job.res >= 0) {
            const std::uint32_t rs = residual_slice(job.res, p.wslice);
            const std::int32_t d_r = m_tm.distance(pos(rs), m_tm.vxm_position);
            const tensor_store& res_store = m_store[static_cast<size_t>(root(job.res))];
            const bool res_east = pos(rs) < m_tm.vxm_position;
            cm = std::max({cm, m_free[rs][0] + m_tm.mem_latency + d_r - m_tm.mxm_latency - p.d_res,
                           res_store.ready + m_tm.mem_latency + d_r - m_tm.mxm_latency - p.d_res,
                           m_epilogue_clear[p.pi][res_east ? 1 : 0] - m_tm.mxm_latency - p.d_res});
        }
    }
    const std::int64_t cr = cm - m_tm.mem_latency - d_in;
    const tsp::stream_use rows_in{static_cast<std::int16_t>((p.west ? m_bands.act_w : m_bands.act_e) + p.q),
                                  1,
                                  !p.west,
                                  pos(asl),
                                  pos(p.plane),
                                  0};
    const std::uint32_t rrec = mem_read(asl, cr, p.rows, p.sp, a_store.writer, rows_in,
                                        op.name + " rows b" + std::to_string(p.bi) + " m" + std::to_string(p.mc) +
                                            " k" + std::to_string(p.l) + " from " + m_tm.unit_name(asl),
                                        job.type, job.opi);
    instr mm;
    mm.kind = okind::mxm_matmul;
    mm.unit = p.plane;
    mm.cycle = cm;
    mm.vectors = p.rows;
    mm.spacing = p.sp;
    mm.in[0] = rows_in;
    mm.producer[0] = rrec;
    mm.after = wrec;
    if (p.emit)
        mm.out = tsp::stream_use{static_cast<std::int16_t>(p.west ? m_bands.res_w + p.q : m_bands.res_e + p.q),
                                 1,
                                 p.west,
                                 pos(p.plane),
                                 m_tm.vxm_position,
                                 0};
    mm.name = op.name + " pass b" + std::to_string(p.bi) + " n" + std::to_string(p.j) + " m" + std::to_string(p.mc) +
              " k" + std::to_string(p.l) + " on " + m_tm.unit_name(p.plane);
    work mw;
    mw.type = job.type;
    mw.cls = op.cost.cls;
    mw.macs = static_cast<double>(p.rows) * static_cast<double>(p.krows) * static_cast<double>(p.ncols);
    mw.m = p.rows;
    mw.n = p.ncols;
    mw.k = p.krows;
    mw.batch = 1;
    const std::uint32_t mrec = add(mm, mw, job.opi);
    m_free[p.plane][0] = cm + p.rows * p.sp;
    m_plane_passes[p.pi].push_back(cm + p.rows * p.sp);
    ++job.passes;
    if (!p.emit) return;
    epilogue(job, p, cm, mm.out, mrec);
}

/// The epilogue of pass `p` (its matrix product at cycle `cm`, record `mrec`, sends `result`) on the VXM, then the
/// write.
void scheduler::epilogue(gemm_job& job, const gemm_pass& p, std::int64_t cm, const tsp::stream_use& result,
                         std::uint32_t mrec) {
    const op_node& op = job.op;
    const std::int64_t cv = cm + m_tm.mxm_latency + p.d_res;
    instr vx;
    vx.kind = okind::vxm;
    vx.unit = p.alu;
    vx.cycle = cv;
    vx.vectors = p.rows;
    vx.spacing = p.sp;
    vx.ops = job.ops_per;
    vx.in[0] = result;
    vx.producer[0] = mrec;
    if (job.res >= 0) {
        // The residual's rows, on the epilogue's band toward the VXM (its result leaves on the
        // same band the other way: both are on the side of the write slice).
        const std::uint32_t rs = residual_slice(job.res, p.wslice);
        const tensor_store& res_store = m_store[static_cast<size_t>(root(job.res))];
        vx.in[1] = tsp::stream_use{static_cast<std::int16_t>(m_bands.epilogue + static_cast<std::int64_t>(p.pi)),
                                   1,
                                   pos(rs) < m_tm.vxm_position,
                                   pos(rs),
                                   m_tm.vxm_position,
                                   0};
        vx.producer[1] = mem_read(rs, cv - m_tm.mem_latency - m_tm.distance(pos(rs), m_tm.vxm_position), p.rows, p.sp,
                                  res_store.writer, vx.in[1],
                                  op.name + " residual b" + std::to_string(p.bi) + " n" + std::to_string(p.j) + " m" +
                                      std::to_string(p.mc) + " from " + m_tm.unit_name(rs),
                                  job.type, job.opi);
    }
    vx.out = tsp::stream_use{static_cast<std::int16_t>(m_bands.epilogue + static_cast<std::int64_t>(p.pi)),
                             1,
                             pos(p.wslice) > m_tm.vxm_position,
                             m_tm.vxm_position,
                             pos(p.wslice),
                             0};
    vx.name = op.name + " epilogue b" + std::to_string(p.bi) + " n" + std::to_string(p.j) + " m" + std::to_string(p.mc);
    work vw;
    vw.type = job.type;
    vw.cls = op_class::elementwise;
    vw.vector_ops = static_cast<double>(p.rows) * static_cast<double>(p.ncols) * job.f;
    const std::uint32_t vrec = add(vx, vw, job.opi);
    m_free[p.alu][0] = cv + p.rows * p.sp;
    m_epilogue_clear[p.pi][vx.out.east ? 1 : 0] = cv + m_tm.out_offset(okind::vxm) + p.rows * p.sp;
    const std::int64_t cw = cv + m_tm.vxm_latency + p.d_out;
    instr wr;
    wr.kind = okind::mem_write;
    wr.unit = p.wslice;
    wr.cycle = cw;
    wr.vectors = p.rows;
    wr.spacing = p.sp;
    wr.in[0] = vx.out;
    wr.producer[0] = vrec;
    wr.name = op.name + " result b" + std::to_string(p.bi) + " n" + std::to_string(p.j) + " m" + std::to_string(p.mc) +
              " to " + m_tm.unit_name(p.wslice);
    work ow;
    ow.type = job.type;
    ow.cls = op_class::data_movement;
    ow.bytes_out = static_cast<double>(p.rows) * m_vector_bytes;
    const std::uint32_t wrrec = add(wr, ow, job.opi);
    m_free[p.wslice][1] = cw + p.rows * p.sp;
    produced(job.out, wrrec, cw + p.rows * p.sp);
    job.last = std::max(job.last, cw + p.rows * p.sp);
}

// ---- everything else: MEM -> VXM or SXM -> MEM ---------------------------------------------------------------
void scheduler::stream_op(int o) {
    const op_node& op = m_g.op(o);
    const int out = op.outputs.front();
    double out_bytes = 0;
    for (int t : op.outputs) out_bytes += static_cast<double>(ti(t).bytes());
    const bool arithmetic = op.cost.flops > 0;
    // Operands that stream: for arithmetic the (at most two) largest inputs at least as large as the result
    // (broadcast operands such as a bias stay in the VXM's registers), for data movement the largest input.
    std::vector<int> ins;
    for (int t : op.inputs)
        if (ti(t).role != tensor_role::constant && (!arithmetic || ti(t).elements() >= ti(out).elements()))
            ins.push_back(t);
    if (ins.empty())
        for (int t : op.inputs)
            if (ti(t).role != tensor_role::constant) ins.push_back(t);
    std::stable_sort(ins.begin(), ins.end(), [&](int a, int b) { return ti(a).bytes() > ti(b).bytes(); });
    if (ins.size() > (arithmetic ? 2u : 1u)) ins.resize(arithmetic ? 2 : 1);
    double in_bytes = 0;
    for (int t : ins) in_bytes += static_cast<double>(ti(t).bytes());
    const std::int64_t vecs =
        vectors(std::max({out_bytes, in_bytes / std::max<size_t>(1, ins.size()), m_vector_bytes}));
    const double elems = static_cast<double>(std::max<std::int64_t>(1, ti(out).elements()));
    std::int64_t f =
        arithmetic ? std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(op.cost.flops / elems))) : 1;
    if (arithmetic && op.kind == op_kind::reduce && !ins.empty()) {
        // A reduction streams its input through the VXM once, accumulating vector by vector at stream rate,
        // whatever the axis: its operations are per input element, not per (far fewer) output element. Folding
        // the last axis also sums across the lanes of each row's accumulator: log2(lanes) shift-and-add steps
        // per output element, charged to the chains that stream the input (spread over its vectors).
        const tensor_info& x = ti(ins.front());
        const double in_elems = static_cast<double>(std::max<std::int64_t>(1, x.elements()));
        double per_vector = std::ceil(op.cost.flops / in_elems);
        const auto axes = attr_ints(op, "axes");
        const auto rank = static_cast<std::int64_t>(x.shape.size());
        bool last = axes.empty() || op.type == "dot";
        for (std::int64_t a : axes) last = last || a == -1 || a == rank - 1;
        if (op.type == "argmax") last = attr_int(op, "axis", 0) == -1 || attr_int(op, "axis", 0) == rank - 1;
        const double lanes = std::max(1.0, m_vector_bytes / (dtype_bits(x.type) / 8.0));
        const double in_vectors = std::max(1.0, static_cast<double>(x.bytes()) / m_vector_bytes);
        if (last) per_vector += std::ceil(std::log2(lanes)) * elems / in_vectors;
        f = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(per_vector)));
    }
    const std::int64_t sp = arithmetic ? (f + m_tm.p.vxm.chain - 1) / m_tm.p.vxm.chain : 1;
    for (int t : op.outputs) allocate(t, static_cast<size_t>(std::min<std::int64_t>(vecs, 88)));
    const std::uint32_t opi = op_id(op.name);
    std::int64_t first = 0;
    for (int t : ins) first = std::max(first, m_store[static_cast<size_t>(root(t))].ready);
    std::int64_t last = first;
    const int chains = arithmetic ? stream_bands::vector_chains : static_cast<int>(m_tm.sxm_units.size());
    const std::int64_t n = std::min<std::int64_t>(chains, vecs);
    for (std::int64_t c = 0; c < n; ++c) {
        const std::int64_t v0 = vecs * c / n, v1 = vecs * (c + 1) / n, vc = v1 - v0;
        if (vc <= 0) continue;
        std::vector<std::uint32_t> src;
        for (size_t k = 0; k < ins.size(); ++k)
            src.push_back(slice_of(ins[k], c + 7 * static_cast<std::int64_t>(k), k ? src[0] : ~0u));
        std::uint32_t unit;
        std::int16_t in_id, out_id;
        if (arithmetic) {
            unit = m_tm.vxm_units[static_cast<size_t>(c)];
            in_id = static_cast<std::int16_t>(m_bands.vec_in + 2 * c);
            out_id = static_cast<std::int16_t>(m_bands.vec_out + c);
        } else {
            // The switch unit on the side of the (first) operand.
            const bool west = src.empty() || pos(src[0]) < m_tm.vxm_position;
            unit = m_tm.sxm_units[west ? 0 : m_tm.sxm_units.size() - 1];
            in_id = static_cast<std::int16_t>(m_bands.sxm_flow + (west ? 0 : 1));
            out_id = in_id;
        }
        const std::uint32_t wslice = slice_of(out, c);
        const std::int32_t up = pos(unit);
        const std::int64_t lat = arithmetic ? m_tm.vxm_latency : m_tm.sxm_latency;
        const std::int32_t d_out = m_tm.distance(up, pos(wslice));
        std::int64_t cu = std::max(m_free[unit][0], m_free[wslice][1] - lat - d_out);
        for (size_t k = 0; k < src.size(); ++k) {
            const tensor_store& s = m_store[static_cast<size_t>(root(ins[k]))];
            cu = std::max({cu, s.ready + m_tm.mem_latency + dist(src[k], up),
                           m_free[src[k]][0] + m_tm.mem_latency + dist(src[k], up)});
        }
        // Weight operands of a switch op (a table lookup) start at cycle 0 at the earliest.
        for (size_t k = 0; k < src.size(); ++k) cu = std::max<std::int64_t>(cu, m_tm.mem_latency + dist(src[k], up));
        instr ui;
        ui.kind = arithmetic ? okind::vxm : okind::sxm;
        ui.unit = unit;
        ui.cycle = cu;
        ui.vectors = vc;
        ui.spacing = sp;
        ui.ops = f;
        for (size_t k = 0; k < src.size(); ++k) {
            ui.in[k] =
                tsp::stream_use{static_cast<std::int16_t>(in_id + (arithmetic ? static_cast<std::int16_t>(k) : 0)),
                                1,
                                pos(src[k]) < up,
                                pos(src[k]),
                                up,
                                0};
            ui.producer[k] = mem_read(src[k], cu - m_tm.mem_latency - dist(src[k], up), vc, sp,
                                      m_store[static_cast<size_t>(root(ins[k]))].writer, ui.in[k],
                                      op.name + " operand " + std::to_string(k) + " chunk " + std::to_string(c) +
                                          " from " + m_tm.unit_name(src[k]),
                                      ti(ins[k]).type, opi);
        }
        ui.out = tsp::stream_use{out_id, 1, pos(wslice) > up, up, pos(wslice), 0};
        ui.name = op.name + " chunk " + std::to_string(c) + " on " + m_tm.unit_name(unit);
        work uw = op.to_work();
        const double share = static_cast<double>(vc) / static_cast<double>(vecs);
        uw.macs = 0;
        uw.vector_ops = arithmetic ? op.cost.flops * share : 0;
        uw.bytes_in = uw.bytes_weight = uw.bytes_out = 0;
        uw.batch = uw.m = uw.n = uw.k = 0;
        const std::uint32_t urec = add(ui, uw, opi);
        m_free[unit][0] = cu + vc * sp;
        const std::int64_t cw = cu + lat + d_out;
        instr wr;
        wr.kind = okind::mem_write;
        wr.unit = wslice;
        wr.cycle = cw;
        wr.vectors = vc;
        wr.spacing = sp;
        wr.in[0] = ui.out;
        wr.producer[0] = urec;
        wr.name = op.name + " chunk " + std::to_string(c) + " to " + m_tm.unit_name(wslice);
        work ow;
        ow.type = ti(out).type;
        ow.cls = op_class::data_movement;
        ow.bytes_out = static_cast<double>(vc) * m_vector_bytes;
        const std::uint32_t wrec = add(wr, ow, opi);
        m_free[wslice][1] = cw + vc * sp;
        for (int t : op.outputs) produced(t, wrec, cw + vc * sp);
        last = std::max(last, cw + vc * sp);
    }
    spans.emplace_back(op.name, first, last, arithmetic ? "VXM" : "SXM");
}
}  // namespace tessel::tsp_sched
