// The bsp mapper: the platform's parts, each matrix product's split, and the fallback that moves the fewest
// weights to streaming memory that make the rest fit.
#include <functional>
#include <optional>
#include <sstream>

#include "engine/mappers/bsp/planner.h"
#include "engine/mappers/toolkit/matmul_split.h"
#include "engine/mappers/toolkit/parts.h"
#include "engine/workload/op_types.h"

namespace tessel::bsp {

planner::planner(const workload_graph& g, const platform& plat, const bsp_mapper::options& o,
                 std::vector<bool> streamed, std::vector<bsp_mapper::superstep>& steps)
    : m_g(g), m_plat(plat), m_opt(o), m_streamed(std::move(streamed)), m_steps(steps), m_liveness(g) {
    m_streaming = std::find(m_streamed.begin(), m_streamed.end(), true) != m_streamed.end();
    m_streamed.resize(g.tensors().size(), false);
    find_parts();
    m_out.prog.name = g.name;
    const size_t nt = g.tensors().size();
    m_place.resize(nt);
    m_mem.assign(m_T, 0.0);
    m_incoming.resize(m_T);
    m_coarse = o.representation != "fine";  // auto maps coarse first (bsp_mapper::map)
    m_merge_streams = m_coarse && o.coarse_packet.bytes() > 0;
    m_share_of.assign(m_T, -1);
    m_tile_compute.assign(m_T, ~0u);
    m_last_sent.resize(m_T);
    m_partials = o.partials == "fp16" ? dtype::fp16 : dtype::fp32;
    m_spill = o.activations == "streaming" && m_has_stream;
    m_forward_left.assign(nt, 0);
    for (const op_node& op : g.ops())
        if (op.phase == op_phase::forward)
            for (int t : op.inputs) ++m_forward_left[static_cast<size_t>(m_liveness.root(t))];
    if (m_streaming && !m_has_stream)
        throw input_error("platform '" + plat.title() +
                          "' has no streaming memory to hold them (a multi-chip system, a "
                          "platform with streaming memory such as gc200, or a lower precision may fit)");
}

/// The graph's topological order with every optimizer step moved up to just after its last input is produced:
/// a weight is updated as soon as its gradient is complete, so that gradients do not all stay live until the end
/// of the backward pass (nothing reads an update's outputs, so the order stays valid).
static std::vector<int> update_early(const workload_graph& g) {
    const std::vector<int> topo = g.topological_order();
    std::vector<int> order;
    std::vector<std::vector<int>> after(g.ops().size());  // updates to place right after op k
    std::vector<bool> moved(g.ops().size(), false);
    std::vector<size_t> position(g.ops().size(), 0);
    for (size_t i = 0; i < topo.size(); ++i) position[static_cast<size_t>(topo[i])] = i;
    for (int o : topo) {
        const op_node& op = g.op(o);
        if (op.kind != op_kind::optimizer) continue;
        int last = -1;  // the producer of its inputs that comes last in the order
        for (int t : op.inputs) {
            const int p = g.tensor(t).producer;
            if (p >= 0 && (last < 0 || position[static_cast<size_t>(p)] > position[static_cast<size_t>(last)]))
                last = p;
        }
        if (last < 0) continue;
        after[static_cast<size_t>(last)].push_back(o);
        moved[static_cast<size_t>(o)] = true;
    }
    for (int o : topo) {
        if (moved[static_cast<size_t>(o)]) continue;
        order.push_back(o);
        for (int u : after[static_cast<size_t>(o)]) order.push_back(u);
    }
    return order;
}

mapping planner::run() {
    place_sources();
    spill(m_saved_inputs, "inputs");
    for (int o : update_early(m_g)) {
        const op_node& op = m_g.op(o);
        if (is_view(op))
            alias(o);
        else if (op.cost.m > 0 && op.cost.n > 0 && op.cost.k > 0 && op.inputs.size() >= 2)
            map_gemm(o);
        else if ((op.kind == op_kind::embedding || op.kind == op_kind::gather) && !op.inputs.empty() &&
                 persistent(op.inputs[0]))
            map_gather(o);
        else if (op.kind == op_kind::reduce && !op.inputs.empty() && !tinfo(op.inputs[0]).shape.empty())
            map_reduce(o);
        else if (op.kind == op_kind::optimizer && op.inputs.size() >= 3 && op.outputs.size() + 1 == op.own_inputs())
            map_update(o);
        else
            map_rows(o);
        release(o);
        write_out(o);
        spill_saved(o);
    }
    finish();
    m_out.details["fine_form_cost"] = m_fine_steps;
    if (m_spill) {
        m_out.details["spilled_activations"] = static_cast<double>(m_spilled);
        m_out.details["spilled_activation_bytes"] = m_spilled_bytes;
    }
    if (m_coarse && m_opt.coarse_packet.bytes() > 0) {
        m_out.prog.packet_bytes = m_opt.coarse_packet.bytes();
        m_out.notes.push_back("coarse form: packets of at least " +
                              format_bytes(static_cast<double>(m_opt.coarse_packet.bytes())) +
                              " (mapper.coarse_packet)");
    }
    return std::move(m_out);
}

void planner::find_parts() {
    // The tiles: one component whose units are tiles that compute on their own memory.
    const platform::group& tg =
        toolkit::find_part(m_plat, m_opt.tiles,
                           {"bsp mapper", "tiles", "a tile array (compute units with their own memory)",
                            toolkit::computes_with_own_memory});
    m_tiles = &toolkit::first(m_plat, tg);
    m_tm = m_tiles->unit_model();
    m_T = m_tiles->unit_count();
    const attach_point ap = m_plat.attachment(m_tiles->id(), 0);
    if (!ap.valid())
        throw input_error("bsp mapper: the tiles of '" + m_plat.title() + "' are not connected to an exchange");
    m_xch = &m_plat.net(ap.net);
    m_tile_bps = m_xch->port_bytes_per_second(ap.port);
    m_latency_s = ticks_to_seconds(m_xch->transfer_latency_ticks());

    const platform::group& sg = toolkit::find_part(
        m_plat, m_opt.sync, {"bsp mapper", "sync", "a barrier for the global sync", toolkit::is_barrier});
    const component& sync = toolkit::first(m_plat, sg);
    m_sync = endpoint{sync.id(), 0, 0};
    m_sync_s = ticks_to_seconds(sync.sync_ticks(m_T));

    m_usable = static_cast<double>(m_tiles->capacity_bytes()) * (1.0 - m_opt.code_reserve);
    find_streaming();
}

void planner::find_streaming() {
    if (m_opt.streaming_memory == "none") return;
    const platform::group* mg = toolkit::find_optional_part(
        m_plat, m_opt.streaming_memory,
        {"bsp mapper", "streaming_memory", "a memory that does not compute", toolkit::is_pure_memory});
    if (!mg) return;
    const component& mem = toolkit::first(m_plat, *mg);
    const attach_point ap = m_plat.attachment(mem.id(), 0);
    if (!ap.valid()) throw input_error("bsp mapper: streaming memory '" + mg->name + "' is not connected to anything");
    // Aggregate rate into the tiles: the memory's peak, then every network on the way at the port the route
    // enters it by (the exchange's external port).
    double bps = mem.peak_bytes_per_second() > 0 ? mem.peak_bytes_per_second() : 1e300;
    for (const auto& seg : m_plat.route(ap, m_plat.attachment(m_tiles->id(), 0)))
        bps = std::min(bps, m_plat.net(seg.net).port_bytes_per_second(seg.in));
    m_has_stream = true;
    m_stream_name = mg->name;
    m_stream_bps = bps;
    m_stream =
        toolkit::address_allocator({mem.capacity_bytes() * std::max<std::uint64_t>(1, mem.unit_count()), 4096, 0, 0});
    m_mem_ep = endpoint{mem.id(), mem.unit_count() > 1 ? -1 : 0, 0};
}

planner::plan planner::evaluate(const gemm_shape& s, int pb, int pm, int pn, int pk, int serial) const {
    plan p;
    p.pb = pb, p.pm = pm, p.pn = pn, p.pk = pk, p.serial = serial;
    const double bb = std::ceil(static_cast<double>(s.batch) / pb), bm = std::ceil(static_cast<double>(s.M) / pm);
    const double bn = std::ceil(std::ceil(static_cast<double>(s.N) / serial) / pn),
                 bk = std::ceil(static_cast<double>(s.K) / pk);
    work w;
    w.type = s.type;
    w.batch = static_cast<std::int64_t>(bb);
    w.m = static_cast<std::int64_t>(bm);
    w.n = static_cast<std::int64_t>(bn);
    w.k = static_cast<std::int64_t>(bk);
    w.macs = bb * bm * bn * bk;
    w.bytes_in = bb * bm * bk * s.eb;
    w.bytes_weight = bb * bk * bn * s.eb;
    w.bytes_out = bb * bm * bn * (pk > 1 ? s.pb_bytes : s.ob);
    const double hz = m_tm->clock().hz;
    p.compute_s = serial * m_tm->cycles(w) / hz;
    const double a_blk = w.bytes_in, b_blk = w.bytes_weight;
    double recv_b = b_blk;
    double stream_s = 0;
    if (s.b_persistent) {
        recv_b = b_blk * (pm - 1) / pm;
        if (s.b_streamed) stream_s = b_blk * pn * pk * serial / m_stream_bps;
    }
    p.exchange_s = (a_blk + serial * recv_b) / m_tile_bps + serial * m_latency_s + stream_s;
    const double c_blk = bb * bm * bn * s.pb_bytes;
    if (pk > 1) {
        const double recv = c_blk * (pk - 1) / pk;
        work r;
        r.type = s.type;
        r.vector_ops = bb * bm * bn * (pk - 1) / pk;
        r.bytes_in = c_blk;
        r.bytes_out = bb * bm * bn * s.ob / pk;
        p.reduce_s = serial * (recv / m_tile_bps + m_latency_s + m_sync_s + m_tm->cycles(r) / hz);
    }
    p.cost = p.compute_s + p.exchange_s + p.reduce_s + serial * m_sync_s;
    // Working set per tile: the A block (kept over serial slices), one slice's B block and result.
    p.mem = a_blk + b_blk + (pk > 1 ? c_blk + c_blk * (pk - 1) / pk + bb * bm * bn * s.ob / pk : bb * bm * bn * s.ob);
    p.valid = true;
    return p;
}

planner::plan planner::choose(const op_node& op, const gemm_shape& s, double have) {
    plan best;
    const double room = m_usable - have;
    // Cheaper wins; within a part in 10^9, fewer tiles.
    const std::function<bool(const plan&, const plan&)> better = [](const plan& a, const plan& b) {
        return a.cost < b.cost * (1 - 1e-9) ||
               (a.cost <= b.cost * (1 + 1e-9) && a.pb * a.pm * a.pn * a.pk < b.pb * b.pm * b.pn * b.pk);
    };
    auto consider = [&](const plan& p) {
        if (p.valid && p.mem <= room && (!best.valid || better(p, best))) best = p;
    };
    const int n_tiles = static_cast<int>(m_T);
    if (!m_opt.matmul_split.empty()) {
        int pm = 0, pn = 0, pk = 0;
        char x1 = 0, x2 = 0;
        std::istringstream is(m_opt.matmul_split);
        if (!(is >> pm >> x1 >> pn >> x2 >> pk) || x1 != 'x' || x2 != 'x' || pm < 1 || pn < 1 || pk < 1)
            throw input_error("mapper.matmul_split '" + m_opt.matmul_split + "': expected PMxPNxPK, e.g. 2x2x1");
        if (pm * pn * pk > n_tiles || pm > s.M || pn > s.N || pk > s.K)
            throw input_error("mapper.matmul_split " + m_opt.matmul_split + " does not fit op '" + op.name + "' (" +
                              std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) + " on " +
                              std::to_string(n_tiles) + " tiles)");
        for (int serial = 1; serial <= s.N && !best.valid; serial *= 2) consider(evaluate(s, 1, pm, pn, pk, serial));
        if (!best.valid) no_fit(op, evaluate(s, 1, pm, pn, pk, 1).mem, have);
        return best;
    }
    // Batch x M x N x K over the tiles, factors from toolkit::smooth_factors. A band of several batch items
    // keeps M and K whole; a batched B operand (attention's keys) cannot split the dimension its items are
    // laid out along.
    const double macs =
        static_cast<double>(s.batch) * static_cast<double>(s.M) * static_cast<double>(s.N) * static_cast<double>(s.K);
    const double peak = m_tm->peak_macs_per_cycle(s.type) * m_tm->clock().hz;
    auto whole_items = [&](const toolkit::matmul_split& x) { return x.batch >= s.batch; };
    toolkit::split_space space;
    space.batch = toolkit::fixed(toolkit::smooth_factors(s.batch, n_tiles));
    space.m = [&](const toolkit::matmul_split& x) {
        return whole_items(x) ? toolkit::smooth_factors(s.M, n_tiles / x.batch) : std::vector<int>{1};
    };
    space.k = [&](const toolkit::matmul_split& x) {
        if (!whole_items(x) && s.b_batched && s.tb && x.n > 1) return std::vector<int>{};
        return s.attention ? std::vector<int>{1} : toolkit::smooth_factors(s.K, n_tiles / (x.batch * x.m * x.n));
    };
    for (int serial = 1; !best.valid; serial *= 2) {
        const std::int64_t n_slice = (s.N + serial - 1) / serial;
        space.n = [&](const toolkit::matmul_split& x) {
            return toolkit::smooth_factors(n_slice, n_tiles / (x.batch * x.m));
        };
        const std::function<std::optional<plan>(const toolkit::matmul_split&, const plan*)> cost =
            [&](const toolkit::matmul_split& x, const plan* b) -> std::optional<plan> {
            if (!whole_items(x) && s.b_batched && !s.tb && x.k > 1) return std::nullopt;
            // No split beats its tiles' arithmetic at peak: skip those that cannot win.
            const double floor_s = macs / (static_cast<double>(x.batch * x.m * x.n * x.k) * peak) + serial * m_sync_s;
            if (b && floor_s >= b->cost) return std::nullopt;
            const plan p = evaluate(s, x.batch, x.m, x.n, x.k, serial);
            if (p.mem > room) return std::nullopt;
            return p;
        };
        if (const auto p = toolkit::best_split<plan>(space, cost, better)) best = *p;
        if (serial >= s.N) break;
    }
    if (!best.valid) no_fit(op, evaluate(s, 1, 1, 1, 1, static_cast<int>(s.N)).mem, have);
    return best;
}

}  // namespace tessel::bsp

namespace tessel {

namespace {

/// Weight and state tensors in the order the fallback moves them to streaming memory: first those a run reads
/// least of per byte they hold (an embedding table, of which a run gathers a few rows), then the largest.
std::vector<int> streaming_order(const workload_graph& g) {
    struct cand {
        double read_share, bytes;
        int t;
    };
    std::vector<cand> c;
    for (size_t i = 0; i < g.tensors().size(); ++i) {
        const tensor_info& ti = g.tensors()[i];
        if (!bsp::is_held(ti)) continue;
        const double bytes = static_cast<double>(ti.bytes());
        double read = 0;
        for (int o : ti.consumers) {
            const op_node& op = g.op(o);
            read += (op.kind == op_kind::gather || op.kind == op_kind::embedding) && op.cost.bytes_weight > 0
                        ? std::min(op.cost.bytes_weight, bytes)
                        : bytes;
        }
        c.push_back({bytes > 0 ? read / bytes : 1.0, bytes, static_cast<int>(i)});
    }
    std::stable_sort(c.begin(), c.end(), [](const cand& a, const cand& b) {
        if (a.read_share != b.read_share) return a.read_share < b.read_share;
        if (a.bytes != b.bytes) return a.bytes > b.bytes;
        return a.t < b.t;
    });
    std::vector<int> out;
    out.reserve(c.size());
    for (const auto& x : c) out.push_back(x.t);
    return out;
}

}  // namespace

std::unique_ptr<mapper> bsp_mapper::coarser() const {
    if (m_opt.representation != "auto") return nullptr;
    auto c = std::make_unique<bsp_mapper>(*this);
    c->m_opt.representation = "coarse";
    // A run this large streams gigabytes through the gateway: packets of 64 KiB (2 us at its 31.5 GB/s) instead of
    // its 4 KiB ones, checked against the fine form in tests/ipu/coarse_slow_test.cpp (256 KiB ones cost 3% more
    // there).
    c->m_opt.coarse_packet.q.value = std::max(c->m_opt.coarse_packet.q.value, 64.0 * 1024);
    return c;
}

mapping bsp_mapper::map(const workload_graph& g, const platform& plat) const {
    if (m_opt.representation != "auto") return map_as(g, plat, m_opt);
    // Auto: the coarse form first (cheap), then the fine one when it stays small enough to simulate message by message.
    mapping m = map_as(g, plat, m_opt);
    const double fine_steps = m.details.value("fine_form_cost", 0.0);
    if (fine_steps <= m_opt.coarse_above) {
        options fine = m_opt;
        fine.representation = "fine";
        return map_as(g, plat, fine);
    }
    m.notes.insert(m.notes.begin(), "coarse form: one step per superstep (the fine form would have " +
                                        format_number(fine_steps, 4) +
                                        " steps, above mapper.coarse_above; mapper.representation=fine forces it)");
    return m;
}

mapping bsp_mapper::map_as(const workload_graph& g, const platform& plat, const options& opt) const {
    if (opt.code_reserve < 0 || opt.code_reserve >= 1)
        throw input_error("mapper.code_reserve must be at least 0 and below 1");
    if (opt.activations == "tiles") return map_placed(g, plat, opt);
    options spill = opt;
    spill.activations = "streaming";
    std::string tiles_miss;
    if (opt.activations == "auto") {
        options tiles = opt;
        tiles.activations = "tiles";
        try {
            return map_placed(g, plat, tiles);
        } catch (const input_error& e) {
            // Only a run the tiles cannot hold tries streaming memory, and only where there is some.
            std::vector<superstep> unused;
            if (e.message().rfind("workload does not fit", 0) != 0 ||
                !bsp::planner(g, plat, opt, {}, unused).has_streaming_memory())
                throw;
            tiles_miss = e.message();
        }
    }
    mapping m;
    try {
        m = map_placed(g, plat, spill);
    } catch (const input_error& e) {
        if (tiles_miss.empty()) throw;
        const std::string prefix = "workload does not fit: ";
        const std::string& why = e.message();
        throw input_error(tiles_miss + "; with its activations in streaming memory too: " +
                          (why.rfind(prefix, 0) == 0 ? why.substr(prefix.size()) : why));
    }
    const double spilled = m.details.value("spilled_activation_bytes", 0.0);
    m.notes.insert(m.notes.begin(),
                   "activations in streaming memory: " + format_number(m.details.value("spilled_activations", 0.0), 6) +
                       " tensors, " + format_bytes(spilled) +
                       ", written there after their last forward reader and read back by the backward pass" +
                       (tiles_miss.empty() ? std::string(" (mapper.activations=streaming)")
                                           : " (on the tiles: " + tiles_miss.substr(tiles_miss.find(": ") + 2) + ")"));
    return m;
}

mapping bsp_mapper::map_placed(const workload_graph& g, const platform& plat, const options& opt) const {
    using namespace bsp;  // the planner's types (a using-directive here, not at file scope: unity builds)
    const std::vector<int> order = streaming_order(g);
    auto streamed = [&](size_t k) {  // the first k of `order` in streaming memory
        std::vector<bool> s(g.tensors().size(), false);
        for (size_t i = 0; i < k && i < order.size(); ++i) s[static_cast<size_t>(order[i])] = true;
        return s;
    };
    auto planned = std::make_shared<bsp_record>();
    std::vector<superstep>& steps = planned->steps;
    auto recorded = [&](mapping m) {
        m.record = planned;
        return m;
    };
    if (opt.weights == "streaming") {
        planner p(g, plat, opt, streamed(order.size()), steps);
        return recorded(p.run());
    }
    if (opt.weights == "auto" && m_maps_pieces) {
        // A piece of a chip program (a system's stage cut at its collectives): its weights stay on the tiles only
        // if the whole program's weights and state do, else they come from streaming memory as the program's would.
        planner probe(g, plat, opt, {}, steps);
        if (m_piece_chip_bytes > probe.usable_total()) {
            steps.clear();
            try {
                planner p(g, plat, opt, streamed(order.size()), steps);
                mapping m = recorded(p.run());
                m.notes.insert(m.notes.begin(), "streamed: the chip's " + format_bytes(m_piece_chip_bytes) +
                                                    " of weights and state exceed its tiles' " +
                                                    format_bytes(probe.usable_total()));
                return m;
            } catch (const does_not_fit& e) {
                throw input_error("workload does not fit: " + e.message);
            }
        }
    }
    std::string first_miss;
    try {
        planner p(g, plat, opt, {}, steps);
        return recorded(p.run());
    } catch (const does_not_fit& e) {
        if (opt.weights == "resident") throw input_error("workload does not fit: " + e.message);
        first_miss = e.message;
    }
    // Fall back to streaming memory, tensor by tensor in streaming_order(): at least as many bytes as the
    // weights overflow the tiles by, then twice as many tensors each time until the mapping fits.
    double held = 0, total = 0;
    for (int t : order) total += static_cast<double>(g.tensor(t).bytes());
    size_t k = 0;
    {
        planner probe(g, plat, opt, {}, steps);  // only for the tiles' capacity
        const double room = probe.usable_total();
        while (k < order.size() && total - held > room) held += static_cast<double>(g.tensor(order[k++]).bytes());
    }
    k = std::max<size_t>(k, 1);
    for (;;) {
        steps.clear();
        try {
            planner p(g, plat, opt, streamed(k), steps);
            mapping m = recorded(p.run());
            m.notes.insert(m.notes.begin(), "fallback: resident weights do not fit (" + first_miss + ")");
            return m;
        } catch (const does_not_fit& e) {
            if (k >= order.size()) throw input_error("workload does not fit: " + e.message);
            k = std::min(order.size(), 2 * k);
        } catch (const input_error& e) {
            throw input_error("workload does not fit: " + first_miss + "; " + e.message());
        }
    }
}

}  // namespace tessel
