// The rdu mapper's program: sections one after another, each reconfigured, loaded, streamed tile by tile and
// stored (see rdu_mapper.h, steps 5 and 6); off-chip memory laid out per tier.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "engine/mappers/rdu/internal.h"
#include "engine/mappers/toolkit/allocator.h"
#include "engine/mappers/toolkit/parts.h"
#include "models/core/unit_gang.h"

namespace tessel::rdu {

namespace {

/// DRAM layout: an allocator per tier behind the AGCUs (weights, configurations and stored tensors).
class dram_layout {
public:
    dram_layout(const component& a, const workload_graph& g) : m_a(a), m_g(g) {
        const auto& ts = a.memory_tiers();
        for (const auto& t : ts)
            m_tier.emplace_back(toolkit::address_allocator::options{t.capacity, k_align, t.base, 0});
        m_fastest_first.resize(ts.size());
        for (size_t i = 0; i < ts.size(); ++i) m_fastest_first[i] = i;
        std::stable_sort(m_fastest_first.begin(), m_fastest_first.end(),
                         [&](size_t x, size_t y) { return ts[x].peak_bytes_per_second > ts[y].peak_bytes_per_second; });
    }

    /// Picks the tier named `name`, or the fastest with room for `bytes` now ("" = automatic); `what` names the
    /// bytes in an error, as a plural subject unless `one`.
    size_t pick(const std::string& name, double bytes, const std::string& what, bool one = false) const {
        const std::string need = one ? " needs " : " need ";
        const auto& ts = m_a.memory_tiers();
        const auto block = static_cast<std::uint64_t>(std::ceil(bytes));
        if (!name.empty()) {
            for (size_t i = 0; i < ts.size(); ++i)
                if (ts[i].name == name) {
                    if (m_tier[i].fits(block)) return i;
                    const double free = static_cast<double>(ts[i].capacity - m_tier[i].high_water());
                    // Built piece by piece: a concatenation inside the loop would allocate temporaries.
                    std::string msg = "workload '";
                    for (const std::string& part :
                         {m_g.name, std::string("': "), what, need, format_bytes(bytes), std::string(" but '"), name,
                          std::string("' has "), format_bytes(free), std::string(" free; memories behind the AGCUs: "),
                          names()})
                        msg += part;
                    throw input_error(msg);
                }
            throw input_error("rdu mapper: no memory '" + name + "' behind the AGCUs; they reach " + names());
        }
        for (size_t i : m_fastest_first)
            if (m_tier[i].fits(block)) return i;
        throw input_error("workload '" + m_g.name + "': " + what + need + format_bytes(bytes) +
                          ", more than any memory behind the AGCUs has free: " + names());
    }

    std::uint64_t alloc(size_t tier, double bytes) {
        const auto& t = m_a.memory_tiers()[tier];
        const std::uint64_t a = m_tier[tier].alloc(static_cast<std::uint64_t>(std::ceil(bytes)));
        if (m_tier[tier].overflowed())
            throw input_error("workload '" + m_g.name + "' needs more than the " +
                              format_bytes(static_cast<double>(t.capacity)) + " of '" + t.name + "'");
        return a;
    }
    void free(size_t tier, std::uint64_t address) { m_tier[tier].free(address); }
    bool fits(size_t tier, double bytes) const {
        return m_tier[tier].fits(static_cast<std::uint64_t>(std::ceil(bytes)));
    }
    /// Bytes free above everything allocated in `tier` so far, in whole blocks of the allocator's alignment.
    double room(size_t tier) const {
        const std::uint64_t free = m_a.memory_tiers()[tier].capacity - m_tier[tier].high_water();
        return static_cast<double>(free - (free % k_align));
    }

private:
    static constexpr std::uint64_t k_align = 4096;
    const component& m_a;
    const workload_graph& m_g;
    std::vector<toolkit::address_allocator> m_tier;
    std::vector<size_t> m_fastest_first;

    std::string names() const {
        std::string out;
        for (const auto& t : m_a.memory_tiers())
            out += (out.empty() ? "" : ", ") + t.name + " (" + format_bytes(static_cast<double>(t.capacity)) + ")";
        return out;
    }
};

class builder {
public:
    builder(const workload_graph& g, const chip& c, const rdu_plan& plan, const std::vector<int>& root,
            const rdu_mapper::options& o, rdu_mapper::record& rec, mapping& out)
        : m_g(g), m_c(c), m_plan(plan), m_root(root), m_o(o), m_rec(rec), m_out(out), m_mem(*c.agcu, g) {}

    void run() {
        m_out.prog.name = m_g.name;
        layout();
        m_cfg_op = m_out.prog.intern_op("reconfigure");
        m_join_op = m_out.prog.intern_op("section");
        std::uint32_t prev = ~0u;
        for (size_t s = 0; s < m_plan.sections.size(); ++s) prev = section(s, prev);
    }

private:
    const workload_graph& m_g;
    const chip& m_c;
    const rdu_plan& m_plan;
    const std::vector<int>& m_root;
    const rdu_mapper::options& m_o;
    rdu_mapper::record& m_rec;
    mapping& m_out;
    dram_layout m_mem;
    std::vector<std::uint64_t> m_addr;  // per root tensor, when it lives in off-chip memory
    std::vector<bool> m_in_dram;
    std::vector<int> m_last_section;           // per root tensor: the last section that reads it
    std::vector<std::uint64_t> m_config_addr;  // per section
    std::uint32_t m_cfg_op = 0, m_join_op = 0;
    static constexpr std::uint32_t none = ~0u;

    std::uint32_t join(const std::vector<std::uint32_t>& deps) { return m_out.prog.add_delay(m_join_op, 0, deps); }

    /// A step the tile order guarantees exists already (a broken order would be a mapper bug, not bad input).
    static std::uint32_t created(std::uint32_t step, const std::string& stage) {
        if (step == none)
            throw std::logic_error("rdu mapper: stage '" + stage + "' depends on a tile not yet scheduled");
        return step;
    }
    endpoint agcu(int unit, std::uint64_t address) const { return endpoint{m_c.agcu->id(), unit, address}; }
    endpoint pcu(int i) const { return endpoint{m_c.pcu_ids[static_cast<size_t>(i)], 0, 0}; }
    endpoint pmu(int i, std::uint64_t address = 0) const {
        return endpoint{m_c.pmu_ids[static_cast<size_t>(i)], 0, address};
    }

    /// Lanes a tile's `bytes` move in over `units` units: one per unit (the fine form), or as few as keep each at
    /// least mapper.transfer_grain, and at most mapper.gangs (each lane the first of a run of adjacent units).
    int lanes(double bytes, size_t units) const {
        const double grain = static_cast<double>(m_o.transfer_grain.bytes());
        if (grain <= 0 || units == 0) return static_cast<int>(units);
        double most = static_cast<double>(units);
        if (ganged()) most = std::min(most, static_cast<double>(m_o.gangs));
        return static_cast<int>(std::clamp(std::floor(bytes / grain), 1.0, most));
    }
    /// The gang form: a stage's PCUs compute a tile in one step per output lane (unit_gang.h).
    bool ganged() const { return m_o.gangs > 0 && m_o.transfer_grain.bytes() > 0; }
    /// The first unit of lane `b` of `n` over `units` units.
    static size_t lane_unit(int b, int n, size_t units) {
        return static_cast<size_t>(b) * units / static_cast<size_t>(n);
    }

    /// Where a point of tile t of n (at `within` of the tile, 0..1) of stage s lies in its whole output, as a
    /// fraction: a column chunk has a slice of every tile's columns, a batch chunk whole tiles of its own items.
    static double whole_fraction(const rdu_stage& s, int t, int n, double within) {
        if (s.by_batch) return (s.chunk + (t + within) / n) / s.chunks;
        return (t + (s.chunk + within) / s.chunks) / n;
    }

    static std::uint64_t slice(double total, double lo, double hi) {
        return static_cast<std::uint64_t>(std::floor(total * hi + 1e-9) - std::floor(total * lo + 1e-9));
    }

    void layout() {
        const size_t nt = m_g.tensors().size();
        m_addr.assign(nt, 0);
        m_in_dram.assign(nt, false);
        m_last_section.assign(nt, -1);
        std::vector<int> made_in(nt, -1);
        std::vector<int> first_touch(nt, std::numeric_limits<int>::max());  // the first section to read or write it
        for (size_t i = 0; i < m_plan.stages.size(); ++i) {
            const rdu_stage& s = m_plan.stages[i];
            const int sec = m_plan.section_of[i];
            for (const auto& in : s.inputs) {
                const auto t = static_cast<size_t>(in.tensor);
                m_last_section[t] = std::max(m_last_section[t], sec);
                first_touch[t] = std::min(first_touch[t], sec);
            }
            for (int w : s.weight_tensors)
                m_last_section[static_cast<size_t>(w)] = std::max(m_last_section[static_cast<size_t>(w)], sec);
            for (int r : s.outputs) {
                made_in[static_cast<size_t>(r)] = std::max(made_in[static_cast<size_t>(r)], sec);
                first_touch[static_cast<size_t>(r)] = std::min(first_touch[static_cast<size_t>(r)], sec);
            }
        }
        // What lives off chip: weights and state, graph inputs, and tensors a later section (or the user) reads.
        // On a system's chip (a piece of a longer program) the weight gradients a pass makes or reads are laid out
        // with the weights: accumulated over the microbatches, they live the whole iteration, not between sections.
        const bool resident_grads = m_o.program_resident_bytes > 0;
        double wbytes = 0, gbytes = 0, abytes = 0;
        std::vector<int> weights, acts;
        std::set<int> outputs;
        for (int t : m_g.graph_outputs()) outputs.insert(m_root[static_cast<size_t>(t)]);
        for (size_t t = 0; t < nt; ++t) {
            if (m_root[t] != static_cast<int>(t)) continue;
            const tensor_info& ti = m_g.tensors()[t];
            if (ti.role == tensor_role::constant) continue;
            const bool used = m_last_section[t] >= 0 || outputs.count(static_cast<int>(t));
            if (!used) continue;
            if (ti.role == tensor_role::weight || ti.role == tensor_role::state) {
                weights.push_back(static_cast<int>(t));
                wbytes += static_cast<double>(ti.bytes());
            } else if (resident_grads && ti.grad_of >= 0 && m_g.tensor(ti.grad_of).role == tensor_role::weight) {
                weights.push_back(static_cast<int>(t));
                gbytes += static_cast<double>(ti.bytes());
            } else if (made_in[t] < 0 || m_last_section[t] > made_in[t] || outputs.count(static_cast<int>(t))) {
                acts.push_back(static_cast<int>(t));
                abytes += static_cast<double>(ti.bytes());
            }
        }
        double cfg = 0;
        for (const auto& sec : m_plan.sections)
            cfg += static_cast<double>(sec.pcus) * static_cast<double>(m_c.pcu_config) +
                   static_cast<double>(sec.pmus) * static_cast<double>(m_c.pmu_config);
        const size_t wt = m_mem.pick(
            m_o.weights_tier, wbytes + gbytes + cfg,
            gbytes > 0 ? "weights, state, gradients and configurations" : "weights, state and configurations");
        for (int t : weights) {
            m_addr[static_cast<size_t>(t)] = m_mem.alloc(wt, static_cast<double>(m_g.tensor(t).bytes()));
            m_in_dram[static_cast<size_t>(t)] = true;
        }
        for (const auto& sec : m_plan.sections)
            m_config_addr.push_back(
                m_mem.alloc(wt, static_cast<double>(sec.pcus) * static_cast<double>(m_c.pcu_config) +
                                    static_cast<double>(sec.pmus) * static_cast<double>(m_c.pmu_config)));
        // Room for what the rest of the chip program keeps in the weights' memory meanwhile (a system's chip:
        // its other pieces' weights, the gradients and the optimizer state), as much as that memory has free.
        const double reserve = std::min(std::max(0.0, m_o.program_resident_bytes - wbytes - gbytes), m_mem.room(wt));
        const between b = place_between_sections(acts, made_in, first_touch, outputs, abytes, wt, reserve);
        const auto& tiers = m_c.agcu->memory_tiers();
        std::string where, used;
        for (size_t i = 0; i < tiers.size(); ++i) {
            if (b.placed[i] <= 0) continue;
            where += (where.empty() ? "" : " and ") + tiers[i].name;
            used += (used.empty() ? "" : "+") + tiers[i].name;
            if (b.tiers > 1) where += " (" + format_bytes(b.placed[i]) + ")";
        }
        if (used.empty()) used = where = tiers[b.first].name;
        m_out.notes.push_back(
            "off-chip memory: " + format_bytes(wbytes + gbytes) +
            (gbytes > 0 ? " of weights, state and gradients in " : " of weights and state in ") + tiers[wt].name +
            ", " + format_bytes(abytes) + " of inputs, outputs and tensors stored between sections in " + where +
            (b.shared ? ", reused over their lifetimes: at most " + format_bytes(b.peak) + " at once" : "") +
            (reserve > 0 ? "; " + format_bytes(reserve) + " of " + tiers[wt].name +
                               " kept for what the rest of the chip program holds (weights, gradients, optimizer "
                               "state)"
                         : ""));
        if (reserve > 0) m_out.details["reserved_bytes"] = reserve;
        m_out.details["weights_tier"] = tiers[wt].name;
        m_out.details["activations_tier"] = used;
        // What went past the first (the fastest) memory: a system run sums it over its pieces.
        double slower = 0;
        std::string slower_names;
        for (size_t i = 0; i < tiers.size(); ++i)
            if (i != b.first && b.placed[i] > 0) {
                slower += b.placed[i];
                slower_names += (slower_names.empty() ? "" : "+") + tiers[i].name;
            }
        if (slower > 0) {
            m_out.details["slower_memory_bytes"] = slower;
            m_out.details["slower_memory"] = slower_names;
        }
    }

    /// Where the tensors stored between sections went: bytes per tier, the tiers used, the most live at once.
    struct between {
        std::vector<double> placed;
        int tiers = 0;
        size_t first = 0;     // the fastest tier (or mapper.activations_tier)
        bool shared = false;  // whether blocks are reused over lifetimes (they did not fit at once in `first`)
        double peak = 0;
    };

    /// Lays out `acts`, the tensors stored between sections. Where all of them fit at once in the fastest tier
    /// (or mapper.activations_tier), each has a block of its own. Where they do not, they share memory as a
    /// compiler's buffer reuse and spilling do: each holds a block only while live, from the first section that
    /// touches it (graph inputs from the start) to the last (graph outputs to the end), in the fastest tier with
    /// room when it is made. (Reuse moves addresses, and so which banks a block meets; it is left to where it is
    /// needed so that what fits keeps the layout it had.) `reserve` bytes of tier `reserve_tier` are kept for the
    /// rest of the chip program, after the tensors where they fit beside it (so their addresses stay), else first.
    between place_between_sections(const std::vector<int>& acts, const std::vector<int>& made_in,
                                   const std::vector<int>& first_touch, const std::set<int>& outputs, double abytes,
                                   size_t reserve_tier, double reserve) {
        between b;
        b.placed.assign(m_c.agcu->memory_tiers().size(), 0);
        b.first = m_mem.pick(m_o.activations_tier, 0, "");
        if (m_mem.fits(b.first, abytes + (b.first == reserve_tier ? reserve : 0))) {
            for (int t : acts) {
                m_addr[static_cast<size_t>(t)] = m_mem.alloc(b.first, static_cast<double>(m_g.tensor(t).bytes()));
                m_in_dram[static_cast<size_t>(t)] = true;
            }
            if (reserve > 0) m_mem.alloc(reserve_tier, reserve);
            b.placed[b.first] = b.peak = abytes;
            b.tiers = abytes > 0 ? 1 : 0;
            return b;
        }
        if (reserve > 0) m_mem.alloc(reserve_tier, reserve);
        b.shared = true;
        std::map<int, std::vector<int>> starts, ends;  // section (-1: before the first) -> tensors
        for (int t : acts) {
            const auto i = static_cast<size_t>(t);
            starts[made_in[i] < 0 ? -1 : first_touch[i]].push_back(t);
            if (!outputs.count(t)) ends[std::max(m_last_section[i], made_in[i])].push_back(t);
        }
        std::vector<size_t> tier_of(m_g.tensors().size(), 0);
        double live_bytes = 0;
        for (int sec = -1; sec < static_cast<int>(m_plan.sections.size()); ++sec) {
            if (auto it = starts.find(sec); it != starts.end())
                for (int t : it->second) {
                    const auto bytes = static_cast<double>(m_g.tensor(t).bytes());
                    const size_t tier =
                        m_mem.pick(m_o.activations_tier, bytes,
                                   "tensor '" + m_g.tensor(t).name + "' (stored between sections)", true);
                    m_addr[static_cast<size_t>(t)] = m_mem.alloc(tier, bytes);
                    m_in_dram[static_cast<size_t>(t)] = true;
                    tier_of[static_cast<size_t>(t)] = tier;
                    if (b.placed[tier] <= 0) ++b.tiers;
                    b.placed[tier] += bytes;
                    live_bytes += bytes;
                    b.peak = std::max(b.peak, live_bytes);
                }
            if (auto it = ends.find(sec); it != ends.end())
                for (int t : it->second) {
                    const auto bytes = static_cast<double>(m_g.tensor(t).bytes());
                    // An empty tensor holds no block of its own (it shares the address of the next), so it frees none.
                    if (bytes > 0) m_mem.free(tier_of[static_cast<size_t>(t)], m_addr[static_cast<size_t>(t)]);
                    live_bytes -= bytes;
                }
        }
        return b;
    }

    /// Per placed stage while a section is built.
    struct live {
        std::vector<std::vector<std::uint32_t>> pending;            // per tile: transfers into its buffers
        std::vector<std::uint32_t> whole_in;                        // transfers into its whole buffers
        std::vector<std::uint32_t> ready, done;                     // per tile
        std::vector<std::vector<std::uint32_t>> compute;            // per tile, per PCU (per gang)
        std::vector<std::uint32_t> gang_payload;                    // per gang of more than one PCU
        std::vector<std::vector<std::vector<std::uint32_t>>> sent;  // per tile, per output lane: its pushes
        std::vector<size_t> lane_of;                                // per source unit: its output lane
        int out_lanes = 0;
    };

    /// One tile of one placed stage, as the streaming orders them.
    struct stream_item {
        int level, g, pos, tile;
    };

    /// A section while it is built: its plan, its record so far, where its tensors flow, its stages' progress
    /// and its stores to memory.
    struct section_build {
        section_build(size_t index, const rdu_section& s) : si(index), sec(s) {}
        size_t si;
        const rdu_section& sec;
        rdu_mapper::record::section_rec rec;
        std::map<int, std::vector<size_t>> producers;                     // root tensor -> placed indices
        std::map<int, std::vector<std::pair<size_t, size_t>>> consumers;  // tensor -> (placed index, input index)
        std::vector<live> lives;                                          // per placed stage
        std::vector<std::uint32_t> spills;                                // stores to memory
    };

    /// Part of one output lane of a tile: [lo, hi) of the whole tensor, leaving `from` once `after` is done.
    struct lane_slice {
        double lo, hi;
        endpoint from;
        std::uint32_t after;
        std::uint32_t op;
    };

    /// Builds section `si`, started after step `prev` (none for the first): 1. reconfigure, 2. load, 3. stream
    /// tile by tile, 4. end; returns its end.
    std::uint32_t section(size_t si, std::uint32_t prev) {
        section_build w(si, m_plan.sections[si]);
        w.rec.start = join(prev == ~0u ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>{prev});
        find_section_flows(w);
        reconfigure_section(w);
        load_section(w);
        // 3. Streaming, in the order the tiles flow: by level, then by the tile's end, then topologically.
        const std::vector<stream_item> order = prepare_streaming(w);
        w.rec.stages.resize(w.sec.stages.size());
        for (const stream_item& it : order) stream_tile(w, static_cast<size_t>(it.pos), it.tile);
        return finish_section(w);
    }

    /// Where each root tensor is produced in the section, and which of its stages consume it there.
    void find_section_flows(section_build& w) const {
        const rdu_section& sec = w.sec;
        // Where each root tensor is produced in this section.
        for (size_t i = 0; i < sec.stages.size(); ++i)
            for (int r : m_plan.stages[static_cast<size_t>(sec.stages[i].stage)].outputs) w.producers[r].push_back(i);
        // Consumers in this section of each root tensor.
        for (size_t i = 0; i < sec.stages.size(); ++i) {
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(sec.stages[i].stage)];
            for (size_t k = 0; k < s.inputs.size(); ++k)
                if (w.producers.count(s.inputs[k].tensor)) w.consumers[s.inputs[k].tensor].emplace_back(i, k);
        }
    }

    /// 1. Reconfiguration: every unit used loads its configuration through its nearest AGCU.
    void reconfigure_section(section_build& w) {
        const rdu_section& sec = w.sec;
        program& prog = m_out.prog;
        std::vector<std::uint32_t> cfg;
        if (!m_plan.preloaded) {
            // In gangs, adjacent units behind one AGCU take their configurations in one transfer to the first,
            // at most 8 at a time: the AGCU sends the same bytes at the same rate, and the first unit's input port
            // is as fast as an AGCU's, so the section is configured as soon.
            const int run = ganged() ? 8 : 1;
            std::uint64_t off = m_config_addr[w.si];
            auto configure = [&](int units, const std::vector<int>& agcu_of, std::uint64_t bytes, auto unit) {
                for (int u = 0; u < units;) {
                    int v = u + 1;
                    while (v < units && v - u < run &&
                           agcu_of[static_cast<size_t>(v)] == agcu_of[static_cast<size_t>(u)])
                        ++v;
                    const std::uint64_t n = bytes * static_cast<std::uint64_t>(v - u);
                    cfg.push_back(prog.add_transfer(m_cfg_op, agcu(agcu_of[static_cast<size_t>(u)], off), unit(u), n,
                                                    {w.rec.start}));
                    off += n;
                    u = v;
                }
            };
            configure(sec.pcus, m_c.pcu_agcu, m_c.pcu_config, [&](int u) { return pcu(u); });
            configure(sec.pmus, m_c.pmu_agcu, m_c.pmu_config, [&](int u) { return pmu(u); });
        }
        w.rec.configured = join(cfg.empty() ? std::vector<std::uint32_t>{w.rec.start} : cfg);
    }

    /// 2. Loads: weights, and operands needed whole that are in memory, spread over each stage's PMUs, each PMU
    ///    through the AGCU the plan balanced its bytes onto.
    void load_section(section_build& w) {
        const rdu_section& sec = w.sec;
        program& prog = m_out.prog;
        std::vector<std::uint32_t> loads;
        for (const rdu_placed& p : sec.stages) {
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
            const std::uint32_t op = prog.intern_op(s.name);
            const int m = static_cast<int>(p.pmus.size());
            auto load = [&](int tensor, double bytes, double lo_frac, double hi_frac) {
                const std::uint64_t base = m_addr[static_cast<size_t>(tensor)];
                for (int b = 0; b < m; ++b) {
                    const double lo = lo_frac + (hi_frac - lo_frac) * b / m,
                                 hi = lo_frac + (hi_frac - lo_frac) * (b + 1) / m;
                    const std::uint64_t n = slice(bytes / (hi_frac - lo_frac), lo, hi);
                    if (n == 0) continue;
                    const int u = p.pmus[static_cast<size_t>(b)];
                    loads.push_back(prog.add_transfer(
                        op,
                        agcu(sec.load_agcu[static_cast<size_t>(u)], base + slice(bytes / (hi_frac - lo_frac), 0, lo)),
                        pmu(u), n, {w.rec.configured}));
                }
            };
            const double f0 = static_cast<double>(s.chunk) / s.chunks, f1 = static_cast<double>(s.chunk + 1) / s.chunks;
            if (!m_plan.preloaded)
                for (int wt : s.weight_tensors)
                    load(wt, static_cast<double>(m_g.tensor(wt).bytes()) * (f1 - f0), f0, f1);
            for (const auto& in : s.inputs)
                if (in.whole && !w.producers.count(in.tensor)) {
                    const bool chunked = in.bytes < static_cast<double>(m_g.tensor(in.tensor).bytes()) * (1 - 1e-12);
                    load(in.tensor, in.bytes, chunked ? f0 : 0.0, chunked ? f1 : 1.0);
                }
        }
        w.rec.loaded = join(loads.empty() ? std::vector<std::uint32_t>{w.rec.configured} : loads);
    }

    /// Sets up each placed stage's progress and output lanes; returns every tile of every stage in the order the
    /// tiles flow.
    std::vector<stream_item> prepare_streaming(section_build& w) const {
        const rdu_section& sec = w.sec;
        w.lives.assign(sec.stages.size(), live{});
        std::vector<stream_item> order;
        for (size_t i = 0; i < sec.stages.size(); ++i) {
            const rdu_placed& p = sec.stages[i];
            live& l = w.lives[i];
            l.pending.assign(static_cast<size_t>(p.tiles), {});
            l.ready.assign(static_cast<size_t>(p.tiles), none);
            l.done.assign(static_cast<size_t>(p.tiles), none);
            l.compute.assign(static_cast<size_t>(p.tiles), {});
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
            const size_t sources = s.computes ? p.pcus.size() : p.pmus.size();
            double out_bytes = 0;  // of one tile
            for (int r : s.outputs) out_bytes += static_cast<double>(m_g.tensor(r).bytes()) / s.chunks / p.tiles;
            l.out_lanes = lanes(out_bytes, sources);
            l.lane_of.resize(sources);
            for (int b = 0; b < l.out_lanes; ++b)
                for (size_t u = lane_unit(b, l.out_lanes, sources); u < lane_unit(b + 1, l.out_lanes, sources); ++u)
                    l.lane_of[u] = static_cast<size_t>(b);
            l.sent.assign(static_cast<size_t>(p.tiles),
                          std::vector<std::vector<std::uint32_t>>(static_cast<size_t>(l.out_lanes)));
            const int per = sec.tiles / p.tiles;
            for (int t = 0; t < p.tiles; ++t)
                order.push_back(stream_item{p.level, (t + 1) * per - 1, static_cast<int>(i), t});
        }
        std::stable_sort(order.begin(), order.end(), [](const stream_item& a, const stream_item& b) {
            if (a.level != b.level) return a.level < b.level;
            if (a.g != b.g) return a.g < b.g;
            return a.pos < b.pos;
        });
        return order;
    }

    /// Tile t of placed stage i: its inputs, its compute and its outputs.
    void stream_tile(section_build& w, size_t i, int t) {
        const rdu_placed& p = w.sec.stages[i];
        const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
        const std::uint32_t op = m_out.prog.intern_op(s.name);
        live& me = w.lives[i];
        stream_tile_inputs(w, i, t, op);
        const std::vector<std::uint32_t> src_step = compute_tile(w, i, t, op);
        const std::vector<std::uint32_t> outgoing = send_tile_outputs(w, i, t, op, src_step);
        // A PMU-only stage frees its buffer once the tile has left it.
        if (!s.computes)
            me.done[static_cast<size_t>(t)] = outgoing.empty() ? me.ready[static_cast<size_t>(t)] : join(outgoing);
    }

    /// Tile t of placed stage i becomes ready once its inputs from memory, the transfers into its buffers and
    /// the tile before it are.
    void stream_tile_inputs(section_build& w, size_t i, int t, std::uint32_t op) {
        program& prog = m_out.prog;
        const rdu_placed& p = w.sec.stages[i];
        const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
        const int n_tiles = p.tiles;
        live& me = w.lives[i];
        // Inputs streamed from memory for this tile.
        std::vector<std::uint32_t> deps = me.pending[static_cast<size_t>(t)];
        for (size_t k = 0; k < s.inputs.size(); ++k) {
            const auto& in = s.inputs[k];
            if (in.whole || w.producers.count(in.tensor)) continue;
            if (!m_in_dram[static_cast<size_t>(in.tensor)])
                throw std::logic_error("rdu mapper: '" + m_g.tensor(in.tensor).name + "' is read by '" + s.name +
                                       "' but is neither on chip nor in memory");
            const int depth = static_cast<int>(p.buffer_tiles[k]);
            const std::vector<std::uint32_t> room{t >= depth ? created(me.done[static_cast<size_t>(t - depth)], s.name)
                                                             : w.rec.loaded};
            const int m = lanes(in.bytes / n_tiles, p.pmus.size());
            for (int b = 0; b < m; ++b) {
                const double lo = (t + static_cast<double>(b) / m) / n_tiles,
                             hi = (t + static_cast<double>(b + 1) / m) / n_tiles;
                const std::uint64_t n = slice(in.bytes, lo, hi);
                if (n == 0) continue;
                const int u = p.pmus[lane_unit(b, m, p.pmus.size())];
                // A batch chunk reads its own items: its share of the tensor starts at the chunk's first item.
                const std::uint64_t first = s.by_batch ? slice(static_cast<double>(m_g.tensor(in.tensor).bytes()), 0,
                                                               static_cast<double>(s.chunk) / s.chunks)
                                                       : 0;
                deps.push_back(
                    prog.add_transfer(op,
                                      agcu(m_c.pmu_agcu[static_cast<size_t>(u)],
                                           m_addr[static_cast<size_t>(in.tensor)] + first + slice(in.bytes, 0, lo)),
                                      pmu(u), n, room));
            }
        }
        if (t == 0) deps.insert(deps.end(), me.whole_in.begin(), me.whole_in.end());
        deps.push_back(t == 0 ? w.rec.loaded : me.ready[static_cast<size_t>(t - 1)]);
        me.ready[static_cast<size_t>(t)] = join(deps);
    }

    /// Compute of tile t of placed stage i on its PCUs; returns, per source unit, the step its output of this tile
    /// waits for.
    std::vector<std::uint32_t> compute_tile(section_build& w, size_t i, int t, std::uint32_t op) {
        program& prog = m_out.prog;
        const rdu_placed& p = w.sec.stages[i];
        const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
        const int n_tiles = p.tiles;
        live& me = w.lives[i];
        std::vector<std::uint32_t> src_step;  // per source unit: the step its output of this tile waits for
        if (s.computes) {
            const int n = static_cast<int>(p.pcus.size());
            // A step per PCU, or per gang: the PCUs of one output lane.
            const int steps = ganged() ? me.out_lanes : n;
            me.compute[static_cast<size_t>(t)].resize(static_cast<size_t>(steps));
            for (int a = 0; a < steps; ++a) {
                const int q0 = ganged() ? static_cast<int>(lane_unit(a, steps, static_cast<size_t>(n))) : a;
                const int q1 = ganged() ? static_cast<int>(lane_unit(a + 1, steps, static_cast<size_t>(n))) : a + 1;
                std::vector<std::uint32_t> cd{me.ready[static_cast<size_t>(t)]};
                if (t > 0) cd.push_back(me.compute[static_cast<size_t>(t - 1)][static_cast<size_t>(a)]);
                const int depth = static_cast<int>(m_o.buffer_depth);
                if (t >= depth) {  // its output lane has room
                    const auto& out = me.sent[static_cast<size_t>(t - depth)][me.lane_of[static_cast<size_t>(q0)]];
                    cd.insert(cd.end(), out.begin(), out.end());
                }
                const std::uint32_t c = prog.add_compute(op, pcu(p.pcus[static_cast<size_t>(q0)]),
                                                         prog.add_work(gang_work(s, n_tiles, t, n, q0, q1)), cd);
                if (q1 - q0 > 1) prog.use_payload(c, gang_payload(p, me, a, q0, q1));
                me.compute[static_cast<size_t>(t)][static_cast<size_t>(a)] = c;
                w.rec.stages[i].computes.push_back(c);
                if (ganged()) w.rec.stages[i].widths.push_back(static_cast<std::uint32_t>(q1 - q0));
                src_step.insert(src_step.end(), static_cast<size_t>(q1 - q0), c);
            }
            me.done[static_cast<size_t>(t)] = join(me.compute[static_cast<size_t>(t)]);
        } else {
            src_step.assign(p.pmus.size(), me.ready[static_cast<size_t>(t)]);
        }
        return src_step;
    }

    /// The work of PCUs [q0, q1) of a stage's n on tile t: the sum of their shares, as a matrix product the largest
    /// share's view (each member of a gang is timed on an equal part of the sum in that view).
    work gang_work(const rdu_stage& s, int n_tiles, int t, int n, int q0, int q1) const {
        work sum = share(s, *m_c.pcu, n_tiles, t, n, q0);
        double largest = sum.macs + sum.vector_ops;
        for (int q = q0 + 1; q < q1; ++q) {
            const work x = share(s, *m_c.pcu, n_tiles, t, n, q);
            sum.macs += x.macs;
            sum.vector_ops += x.vector_ops;
            sum.bytes_in += x.bytes_in;
            sum.bytes_weight += x.bytes_weight;
            sum.bytes_out += x.bytes_out;
            if (x.macs + x.vector_ops > largest) {
                largest = x.macs + x.vector_ops;
                sum.batch = x.batch;
                sum.m = x.m;
                sum.n = x.n;
                sum.k = x.k;
            }
        }
        return sum;
    }

    /// The payload naming gang `a` (PCUs [q0, q1) of placed stage p), one per gang and section.
    std::uint32_t gang_payload(const rdu_placed& p, live& me, int a, int q0, int q1) {
        if (me.gang_payload.empty()) me.gang_payload.assign(static_cast<size_t>(me.out_lanes), none);
        std::uint32_t& index = me.gang_payload[static_cast<size_t>(a)];
        if (index == none) {
            const auto lead =
                static_cast<std::int64_t>(m_c.pcu_ids[static_cast<size_t>(p.pcus[static_cast<size_t>(q0)])]);
            std::vector<std::int32_t> others;
            for (int q = q0 + 1; q < q1; ++q)
                others.push_back(static_cast<std::int32_t>(
                    static_cast<std::int64_t>(m_c.pcu_ids[static_cast<size_t>(p.pcus[static_cast<size_t>(q)])]) -
                    lead));
            index = m_out.prog.add_payload(std::make_shared<unit_gang>(std::move(others)));
        }
        return index;
    }

    /// Outputs of tile t of placed stage i: into the buffers of consumers here, and to memory when later sections
    /// or the user need them; returns every transfer sent.
    std::vector<std::uint32_t> send_tile_outputs(section_build& w, size_t i, int t, std::uint32_t op,
                                                 const std::vector<std::uint32_t>& src_step) {
        program& prog = m_out.prog;
        const rdu_placed& p = w.sec.stages[i];
        const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
        const int n_tiles = p.tiles;
        live& me = w.lives[i];
        const size_t n_units = src_step.size();
        const int lanes_out = me.out_lanes;
        std::vector<std::uint32_t> lane_step(
            static_cast<size_t>(lanes_out));  // per output lane: its units' computes done
        for (int a = 0; a < lanes_out; ++a) {
            const size_t u0 = lane_unit(a, lanes_out, n_units), u1 = lane_unit(a + 1, lanes_out, n_units);
            std::vector<std::uint32_t> steps{src_step[u0]};  // each step once (a gang's units share theirs)
            for (size_t u = u0 + 1; s.computes && u < u1; ++u)
                if (src_step[u] != steps.back()) steps.push_back(src_step[u]);
            lane_step[static_cast<size_t>(a)] = steps.size() == 1 ? steps.front() : join(steps);
        }
        auto source = [&](size_t a) { return s.computes ? pcu(p.pcus[a]) : pmu(p.pmus[a]); };
        auto source_agcu = [&](size_t a) {
            return s.computes ? m_c.pcu_agcu[static_cast<size_t>(p.pcus[a])]
                              : m_c.pmu_agcu[static_cast<size_t>(p.pmus[a])];
        };
        std::vector<std::uint32_t> outgoing;
        for (int r : s.outputs) {
            const double total = static_cast<double>(m_g.tensor(r).bytes());
            for (size_t a = 0; a < static_cast<size_t>(lanes_out); ++a) {
                // This lane's part of tile t, as a fraction of the whole tensor; it leaves from the lane's first
                // unit.
                const size_t u0 = lane_unit(static_cast<int>(a), lanes_out, n_units),
                             u1 = lane_unit(static_cast<int>(a) + 1, lanes_out, n_units);
                const double lo = whole_fraction(s, t, n_tiles, static_cast<double>(u0) / n_units);
                const double hi = whole_fraction(s, t, n_tiles, static_cast<double>(u1) / n_units);
                std::vector<std::uint32_t>& sent = me.sent[static_cast<size_t>(t)][a];
                if (w.consumers.count(r))
                    for (const auto& [ci, k] : w.consumers[r])
                        send_to_consumer(w, ci, k, lane_slice{lo, hi, source(u0), lane_step[a], op}, sent, outgoing);
                if (m_in_dram[static_cast<size_t>(r)]) {
                    const std::uint64_t n = slice(total, lo, hi);
                    if (n == 0) continue;
                    const std::uint32_t x = prog.add_transfer(
                        op, source(u0), agcu(source_agcu(u0), m_addr[static_cast<size_t>(r)] + slice(total, 0, lo)), n,
                        {lane_step[a]});
                    sent.push_back(x);
                    w.spills.push_back(x);
                    outgoing.push_back(x);
                }
            }
        }
        return outgoing;
    }

    /// Sends lane slice `ls` into the buffer of input k of placed stage ci, adding each transfer to `sent` and
    /// `outgoing`.
    void send_to_consumer(section_build& w, size_t ci, size_t k, lane_slice ls, std::vector<std::uint32_t>& sent,
                          std::vector<std::uint32_t>& outgoing) {
        const rdu_placed& cp = w.sec.stages[ci];
        const rdu_stage& cs = m_plan.stages[static_cast<size_t>(cp.stage)];
        if (cs.by_batch) {
            // A batch chunk takes only its own items, and holds them from its first.
            const double c0 = static_cast<double>(cs.chunk) / cs.chunks,
                         c1 = static_cast<double>(cs.chunk + 1) / cs.chunks;
            const double lo = std::max(ls.lo, c0), hi = std::min(ls.hi, c1);
            if (hi <= lo) return;
            ls.lo = (lo - c0) / (c1 - c0);
            ls.hi = (hi - c0) / (c1 - c0);
        }
        live& cl = w.lives[ci];
        const bool whole = cp.buffer_tiles[k] == 0;
        const int tc = whole ? 0 : static_cast<int>(std::floor(ls.lo * cp.tiles + 1e-9));
        const double base = whole ? 0.0 : static_cast<double>(tc);
        const double scale = whole ? 1.0 : static_cast<double>(cp.tiles);
        const double used = cs.inputs[k].bytes;  // bytes of this tensor the consumer holds
        const int m = lanes(used / (whole ? 1 : cp.tiles), cp.pmus.size());
        const double l0 = ls.lo * scale - base, l1 = ls.hi * scale - base;  // in the consumer's buffer
        std::vector<std::uint32_t> after{ls.after};
        const int depth = static_cast<int>(cp.buffer_tiles[k]);
        if (!whole && tc >= depth) after.push_back(created(cl.done[static_cast<size_t>(tc - depth)], cs.name));
        for (int b = static_cast<int>(std::floor(l0 * m)); b < m && b < std::ceil(l1 * m - 1e-12); ++b) {
            const double o0 = std::max(l0, static_cast<double>(b) / m),
                         o1 = std::min(l1, static_cast<double>(b + 1) / m);
            if (o1 <= o0) continue;
            const std::uint64_t n = slice(used, (base + o0) / scale, (base + o1) / scale);
            if (n == 0) continue;
            const std::uint64_t into =
                slice(used, 0, (base + o0) / scale) % std::max<std::uint64_t>(1, m_c.pmu_capacity);
            const std::uint32_t x =
                m_out.prog.add_transfer(ls.op, ls.from, pmu(cp.pmus[lane_unit(b, m, cp.pmus.size())], into), n, after);
            sent.push_back(x);
            if (whole)
                cl.whole_in.push_back(x);
            else
                cl.pending[static_cast<size_t>(tc)].push_back(x);
            outgoing.push_back(x);
        }
    }

    /// 4. The section ends when every stage has finished its last tile and every store is done.
    std::uint32_t finish_section(section_build& w) {
        const rdu_section& sec = w.sec;
        std::vector<std::uint32_t> tail = w.spills;
        for (size_t i = 0; i < sec.stages.size(); ++i) tail.push_back(w.lives[i].done.back());
        w.rec.end = join(tail);
        for (size_t i = 0; i < sec.stages.size(); ++i) {
            w.rec.stages[i].pcus = static_cast<int>(sec.stages[i].pcus.size());
            w.rec.stages[i].pmus = static_cast<int>(sec.stages[i].pmus.size());
        }
        m_rec.sections.push_back(std::move(w.rec));
        return m_rec.sections.back().end;
    }
};

}  // namespace

void emit_program(const workload_graph& g, const chip& c, const rdu_plan& plan, const std::vector<int>& roots,
                  const rdu_mapper::options& o, rdu_mapper::record& rec, mapping& out) {
    builder b(g, c, plan, roots, o, rec, out);
    b.run();
}

}  // namespace tessel::rdu

namespace tessel {

std::unique_ptr<mapper> rdu_mapper::coarser() const {
    if (m_opt.representation != "auto") return nullptr;
    auto c = std::make_unique<rdu_mapper>(*this);
    c->m_opt.representation = "coarse";
    // Lanes of at most 64 units: 3.8% slower than the plain coarse form on a 13B GPT layer (hidden 5120, tp 8,
    // batch 16) on the SN40L, in a fifth of its steps; 32 lanes cost 6.0%, 8 cost 25% (docs/platforms/rdu.md).
    if (c->m_opt.gangs == 0) c->m_opt.gangs = 64;
    return c;
}

double rdu_mapper::coarse_above() const {
    return m_opt.representation == "auto" ? m_opt.coarse_above : std::numeric_limits<double>::infinity();
}

mapping rdu_mapper::map(const workload_graph& g, const platform& plat) const {
    const options opt = effective_options();
    if (opt.chunk_above > 1)
        throw input_error("mapper.chunk_above must be at most 1 (a share of the chip's PMU capacity)");
    const rdu::chip c = rdu::discover(plat, opt);
    std::vector<int> roots;
    rdu_plan plan = rdu::make_plan(g, c, opt, plat.title(), &roots);
    plan.preloaded = opt.steady_state && plan.sections.size() == 1;
    // The coarse form first when it may be the one (cheap), then the fine one when that stays small enough to
    // simulate transfer by transfer: at least the coarse form's steps, and its transfers in the mesh's packets.
    options form = opt;
    if (opt.representation == "fine") form.transfer_grain = byte_size{};
    auto planned = std::make_shared<rdu_record>();
    mapping out;
    rdu::emit_program(g, c, plan, roots, form, *planned, out);
    if (opt.representation != "fine") {
        double fine_cost = static_cast<double>(out.prog.size());
        const double packet = static_cast<double>(std::max<std::uint64_t>(1, c.packet_bytes));
        for (const step& st : out.prog.steps)
            if (st.kind == step_kind::transfer)
                fine_cost += std::ceil(static_cast<double>(st.bytes) / packet);
            else if (const auto* gang =
                         payload_as<unit_gang>(st.payload == ~0u ? nullptr : out.prog.payloads[st.payload].get()))
                fine_cost += static_cast<double>(gang->others.size());  // the fine form: a step per PCU
        if (opt.representation == "auto" && fine_cost <= opt.coarse_above) {
            form.transfer_grain = byte_size{};
            planned = std::make_shared<rdu_record>();
            out = mapping{};
            rdu::emit_program(g, c, plan, roots, form, *planned, out);
            out.details["fine_form_cost"] = fine_cost;
        } else {
            out.details["fine_form_cost"] = fine_cost;
            out.prog.packet_bytes = opt.coarse_packet.bytes();
            const clock_domain& clk = plat.comp(c.pcu_ids.front()).clock();
            out.prog.quantum = std::max(out.prog.quantum, opt.coarse_quantum.to_ticks(clk));
            out.notes.push_back(
                "coarse form: transfers of at least " + format_bytes(static_cast<double>(opt.transfer_grain.bytes())) +
                (opt.gangs > 0 ? ", at most " + std::to_string(opt.gangs) +
                                     " lanes per stage and tile (its PCUs in as many gangs, mapper.gangs)"
                               : std::string()) +
                ", packets of at least " + format_bytes(static_cast<double>(opt.coarse_packet.bytes())) +
                ", a quantum of " + format_number(opt.coarse_quantum.to_cycles(clk), 4) +
                " cycles (the fine form would have at least " + format_number(fine_cost, 4) + " steps and packets" +
                (opt.representation == "auto" ? ", above mapper.coarse_above; mapper.representation=fine forces it)"
                                              : ")"));
        }
    }

    // Notes and details: the plan, section by section.
    const int n_sections = static_cast<int>(plan.sections.size());
    int stages_on_pcus = 0;
    for (const auto& st : plan.stages) stages_on_pcus += st.computes ? 1 : 0;
    out.notes.insert(out.notes.begin(),
                     std::to_string(plan.stages.size()) + " pipeline stages (" + std::to_string(stages_on_pcus) +
                         " on PCUs, " + std::to_string(plan.stages.size() - static_cast<size_t>(stages_on_pcus)) +
                         " on PMUs only) in " + std::to_string(n_sections) + " section" + (n_sections == 1 ? "" : "s") +
                         " on " + std::to_string(plan.pcu_count) + " PCUs and " + std::to_string(plan.pmu_count) +
                         " PMUs of " + format_bytes(static_cast<double>(plan.pmu_capacity)) +
                         (n_sections > 1 ? "; reconfigured between sections" : ""));
    if (plan.preloaded)
        out.notes.emplace_back(
            "one section: configuration and weights stay on chip between runs (steady state; mapper.steady_state=false "
            "loads them)");
    for (const auto& n : plan.notes) out.notes.push_back(n);
    nlohmann::json secs = nlohmann::json::array();
    int chosen = static_cast<int>(opt.floorplan_section);
    if (chosen >= n_sections)
        throw input_error("mapper.floorplan_section=" + std::to_string(chosen) + ": the run has " +
                          std::to_string(n_sections) + " sections (0.." + std::to_string(n_sections - 1) + ")");
    if (chosen < 0) {
        chosen = 0;
        for (int s = 1; s < n_sections; ++s)
            if (plan.sections[static_cast<size_t>(s)].predicted_seconds >
                plan.sections[static_cast<size_t>(chosen)].predicted_seconds)
                chosen = s;
    }
    planned->units.resize(static_cast<size_t>(n_sections));
    for (int s = 0; s < n_sections; ++s) {
        const rdu_section& sec = plan.sections[static_cast<size_t>(s)];
        nlohmann::json js;
        js["section"] = s;
        js["tiles"] = sec.tiles;
        js["pcus"] = sec.pcus;
        js["pmus"] = sec.pmus;
        js["predicted_s"] = sec.predicted_seconds;
        js["predicted_total_s"] = sec.predicted_total_seconds;
        js["load_bytes"] = sec.load_bytes;
        nlohmann::json ops = nlohmann::json::array();
        for (const rdu_placed& p : sec.stages) {
            const rdu_stage& st = plan.stages[static_cast<size_t>(p.stage)];
            const std::string label = st.name;
            std::vector<floorplan_region> pr, mr;
            if (!p.pcus.empty()) pr = rdu::run_regions(c.pcu_xy, c.pcu_h, p.pcus.front(), p.pcus.back() + 1, label);
            if (!p.pmus.empty()) mr = rdu::run_regions(c.pmu_xy, c.pmu_h, p.pmus.front(), p.pmus.back() + 1, label);
            const std::string units = (pr.empty() ? std::string() : rdu::region_text(c.pcu_group, pr) + " ") +
                                      rdu::region_text(c.pmu_group, mr);
            planned->units[static_cast<size_t>(s)].push_back(units);
            nlohmann::json jo;
            jo["op"] = st.name;
            jo["kind"] = op_kind_name(g.op(st.op).kind);
            jo["pcus"] = p.pcus.size();
            jo["pmus"] = p.pmus.size();
            jo["tiles"] = p.tiles;
            jo["level"] = p.level;
            jo["resident_bytes"] = p.resident_bytes;
            jo["tile_s"] = p.tile_seconds;
            jo["units"] = units;
            ops.push_back(jo);
            if (s == chosen) {
                for (auto& r : pr) out.regions.emplace_back(c.pcu_group, r);
                for (auto& r : mr) out.regions.emplace_back(c.pmu_group, r);
            }
        }
        js["ops"] = ops;
        secs.push_back(js);
    }
    out.details["mapper"] = "rdu";
    out.details["sections"] = secs;
    out.details["floorplan_section"] = chosen;
    out.details["preloaded"] = plan.preloaded;
    if (n_sections > 1 || opt.floorplan_section >= 0)
        out.notes.push_back("--floorplan outlines section " + std::to_string(chosen) + " (mapper.floorplan_section)");
    out.samples = toolkit::batch_samples(g);
    planned->plan = std::move(plan);
    out.record = planned;
    return out;
}

}  // namespace tessel
