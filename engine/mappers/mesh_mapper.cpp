#include "engine/mappers/mesh_mapper.h"

#include "models/core/limits.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "engine/mappers/toolkit/allocator.h"
#include "engine/mappers/toolkit/liveness.h"
#include "engine/mappers/toolkit/matmul_split.h"
#include "engine/mappers/toolkit/parts.h"
#include "engine/workload/op_types.h"
#include "models/core/compute_model.h"
#include "models/core/rect.h"
#include "models/interconnect/interconnect.h"

namespace tessel {

void mesh_mapper::options::declare(param_decl& d) {
    d(tiles, "tiles", "",
      "the group of compute tiles to use (default: every group that computes on its own memory, such as tile or "
      "tile_array; each op runs on the group that finishes it first at peak rate)");
    d(memory, "memory", "",
      "the off-chip memory holding weights and spilled tensors (default: the first memory "
      "group that does not compute)");
    d(resident_fraction, "resident_fraction", "0.5",
      "share of each scratchpad that may keep op outputs on chip for the next op (the rest holds working buffers)");
    d(double_buffer, "double_buffer", "true", "load the next K chunk while computing the current one");
}

namespace {

struct piece {
    int tile;
    region area;
    std::vector<std::uint32_t> ready;  // steps after which the piece is complete
};

struct tensor_placement {
    bool resident = false;  // pieces in tile scratchpads, else in memory at `address`
    std::uint64_t address = 0;
    std::vector<piece> pieces;             // resident pieces, or the pieces being stored
    std::vector<std::uint32_t> mem_ready;  // stores that must finish before memory holds the tensor
    bool allocated = false;
};

class mesh_planner {
public:
    mesh_planner(const workload_graph& g, const platform& plat, const mesh_mapper::options& o)
        : m_g(g), m_plat(plat), m_opt(o), m_live(g) {
        find_tiles();
        find_memory();
        m_place.resize(g.tensors().size());
        m_resident.assign(m_tiles.size(), 0.0);
        m_last.assign(m_tiles.size(), {});
        m_out.prog.name = g.name;
        m_freed.assign(g.tensors().size(), false);
    }

    mapping run() {
        const auto order = m_g.topological_order();
        nlohmann::json ops = nlohmann::json::array();
        for (int o : order) {
            const op_node& op = m_g.op(o);
            nlohmann::json d;
            if (is_view(op))
                alias(o);
            else if (choose_group(op); op.cost.m > 0 && op.cost.n > 0 && op.cost.k > 0)
                d = map_gemm(o);
            else
                d = map_even(o);
            if (!d.is_null() && m_groups.size() > 1) d["tile_group"] = m_on->name;
            if (!d.is_null()) ops.push_back(d);
            release_inputs(o);
        }
        store_outputs();
        m_out.details["mapper"] = "mesh";
        m_out.details["tiles"] = m_tiles.size();
        if (m_groups.size() > 1) {
            std::string names;
            for (const tile_group& tg : m_groups)
                names.append(names.empty() ? "" : ", ")
                    .append(tg.name)
                    .append(" (")
                    .append(std::to_string(tg.tiles.size()))
                    .append(")");
            m_out.notes.insert(
                m_out.notes.begin(),
                "tile groups " + names + ": each op runs on the group that finishes it first at peak rate");
        }
        m_out.details["ops"] = ops;
        m_out.samples = toolkit::batch_samples(m_g);
        return std::move(m_out);
    }

private:
    const workload_graph& m_g;
    const platform& m_plat;
    const mesh_mapper::options& m_opt;
    std::vector<endpoint> m_tiles;  // every tile of every group used
    /// A group of identical tiles: indices into m_tiles, their compute model and scratchpad size.
    struct tile_group {
        std::string name;
        std::vector<int> tiles;
        const compute_model* pe = nullptr;
        std::uint64_t capacity = 0;
    };
    std::vector<tile_group> m_groups;
    std::vector<std::uint64_t> m_capacity;  // by tile: its scratchpad
    const tile_group* m_on = nullptr;       // the group the current op runs on
    endpoint m_mem;
    double m_mem_bw = 0;
    toolkit::address_allocator m_alloc;  // addresses in the off-chip memory
    std::vector<tensor_placement> m_place;
    std::vector<double> m_resident;
    std::vector<std::vector<std::uint32_t>> m_last;
    toolkit::tensor_liveness m_live;  // which storage each tensor is, and its reads left
    std::vector<bool> m_freed;        // by storage root: its on-chip pieces were given back
    mapping m_out;

    void find_tiles() {
        // Every unit of every component of a group is a tile (a group of `tile`s, or one `tile_array`). Unnamed,
        // every group of such tiles is used (matrix tiles beside vector tiles): none is left idle unannounced.
        const toolkit::part_query q{"mesh mapper", "tiles", "compute tiles with their own memory",
                                    toolkit::computes_with_own_memory};
        std::vector<const platform::group*> groups;
        if (!m_opt.tiles.empty())
            groups.push_back(&toolkit::find_part(m_plat, m_opt.tiles, q));
        else
            for (const platform::group& g : m_plat.groups())
                if (q.fits(toolkit::first(m_plat, g))) groups.push_back(&g);
        if (groups.empty()) toolkit::find_part(m_plat, "", q);  // the error naming what is missing
        for (const platform::group* g : groups) {
            const component& first = toolkit::first(m_plat, *g);
            tile_group tg{g->name, {}, first.unit_model(), first.capacity_bytes()};
            for (std::uint32_t id : g->ids)
                for (std::uint32_t u = 0; u < m_plat.comp(id).unit_count(); ++u) {
                    tg.tiles.push_back(static_cast<int>(m_tiles.size()));
                    m_tiles.push_back(endpoint{id, static_cast<std::int32_t>(u), 0});
                    m_capacity.push_back(tg.capacity);
                }
            m_groups.push_back(std::move(tg));
        }
        m_on = &m_groups.front();
    }

    /// The group that runs `op`: the one whose tiles, sharing it evenly, finish it first at peak rate (the first
    /// in file order on a tie, or when none can).
    void choose_group(const op_node& op) {
        const work whole = op.to_work();
        m_on = &m_groups.front();
        double best = std::numeric_limits<double>::infinity();
        for (const tile_group& tg : m_groups) {
            const double t = tg.pe->ideal_seconds(whole) / static_cast<double>(tg.tiles.size());
            if (std::isfinite(t) && t < best * (1 - 1e-12)) {
                best = t;
                m_on = &tg;
            }
        }
    }

    void find_memory() {
        const platform::group& g =
            toolkit::find_part(m_plat, m_opt.memory,
                               {"mesh mapper", "memory", "off-chip memory for weights (a memory that does not compute)",
                                toolkit::is_pure_memory});
        const component& mem = toolkit::first(m_plat, g);
        m_mem = endpoint{mem.id(), mem.unit_count() > 1 ? -1 : 0, 0};
        m_alloc = toolkit::address_allocator({mem.capacity_bytes(), 4096, 0, 0});
        // Bandwidth into the tiles: the memory's peak, capped by the network ports it attaches to.
        double ports_bw = 0;
        for (std::uint32_t u = 0; u < mem.unit_count(); ++u) {
            const attach_point ap = m_plat.attachment(mem.id(), static_cast<std::int32_t>(u));
            if (ap.valid()) ports_bw += m_plat.net(ap.net).link_bytes_per_second();
        }
        if (ports_bw == 0) throw input_error("mesh mapper: memory '" + g.name + "' is not connected to the network");
        m_mem_bw = mem.peak_bytes_per_second() > 0 ? std::min(mem.peak_bytes_per_second(), ports_bw) : ports_bw;
    }

    std::uint32_t op_id(int o) { return m_out.prog.intern_op(m_g.op(o).name); }

    std::uint64_t alloc(std::uint64_t bytes) {
        const std::uint64_t a = m_alloc.alloc(bytes);
        if (m_alloc.overflowed())
            throw input_error("workload '" + m_g.name + "' needs more than the " +
                              format_bytes(static_cast<double>(m_plat.comp(m_mem.comp).capacity_bytes())) +
                              " of off-chip memory on '" + m_plat.title() + "' (weights and spilled activations: " +
                              format_bytes(static_cast<double>(m_alloc.high_water())) + ")");
        return a;
    }

    tensor_placement& in_memory(int t) {
        tensor_placement& p = m_place[static_cast<size_t>(t)];
        if (!p.allocated) {
            p.address = alloc(m_g.tensor(t).bytes());
            p.allocated = true;
        }
        return p;
    }

    /// Steps to wait for until `area` of tensor `t` (or `bytes` of it, when given) is in tile `tile`.
    std::vector<std::uint32_t> fetch(int t, const region& area, int tile, const std::vector<std::uint32_t>& after,
                                     std::uint32_t op, double bytes_override = -1) {
        const tensor_info& ti = m_g.tensor(t);
        std::vector<std::uint32_t> out;
        if (ti.role == tensor_role::constant) return out;
        const double total = static_cast<double>(ti.bytes());
        tensor_placement& p = m_place[static_cast<size_t>(t)];
        if (p.resident) {
            for (const piece& pc : p.pieces) {
                const double share = intersect(pc.area, area).area();
                if (share <= 0) continue;
                if (pc.tile == tile) {
                    out.insert(out.end(), pc.ready.begin(), pc.ready.end());
                    continue;
                }
                const auto bytes = static_cast<std::uint64_t>(std::ceil(share * total));
                if (bytes == 0) continue;
                std::vector<std::uint32_t> deps = after;
                deps.insert(deps.end(), pc.ready.begin(), pc.ready.end());
                out.push_back(m_out.prog.add_transfer(op, m_tiles[static_cast<size_t>(pc.tile)],
                                                      m_tiles[static_cast<size_t>(tile)], bytes, deps));
            }
            return out;
        }
        tensor_placement& mp = in_memory(t);
        const double want = bytes_override >= 0 ? bytes_override : area.area() * total;
        const auto bytes = static_cast<std::uint64_t>(std::ceil(want));
        if (bytes == 0) return out;
        std::vector<std::uint32_t> deps = after;
        deps.insert(deps.end(), mp.mem_ready.begin(), mp.mem_ready.end());
        endpoint src = m_mem;
        src.address = mp.address + static_cast<std::uint64_t>(area.y0 * total);
        out.push_back(m_out.prog.add_transfer(op, src, m_tiles[static_cast<size_t>(tile)], bytes, deps));
        return out;
    }

    /// Records where an op's output lives: kept in the tiles when it fits, else stored to memory.
    void place_output(int t, const std::vector<std::pair<int, region>>& parts,
                      const std::vector<std::vector<std::uint32_t>>& done, std::uint32_t op, nlohmann::json& d) {
        const tensor_info& ti = m_g.tensor(t);
        const double total = static_cast<double>(ti.bytes());
        const bool graph_output = ti.consumers.empty() || ti.role == tensor_role::output;
        bool fits = !graph_output;
        for (const auto& [tile, r] : parts)
            if (m_resident[static_cast<size_t>(tile)] + r.area() * total >
                m_opt.resident_fraction * static_cast<double>(m_capacity[static_cast<size_t>(tile)]))
                fits = false;
        tensor_placement& p = m_place[static_cast<size_t>(t)];
        p.pieces.clear();
        if (fits) {
            p.resident = true;
            for (size_t i = 0; i < parts.size(); ++i) {
                p.pieces.push_back(piece{parts[i].first, parts[i].second, done[i]});
                m_resident[static_cast<size_t>(parts[i].first)] += parts[i].second.area() * total;
            }
            d["output"] = "kept on chip";
            return;
        }
        p.resident = false;
        tensor_placement& mp = in_memory(t);
        for (size_t i = 0; i < parts.size(); ++i) {
            const auto bytes = static_cast<std::uint64_t>(std::ceil(parts[i].second.area() * total));
            if (bytes == 0) continue;
            endpoint dst = m_mem;
            dst.address = mp.address + static_cast<std::uint64_t>(parts[i].second.y0 * total);
            const std::uint32_t s =
                m_out.prog.add_transfer(op, m_tiles[static_cast<size_t>(parts[i].first)], dst, bytes, done[i]);
            mp.mem_ready.push_back(s);
            m_last[static_cast<size_t>(parts[i].first)] = {s};
        }
        d["output"] = graph_output ? "stored (graph output)" : "stored (does not fit on chip)";
    }

    void release_inputs(int o) {
        m_live.read_inputs(m_g.op(o), [&](int r) {
            if (m_freed[static_cast<size_t>(r)] || !m_place[static_cast<size_t>(r)].resident) return;
            m_freed[static_cast<size_t>(r)] = true;
            const double total = static_cast<double>(m_g.tensor(r).bytes());
            for (const piece& pc : m_place[static_cast<size_t>(r)].pieces)
                m_resident[static_cast<size_t>(pc.tile)] -= pc.area.area() * total;
        });
    }

    void alias(int o) {
        // Views move nothing: the outputs are their source's data, where the source is, and their readers keep
        // the source's storage alive.
        const op_node& op = m_g.op(o);
        const int src = view_source(m_g, op);
        if (src < 0) return;
        for (int t : op.outputs) {
            m_place[static_cast<size_t>(t)] = m_place[static_cast<size_t>(src)];
            m_live.share(t, src);
        }
    }

    double macs_per_second(dtype type) const { return m_on->pe->peak_macs_per_cycle(type) * m_on->pe->clock().hz; }

    /// What a matrix product's tiles all share while it is mapped: the op, its shape (the batch folded into M),
    /// its operands, the chosen pm x pn split and the tiles' working budget.
    struct gemm_job {
        const op_node& op;
        std::uint32_t opi;
        double eb;  // bytes per element
        std::int64_t batch, M, N, K;
        int pm, pn;
        double capacity, work_budget;
        int buffers;
        double extra_vector;  // vector work beyond the MACs
        int a_in, b_in;
    };

    /// One tile's blocking of its output block: sm x sn sub-blocks, K in `chunks` chunks of kc.
    struct gemm_blocking {
        int sm, sn;
        std::int64_t kc, chunks;
    };

    nlohmann::json map_gemm(int o) {
        const op_node& op = m_g.op(o);
        const std::uint32_t opi = op_id(o);
        m_on->pe->check(op.to_work(), "tiles '" + m_on->name + "' of '" + m_plat.title() + "'");
        const double eb = dtype_bits(op.compute_type) / 8.0;
        const std::int64_t batch = std::max<std::int64_t>(1, op.cost.batch);
        const std::int64_t M = batch * op.cost.m, N = op.cost.n, K = op.cost.k;
        const auto [pm, pn] = choose_gemm_split(op, batch, M, N, K, eb);
        const double capacity = static_cast<double>(m_on->capacity);
        const gemm_job j{op,
                         opi,
                         eb,
                         batch,
                         M,
                         N,
                         K,
                         pm,
                         pn,
                         capacity,
                         (1.0 - m_opt.resident_fraction) * capacity,
                         m_opt.double_buffer ? 2 : 1,
                         std::max(0.0, op.cost.flops - 2 * op.cost.macs),
                         op.inputs.empty() ? -1 : op.inputs[0],
                         op.inputs.size() > 1 ? op.inputs[1] : -1};
        std::vector<std::pair<int, region>> parts;
        std::vector<std::vector<std::uint32_t>> done;
        int chunks_used = 0, subblocks_used = 0;
        std::int64_t kc_used = 0;
        for (int i = 0; i < pm; ++i)
            for (int jn = 0; jn < pn; ++jn) {
                const int t = m_on->tiles[static_cast<size_t>(i * pn + jn)];
                const std::int64_t r0 = M * i / pm, r1 = M * (i + 1) / pm, n0 = N * jn / pn, n1 = N * (jn + 1) / pn;
                const gemm_blocking bl = block_gemm_tile(j, r1 - r0, n1 - n0);
                chunks_used = static_cast<int>(bl.chunks);
                subblocks_used = bl.sm * bl.sn;
                kc_used = bl.kc;
                const std::uint32_t last = emit_gemm_tile(j, t, bl, r0, r1, n0, n1);
                m_last[static_cast<size_t>(t)] = {last};
                parts.emplace_back(t, rows_cols(static_cast<double>(r0) / M, static_cast<double>(r1) / M,
                                                static_cast<double>(n0) / N, static_cast<double>(n1) / N));
                done.push_back({last});
            }
        nlohmann::json d;
        d["op"] = op.name;
        d["kind"] = op_kind_name(op.kind);
        d["tiles"] = pm * pn;
        d["split"] = std::to_string(pm) + "x" + std::to_string(pn);
        d["k_chunk"] = kc_used;
        d["k_chunks"] = chunks_used;
        d["sub_blocks"] = subblocks_used;
        for (int t : op.outputs) place_output(t, parts, done, opi, d);
        m_out.notes.push_back(
            op.name + ": " + op_kind_name(op.kind) + " " + std::to_string(M) + "x" + std::to_string(N) + "x" +
            std::to_string(K) + " on " + std::to_string(pm) + "x" + std::to_string(pn) + " tiles" +
            (m_groups.size() > 1 ? " of '" + m_on->name + "'" : "") + ", K in " + std::to_string(chunks_used) +
            " chunk(s) of " + std::to_string(kc_used) +
            (subblocks_used > 1 ? ", " + std::to_string(subblocks_used) + " sub-blocks per tile" : "") + ", output " +
            d["output"].get<std::string>());
        return d;
    }

    /// Chooses pm x pn tiles for the output: every pm, with the tiles left over for pn (batched products split
    /// rows only: each batch has its own B; the batch is folded into M), minimising the larger of one tile's
    /// compute and the off-chip traffic's time; ties (within 10^-12) to less traffic.
    std::pair<int, int> choose_gemm_split(const op_node& op, std::int64_t batch, std::int64_t M, std::int64_t N,
                                          std::int64_t K, double eb) const {
        const int T = static_cast<int>(m_on->tiles.size());
        struct choice {
            toolkit::matmul_split split;
            double score, traffic;
        };
        const double rate = macs_per_second(op.compute_type);
        toolkit::split_space space;
        space.batch = space.k = toolkit::fixed({1});
        space.m = [&](const toolkit::matmul_split&) {
            std::vector<int> v(static_cast<size_t>(T));
            std::iota(v.begin(), v.end(), 1);
            return v;
        };
        space.n = [&](const toolkit::matmul_split& x) {
            const int pn = batch > 1 ? 1 : T / x.m;
            return x.m > M || pn < 1 || pn > N ? std::vector<int>{} : std::vector<int>{pn};
        };
        const std::function<std::optional<choice>(const toolkit::matmul_split&, const choice*)> cost =
            [&](const toolkit::matmul_split& x, const choice*) -> std::optional<choice> {
            const double per_tile = std::ceil(static_cast<double>(M) / x.m) * std::ceil(static_cast<double>(N) / x.n) *
                                    static_cast<double>(K) / rate;
            const double traffic =
                (static_cast<double>(M) * K * x.n + static_cast<double>(K) * N * (batch > 1 ? 1 : x.m)) * eb;
            return choice{x, std::max(per_tile, traffic / m_mem_bw), traffic};
        };
        const std::function<bool(const choice&, const choice&)> better = [](const choice& a, const choice& b) {
            return a.score < b.score * (1 - 1e-12) ||
                   (std::fabs(a.score - b.score) <= b.score * 1e-12 && a.traffic < b.traffic);
        };
        const std::optional<choice> best = toolkit::best_split<choice>(space, cost, better);
        return {best ? best->split.m : 1, best ? best->split.n : 1};
    }

    /// Blocks one tile's mb x nb output block: sub-blocks so that the fp32 accumulators take at most half of the
    /// working budget, then K chunks as large as the rest of the budget holds (twice, double buffered).
    gemm_blocking block_gemm_tile(const gemm_job& j, std::int64_t mb, std::int64_t nb) const {
        // Sub-blocks so that the fp32 accumulators take at most half of the working budget.
        int sm = 1, sn = 1;
        while (static_cast<double>((mb + sm - 1) / sm) * static_cast<double>((nb + sn - 1) / sn) * 4 >
               j.work_budget / 2) {
            if (sm >= mb && sn >= nb)
                fail("mesh mapper: op '" + j.op.name +
                     "' cannot fit even one fp32 accumulator in a tile's working SRAM (" + format_bytes(j.work_budget) +
                     " of " + format_bytes(j.capacity) + " with mapper.resident_fraction " +
                     format_number(m_opt.resident_fraction) + "); give the tiles more SRAM (tile.sram.capacity)");
            if ((mb + sm - 1) / sm >= (nb + sn - 1) / sn)
                sm *= 2;
            else
                sn *= 2;
        }
        const std::int64_t smb = (mb + sm - 1) / sm, snb = (nb + sn - 1) / sn;
        const double avail = j.work_budget - static_cast<double>(smb * snb) * 4;
        std::int64_t kc = static_cast<std::int64_t>(avail / (j.buffers * static_cast<double>(smb + snb) * j.eb));
        kc = std::clamp<std::int64_t>(kc, 1, j.K);
        const std::int64_t chunks = (j.K + kc - 1) / kc;
        const double planned = static_cast<double>(j.pm) * j.pn * sm * sn * static_cast<double>(chunks) * 3;
        if (planned > limits().steps)
            fail("mesh mapper: op '" + j.op.name + "' in " + format_number(static_cast<double>(sm) * sn) +
                 " sub-blocks x " + std::to_string(chunks) + " K chunks on " + std::to_string(j.pm * j.pn) + " tiles " +
                 over_limit("steps", planned, "steps") + "; a tile's SRAM of " + format_bytes(j.capacity) +
                 " is far too small for this op (tile.sram.capacity)");
        return gemm_blocking{sm, sn, kc, chunks};
    }

    /// Emits tile t's output block, rows [r0, r1) and columns [n0, n1), sub-block by sub-block and K chunk by K
    /// chunk; returns its last compute.
    std::uint32_t emit_gemm_tile(const gemm_job& j, int t, const gemm_blocking& bl, std::int64_t r0, std::int64_t r1,
                                 std::int64_t n0, std::int64_t n1) {
        const std::int64_t mb = r1 - r0, nb = n1 - n0;
        const int sm = bl.sm, sn = bl.sn;
        std::vector<std::uint32_t> computes;
        const std::vector<std::uint32_t> base = m_last[static_cast<size_t>(t)];
        std::uint32_t last = ~0u;
        for (int bi = 0; bi < sm; ++bi)
            for (int bj = 0; bj < sn; ++bj) {
                const std::int64_t sr0 = r0 + mb * bi / sm, sr1 = r0 + mb * (bi + 1) / sm;
                const std::int64_t sn0 = n0 + nb * bj / sn, sn1 = n0 + nb * (bj + 1) / sn;
                if (sr1 <= sr0 || sn1 <= sn0) continue;
                for (std::int64_t c = 0; c < bl.chunks; ++c) {
                    const size_t idx = computes.size();
                    const std::vector<std::uint32_t> wait =
                        idx >= static_cast<size_t>(j.buffers)
                            ? std::vector<std::uint32_t>{computes[idx - static_cast<size_t>(j.buffers)]}
                            : base;
                    last = emit_gemm_chunk(j, t, bl, sr0, sr1, sn0, sn1, c, wait, base, last);
                    computes.push_back(last);
                }
            }
        return last;
    }

    /// Emits K chunk c of the sub-block rows [sr0, sr1), columns [sn0, sn1) on tile t: fetches its operands once
    /// `wait` is done, then computes after them and after the tile's previous compute `last` (~0u: none).
    std::uint32_t emit_gemm_chunk(const gemm_job& j, int t, const gemm_blocking& bl, std::int64_t sr0, std::int64_t sr1,
                                  std::int64_t sn0, std::int64_t sn1, std::int64_t c,
                                  const std::vector<std::uint32_t>& wait, const std::vector<std::uint32_t>& base,
                                  std::uint32_t last) {
        const op_node& op = j.op;
        const std::int64_t M = j.M, N = j.N, K = j.K;
        const std::int64_t k0 = K * c / bl.chunks, k1 = K * (c + 1) / bl.chunks;
        const region ra = rows_cols(static_cast<double>(sr0) / M, static_cast<double>(sr1) / M,
                                    static_cast<double>(k0) / K, static_cast<double>(k1) / K);
        region rb = rows_cols(static_cast<double>(k0) / K, static_cast<double>(k1) / K, static_cast<double>(sn0) / N,
                              static_cast<double>(sn1) / N);
        if (j.batch > 1)  // this tile's batches, this K slice of each
            rb = rows_cols(ra.y0 + (ra.y1 - ra.y0) * static_cast<double>(k0) / K,
                           ra.y0 + (ra.y1 - ra.y0) * static_cast<double>(k1) / K, 0, 1);
        std::vector<std::uint32_t> deps;
        if (j.a_in >= 0) {
            auto f = fetch(j.a_in, ra, t, wait, j.opi);
            deps.insert(deps.end(), f.begin(), f.end());
        }
        if (j.b_in >= 0) {
            auto f = fetch(j.b_in, rb, t, wait, j.opi);
            deps.insert(deps.end(), f.begin(), f.end());
        }
        if (c == 0)  // bias and other inputs: this tile's columns
            for (size_t x = 2; x < op.inputs.size(); ++x) {
                auto f =
                    fetch(op.inputs[x], rows_cols(0, 1, static_cast<double>(sn0) / N, static_cast<double>(sn1) / N), t,
                          wait, j.opi);
                deps.insert(deps.end(), f.begin(), f.end());
            }
        if (last != ~0u) deps.push_back(last);
        if (deps.empty()) deps = base;
        work w;
        w.type = op.compute_type;
        w.cls = op.cost.cls;
        w.m = sr1 - sr0;
        w.n = sn1 - sn0;
        w.k = k1 - k0;
        w.batch = 1;
        w.macs = static_cast<double>(w.m) * static_cast<double>(w.n) * static_cast<double>(w.k);
        w.bytes_in = static_cast<double>(w.m * w.k) * j.eb;
        w.bytes_weight = static_cast<double>(w.k * w.n) * j.eb;
        if (c == bl.chunks - 1) {
            w.bytes_out = static_cast<double>(w.m * w.n) * j.eb;
            w.vector_ops = j.extra_vector * static_cast<double>(w.m * w.n) / (static_cast<double>(M) * N);
        }
        return m_out.prog.add_compute(j.opi, m_tiles[static_cast<size_t>(t)], m_out.prog.add_work(w), deps);
    }

    nlohmann::json map_even(int o) {
        const op_node& op = m_g.op(o);
        const std::uint32_t opi = op_id(o);
        const work whole = op.to_work();
        if (whole.macs > 0) m_on->pe->check(whole, "tiles '" + m_on->name + "' of '" + m_plat.title() + "'");
        const int T = static_cast<int>(m_on->tiles.size());
        std::vector<std::pair<int, region>> parts;
        std::vector<std::vector<std::uint32_t>> done;
        for (int k = 0; k < T; ++k) {
            const int t = m_on->tiles[static_cast<size_t>(k)];
            const region share = rows_cols(static_cast<double>(k) / T, static_cast<double>(k + 1) / T, 0, 1);
            std::vector<std::uint32_t> deps;
            const std::vector<std::uint32_t> base = m_last[static_cast<size_t>(t)];
            for (int in : op.inputs) {
                const tensor_info& ti = m_g.tensor(in);
                std::vector<std::uint32_t> f;
                if (ti.role == tensor_role::weight || ti.role == tensor_role::state) {
                    // Parameters: this tile's share of what the op reads (a gather reads a few rows of a table).
                    const double share_bytes =
                        op.cost.bytes_weight > 0 ? op.cost.bytes_weight / T : static_cast<double>(ti.bytes());
                    f = fetch(in, share, t, base, opi, std::min(share_bytes, static_cast<double>(ti.bytes())));
                } else {
                    f = fetch(in, share, t, base, opi);
                }
                deps.insert(deps.end(), f.begin(), f.end());
            }
            if (deps.empty()) deps = base;
            work w = whole;
            w.macs /= T;
            w.vector_ops /= T;
            w.bytes_in /= T;
            w.bytes_weight /= T;
            w.bytes_out /= T;
            w.m = w.n = w.k = w.batch = 0;
            const std::uint32_t s =
                m_out.prog.add_compute(opi, m_tiles[static_cast<size_t>(t)], m_out.prog.add_work(w), deps);
            m_last[static_cast<size_t>(t)] = {s};
            parts.emplace_back(t, share);
            done.push_back({s});
        }
        nlohmann::json d;
        d["op"] = op.name;
        d["kind"] = op_kind_name(op.kind);
        d["tiles"] = T;
        d["split"] = "even";
        for (int t : op.outputs) place_output(t, parts, done, opi, d);
        return d;
    }

    void store_outputs() {
        // Graph outputs were stored when produced; nothing stays only on chip at the end.
        for (size_t t = 0; t < m_g.tensors().size(); ++t) {
            const tensor_info& ti = m_g.tensors()[t];
            if (ti.role != tensor_role::output || !m_place[t].resident) continue;
            nlohmann::json d;
            std::vector<std::pair<int, region>> parts;
            std::vector<std::vector<std::uint32_t>> done;
            for (const piece& pc : m_place[t].pieces) {
                parts.emplace_back(pc.tile, pc.area);
                done.push_back(pc.ready);
            }
            m_place[t].resident = false;
            const std::uint32_t op = m_out.prog.intern_op(ti.name + ".store");
            tensor_placement& mp = in_memory(static_cast<int>(t));
            for (size_t i = 0; i < parts.size(); ++i) {
                endpoint dst = m_mem;
                dst.address = mp.address;
                m_out.prog.add_transfer(
                    op, m_tiles[static_cast<size_t>(parts[i].first)], dst,
                    static_cast<std::uint64_t>(std::ceil(parts[i].second.area() * static_cast<double>(ti.bytes()))),
                    done[i]);
            }
        }
    }
};

}  // namespace

mapping mesh_mapper::map(const workload_graph& g, const platform& plat) const {
    if (m_opt.resident_fraction < 0 || m_opt.resident_fraction >= 1)
        throw input_error("mapper.resident_fraction must be at least 0 and below 1");
    mesh_planner p(g, plat, m_opt);
    return p.run();
}

TESSEL_REGISTER_MAPPER(make_mapper<mesh_mapper>(
    "mesh",
    "op after op on a grid of tiles: output-tiled GEMMs streaming K chunks from memory, double buffered; "
    "outputs kept on chip when they fit"));

}  // namespace tessel
