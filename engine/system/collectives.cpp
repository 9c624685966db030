#include "engine/system/collectives.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "models/core/error.h"
#include "models/core/yaml_node.h"

namespace tessel {

// One transfer of a schedule: bytes from `from`'s buffer at off_from to `to`'s buffer at off_to. Not in the
// anonymous namespace: collective_schedules::plan (declared in the header) holds rounds of them.
struct xfer {
    int from, to;
    std::uint64_t off_from, off_to, bytes;
};
using rounds = std::vector<std::vector<xfer>>;

namespace {

const std::vector<std::pair<collective_kind, const char*>> kind_names = {
    {collective_kind::all_reduce, "all_reduce"}, {collective_kind::reduce_scatter, "reduce_scatter"},
    {collective_kind::all_gather, "all_gather"}, {collective_kind::all_to_all, "all_to_all"},
    {collective_kind::broadcast, "broadcast"},   {collective_kind::send_recv, "send_recv"},
};
const std::vector<std::pair<collective_algorithm, const char*>> algorithm_names = {
    {collective_algorithm::ring, "ring"},     {collective_algorithm::tree, "tree"},
    {collective_algorithm::torus, "torus"},   {collective_algorithm::hierarchical, "hierarchical"},
    {collective_algorithm::direct, "direct"}, {collective_algorithm::in_network, "in_network"},
};

template <class E>
E parse_name(const std::vector<std::pair<E, const char*>>& table, const std::string& text, const char* what) {
    std::vector<std::string> known;
    for (const auto& [e, n] : table) {
        if (text == n) return e;
        known.push_back(n);
    }
    fail("unknown " + std::string(what) + " '" + text + "'" + did_you_mean(text, known) + "; known: " + join(known));
}

// Piece p of n of a region [off, off + size): the same cut on every rank.
std::uint64_t cut(std::uint64_t size, std::uint64_t p, std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(size) * p) / n);
}

rounds& at_round(rounds& r, size_t k) {
    if (r.size() <= k) r.resize(k + 1);
    return r;
}

// A region of each rank's buffer (offset and size), per lane (one lane, or two for bidirectional rings).
struct region {
    std::uint64_t off = 0, size = 0;
};

// Torus (and ring, hierarchical): reduce-scatter down the dimensions, all-gather back up. `lanes` regions per
// rank; lane 0 goes round each ring in increasing rank order, lane 1 (bidirectional) the other way.
void torus_schedule(rounds& out, int n, const std::vector<int>& dims, std::uint64_t base, std::uint64_t bytes,
                    bool reduce, bool gather, int lanes) {
    const int k = static_cast<int>(dims.size());
    std::vector<int> stride(static_cast<size_t>(k), 1);
    for (int j = 1; j < k; ++j) stride[j] = stride[j - 1] * dims[j - 1];
    auto coord = [&](int r, int j) { return (r / stride[j]) % dims[j]; };
    // Each lane's region per rank after the reduce-scatter of dimensions < j: reg[j][lane][rank].
    std::vector<std::vector<std::vector<region>>> reg(static_cast<size_t>(k) + 1);
    reg[0].resize(static_cast<size_t>(lanes));
    for (int l = 0; l < lanes; ++l) {
        const std::uint64_t lo = cut(bytes, l, lanes), hi = cut(bytes, l + 1, lanes);
        reg[0][l].assign(static_cast<size_t>(n), region{base + lo, hi - lo});
    }
    for (int j = 0; j < k; ++j) {
        reg[j + 1] = reg[j];
        for (int l = 0; l < lanes; ++l)
            for (int r = 0; r < n; ++r) {
                const region& g = reg[j][l][r];
                const int m = dims[j], x = coord(r, j);
                const std::uint64_t lo = cut(g.size, x, m), hi = cut(g.size, x + 1, m);
                reg[j + 1][l][r] = region{g.off + lo, hi - lo};
            }
    }
    size_t round = out.size();
    // One ring phase along dimension j: reduce-scatter (each member ends owning piece x_j of the region it had)
    // or all-gather (the reverse). Rings of one phase share its rounds.
    auto phase = [&](int j, bool rs) {
        const int m = dims[j];
        if (m < 2) return;
        for (int step = 0; step < m - 1; ++step) {
            auto& list = at_round(out, round + static_cast<size_t>(step))[round + static_cast<size_t>(step)];
            for (int r = 0; r < n; ++r) {
                const int x = coord(r, j);
                for (int l = 0; l < lanes; ++l) {
                    const int dir = l == 0 ? 1 : -1;
                    const int to = r + (((x + dir + m) % m) - x) * stride[j];
                    // Lane 0 (to x+1): reduce-scatter step s sends piece x-s-1, all-gather piece x-s; lane 1
                    // mirrors it (x+s+1, x+s).
                    const int p = rs ? (dir > 0 ? x - step - 1 : x + step + 1) : (dir > 0 ? x - step : x + step);
                    const int piece = ((p % m) + m) % m;
                    const region& g = reg[j][l][r];  // the region this dimension's ring works on
                    const std::uint64_t lo = cut(g.size, piece, m), hi = cut(g.size, piece + 1, m);
                    list.push_back(xfer{r, to, g.off + lo, g.off + lo, hi - lo});
                }
            }
        }
        round += static_cast<size_t>(m - 1);
    };
    if (reduce)
        for (int j = 0; j < k; ++j) phase(j, true);
    if (gather)
        for (int j = k - 1; j >= 0; --j) phase(j, false);
}

// Binomial tree over ranks relative to the root: reduce up (leaves first), then broadcast down.
void tree_schedule(rounds& out, int n, int root, std::uint64_t base, std::uint64_t bytes, bool reduce) {
    int levels = 0;
    while ((1 << levels) < n) ++levels;
    auto abs = [&](int v) { return (v + root) % n; };
    if (reduce)
        for (int j = 0; j < levels; ++j) {
            std::vector<xfer> list;
            for (int v = 0; v < n; ++v)
                if (v % (2 << j) == (1 << j)) list.push_back(xfer{abs(v), abs(v - (1 << j)), base, base, bytes});
            if (!list.empty()) out.push_back(std::move(list));
        }
    for (int j = levels - 1; j >= 0; --j) {
        std::vector<xfer> list;
        for (int v = 0; v < n; ++v)
            if (v % (2 << j) == 0 && v + (1 << j) < n)
                list.push_back(xfer{abs(v), abs(v + (1 << j)), base, base, bytes});
        if (!list.empty()) out.push_back(std::move(list));
    }
}

// The schedule of one slice [base, base + bytes).
rounds schedule_of(const collective_call& c, std::uint64_t base, std::uint64_t bytes) {
    const int n = static_cast<int>(c.ranks.size());
    const auto un = static_cast<std::uint64_t>(n);
    rounds out;
    if (n < 2) return out;
    const int lanes = c.bidirectional ? 2 : 1;
    const bool rs = c.kind == collective_kind::all_reduce || c.kind == collective_kind::reduce_scatter;
    const bool ag = c.kind == collective_kind::all_reduce || c.kind == collective_kind::all_gather;
    auto piece = [&](int p) { return std::pair{base + cut(bytes, p, un), cut(bytes, p + 1, un) - cut(bytes, p, un)}; };
    switch (c.algorithm) {
        case collective_algorithm::ring:
            if (c.kind == collective_kind::broadcast) {
                for (int v = 0; v + 1 < n; ++v)
                    out.push_back({xfer{(c.root + v) % n, (c.root + v + 1) % n, base, base, bytes}});
            } else {
                torus_schedule(out, n, {n}, base, bytes, rs, ag, lanes);
            }
            break;
        case collective_algorithm::torus:
        case collective_algorithm::hierarchical:
            torus_schedule(out, n, c.shape, base, bytes, rs, ag, lanes);
            break;
        case collective_algorithm::tree:
            tree_schedule(out, n, c.kind == collective_kind::broadcast ? c.root : 0, base, bytes,
                          c.kind == collective_kind::all_reduce);
            break;
        case collective_algorithm::direct:
            switch (c.kind) {
                case collective_kind::all_to_all: {
                    std::vector<xfer> list;
                    for (int r = 0; r < n; ++r)
                        for (int d = 1; d < n; ++d) {
                            const int j = (r + d) % n;
                            list.push_back(xfer{r, j, piece(j).first, piece(r).first, piece(j).second});
                        }
                    out.push_back(std::move(list));
                    break;
                }
                case collective_kind::all_reduce:
                case collective_kind::reduce_scatter:
                case collective_kind::all_gather: {
                    // Reduce-scatter: rank r sends piece j to rank j; all-gather: rank r sends its piece r to all.
                    if (rs) {
                        std::vector<xfer> list;
                        for (int r = 0; r < n; ++r)
                            for (int d = 1; d < n; ++d) {
                                const int j = (r + d) % n;
                                list.push_back(xfer{r, j, piece(j).first, piece(j).first, piece(j).second});
                            }
                        out.push_back(std::move(list));
                    }
                    if (ag) {
                        std::vector<xfer> list;
                        for (int r = 0; r < n; ++r)
                            for (int d = 1; d < n; ++d)
                                list.push_back(xfer{r, (r + d) % n, piece(r).first, piece(r).first, piece(r).second});
                        out.push_back(std::move(list));
                    }
                    break;
                }
                case collective_kind::broadcast: {
                    std::vector<xfer> list;
                    for (int d = 1; d < n; ++d) list.push_back(xfer{c.root, (c.root + d) % n, base, base, bytes});
                    out.push_back(std::move(list));
                    break;
                }
                case collective_kind::send_recv:
                    out.push_back({xfer{c.root, c.peer, base, base, bytes}});
                    break;
            }
            break;
        case collective_algorithm::in_network: {
            // Participant n + r is rank r's engine in the switch: contributions in, then results out.
            std::vector<xfer> in, back;
            for (int r = 0; r < n; ++r) {
                in.push_back(xfer{r, n + r, base, base, bytes});
                if (c.kind == collective_kind::all_reduce)
                    back.push_back(xfer{n + r, r, base, base, bytes});
                else
                    back.push_back(xfer{n + r, r, piece(r).first, piece(r).first, piece(r).second});
            }
            out.push_back(std::move(in));
            out.push_back(std::move(back));
            break;
        }
    }
    return out;
}

std::string algorithm_list(collective_kind k) {
    std::vector<std::string> names;
    for (auto a : algorithms_for(k)) names.push_back(name(a));
    return join(names);
}

void check(const collective_call& c) {
    const std::string what = std::string(name(c.kind)) + " (" + name(c.algorithm) + ")";
    const int n = static_cast<int>(c.ranks.size());
    if (n == 0) fail("collective " + what + " has no ranks: give each rank's buffer (a memory endpoint)");
    for (int r = 0; r < n; ++r)
        if (!c.ranks[r].valid()) fail("collective " + what + ": rank " + std::to_string(r) + " has no endpoint");
    const auto algos = algorithms_for(c.kind);
    if (std::find(algos.begin(), algos.end(), c.algorithm) == algos.end())
        fail("collective " + std::string(name(c.kind)) + " has no '" + name(c.algorithm) +
             "' algorithm; it has: " + algorithm_list(c.kind));
    const bool shaped = c.algorithm == collective_algorithm::torus || c.algorithm == collective_algorithm::hierarchical;
    if (!shaped && !c.shape.empty())
        fail("collective " + what + ": a shape is only for the torus and hierarchical algorithms");
    if (shaped) {
        if (c.shape.empty())
            fail("collective " + what + ": give a shape (" +
                 (c.algorithm == collective_algorithm::torus ? std::string("the grid extents, e.g. {4, 2}")
                                                             : std::string("{ranks per group, groups}")) +
                 ")");
        if (c.algorithm == collective_algorithm::hierarchical && c.shape.size() != 2)
            fail("collective " + what + ": the shape is {ranks per group, groups}, got " +
                 std::to_string(c.shape.size()) + " numbers");
        long long product = 1;
        std::string text;
        for (int d : c.shape) {
            if (d < 1) fail("collective " + what + ": shape extents must be positive, got " + std::to_string(d));
            product *= d;
            text += (text.empty() ? "" : " x ") + std::to_string(d);
        }
        if (product != n)
            fail("collective " + what + ": shape " + text + " has " + std::to_string(product) + " ranks, but " +
                 std::to_string(n) + " ranks were given");
    }
    if (c.kind == collective_kind::broadcast || c.kind == collective_kind::send_recv)
        if (c.root < 0 || c.root >= n)
            fail("collective " + what + ": root " + std::to_string(c.root) + " is out of range (ranks 0.." +
                 std::to_string(n - 1) + ")");
    if (c.kind == collective_kind::send_recv) {
        if (c.peer < 0 || c.peer >= n)
            fail("collective " + what + ": peer " + std::to_string(c.peer) + " is out of range (ranks 0.." +
                 std::to_string(n - 1) + ")");
        if (c.peer == c.root)
            fail("collective " + what + ": root and peer are the same rank " + std::to_string(c.root));
    }
    if (c.bidirectional && c.algorithm != collective_algorithm::ring && c.algorithm != collective_algorithm::torus &&
        c.algorithm != collective_algorithm::hierarchical)
        fail("collective " + what + ": bidirectional is for the ring, torus and hierarchical algorithms");
    if (c.bidirectional && c.kind == collective_kind::broadcast)
        fail("collective " + what + ": a ring broadcast is a chain and has one direction");
    const bool in_network = c.algorithm == collective_algorithm::in_network;
    if (in_network && static_cast<int>(c.engines.size()) != n)
        fail("collective " + what + ": give one switch engine per rank (" + std::to_string(c.engines.size()) +
             " engines for " + std::to_string(n) + " ranks)");
    if (!in_network && !c.engines.empty())
        fail("collective " + what + ": switch engines are only for the in_network algorithm");
    for (const endpoint& e : c.engines)
        if (!e.valid()) fail("collective " + what + ": a switch engine has no endpoint");
    if (!c.after.empty() && static_cast<int>(c.after.size()) != n)
        fail("collective " + what + ": 'after' has " + std::to_string(c.after.size()) + " lists for " +
             std::to_string(n) + " ranks (give one per rank, or none)");
    if (c.symmetric && (c.representative < 0 || c.representative >= n))
        fail("collective " + what + ": representative " + std::to_string(c.representative) +
             " is out of range (ranks 0.." + std::to_string(n - 1) + ")");
}

// A schedule's participants: the ranks, then (in_network) their engines, rank r's at n + r.
int participants(const collective_call& c) { return static_cast<int>(c.ranks.size() + c.engines.size()); }

// Who stands for participant x in a symmetric lowering: the representative rank, or its engine.
int representative_of(const collective_call& c, int x) {
    return x < static_cast<int>(c.ranks.size()) ? c.representative
                                                : static_cast<int>(c.ranks.size()) + c.representative;
}

// Symmetric lowering needs every rank to send the same bytes in every round.
void check_symmetric(const collective_call& c, const rounds& sched) {
    const int n = participants(c);
    const std::string what = std::string(name(c.kind)) + " (" + name(c.algorithm) + ")";
    for (size_t k = 0; k < sched.size(); ++k) {
        std::vector<std::vector<std::uint64_t>> sent(static_cast<size_t>(n));
        std::vector<int> received(static_cast<size_t>(n), 0);
        for (const xfer& x : sched[k]) {
            sent[x.from].push_back(x.bytes);
            ++received[x.to];
        }
        for (int r = 0; r < n; ++r)
            if (const int rep = representative_of(c, r); sent[r] != sent[rep] || received[r] != received[rep]) {
                auto text = [](const std::vector<std::uint64_t>& v) {
                    std::string s;
                    for (auto b : v) s += (s.empty() ? "" : ", ") + std::to_string(b);
                    return "{" + s + "}";
                };
                fail("collective " + what + " cannot be lowered symmetrically: in round " + std::to_string(k) +
                     " rank " + std::to_string(r) + " sends " + text(sent[r]) + " bytes and receives " +
                     std::to_string(received[r]) + " transfers, the representative rank " + std::to_string(rep) +
                     " sends " + text(sent[rep]) + " and receives " + std::to_string(received[rep]) +
                     " (ranks must play the same role: a byte count that splits evenly, an algorithm without a "
                     "root; or set symmetric off)");
            }
    }
}

// Dependencies once each (a symmetric lowering maps many received transfers to one of the representative's).
void dedupe(std::vector<std::uint32_t>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

const char* name(collective_kind k) {
    for (const auto& [e, n] : kind_names)
        if (e == k) return n;
    return "?";
}

const char* name(collective_algorithm a) {
    for (const auto& [e, n] : algorithm_names)
        if (e == a) return n;
    return "?";
}

collective_kind parse_collective_kind(const std::string& text) { return parse_name(kind_names, text, "collective"); }

collective_algorithm parse_collective_algorithm(const std::string& text) {
    return parse_name(algorithm_names, text, "collective algorithm");
}

bool has_root(collective_algorithm a) { return a == collective_algorithm::tree; }

std::vector<collective_algorithm> algorithms_for(collective_kind k) {
    using a = collective_algorithm;
    switch (k) {
        case collective_kind::all_reduce:
            return {a::ring, a::tree, a::torus, a::hierarchical, a::direct, a::in_network};
        case collective_kind::reduce_scatter:
            return {a::ring, a::torus, a::hierarchical, a::direct, a::in_network};
        case collective_kind::all_gather:
            return {a::ring, a::torus, a::hierarchical, a::direct};
        case collective_kind::all_to_all:
            return {a::direct};
        case collective_kind::broadcast:
            return {a::ring, a::tree, a::direct};
        case collective_kind::send_recv:
            return {a::direct};
    }
    return {};
}

double bus_bandwidth_factor(collective_kind k, int n) {
    if (n < 1) return 0;
    const double dn = n;
    switch (k) {
        case collective_kind::all_reduce:
            return 2 * (dn - 1) / dn;
        case collective_kind::reduce_scatter:
        case collective_kind::all_gather:
        case collective_kind::all_to_all:
            return (dn - 1) / dn;
        case collective_kind::broadcast:
        case collective_kind::send_recv:
            return 1;
    }
    return 1;
}

// A collective's schedule per slice, with what the lowering derives from it.
struct collective_schedules::plan {
    struct slice {
        rounds sched;
        // Position of each transfer among its sender's transfers of its round, and the representative's
        // transfers per round by position (what a transfer from another rank stands for, symmetrically).
        std::vector<std::vector<int>> pos;
        std::vector<std::vector<std::size_t>> rep_at;
        std::vector<int> first_send;  // per rank: its first round with a send (-1: none)
    };
    std::vector<slice> slices;
};

namespace {

/// Schedules a (padded) call, slice by slice.
collective_schedules::plan make_plan(const collective_call& c) {
    const int n = participants(c);
    const std::uint32_t slices = std::max<std::uint32_t>(1, c.chunks);
    collective_schedules::plan out;
    for (std::uint32_t s = 0; s < slices; ++s) {
        const std::uint64_t lo = cut(c.bytes, s, slices), hi = cut(c.bytes, s + 1, slices);
        collective_schedules::plan::slice sl;
        sl.sched = schedule_of(c, lo, hi - lo);
        if (c.symmetric && s == 0) check_symmetric(c, sl.sched);
        sl.pos.resize(sl.sched.size());
        sl.rep_at.resize(sl.sched.size());
        sl.first_send.assign(static_cast<size_t>(n), -1);
        for (size_t k = 0; k < sl.sched.size(); ++k) {
            std::vector<int> count(static_cast<size_t>(n), 0);
            for (size_t i = 0; i < sl.sched[k].size(); ++i) {
                const xfer& x = sl.sched[k][i];
                sl.pos[k].push_back(count[x.from]++);
                if (x.from == representative_of(c, x.from)) sl.rep_at[k].push_back(i);
                if (sl.first_send[x.from] < 0) sl.first_send[x.from] = static_cast<int>(k);
            }
        }
        out.slices.push_back(std::move(sl));
    }
    return out;
}

}  // namespace

struct collective_schedules::store {
    using key = std::tuple<int, int, int, std::vector<int>, std::uint64_t, std::uint32_t, bool, int, int, bool, int>;
    std::map<key, plan> plans;
};

collective_schedules::collective_schedules() : m(std::make_unique<store>()) {}
collective_schedules::~collective_schedules() = default;

const collective_schedules::plan& collective_schedules::of(const collective_call& c) {
    store::key k{static_cast<int>(c.kind),
                 static_cast<int>(c.algorithm),
                 static_cast<int>(c.ranks.size()),
                 c.shape,
                 c.bytes,
                 c.chunks,
                 c.bidirectional,
                 c.root,
                 c.peer,
                 c.symmetric,
                 c.representative};
    const auto it = m->plans.find(k);
    if (it != m->plans.end()) return it->second;
    return m->plans.emplace(std::move(k), make_plan(c)).first->second;
}

collective_steps lower_collective(program& p, const collective_call& call, collective_schedules* cache) {
    check(call);
    const int n = static_cast<int>(call.ranks.size());
    const std::uint32_t slices = std::max<std::uint32_t>(1, call.chunks);
    // Symmetric lowering needs equal pieces on every rank: the message is padded to a multiple of ranks x slices
    // x 2 lanes (a few bytes; a 340 MB gradient over 15 replicas would otherwise differ by one byte per piece).
    collective_call c = call;
    if (c.symmetric) {
        const std::uint64_t unit = static_cast<std::uint64_t>(n) * slices * 2;
        c.bytes = (c.bytes + unit - 1) / unit * unit;
    }
    collective_schedules::plan own;
    const collective_schedules::plan& planned = cache ? cache->of(c) : (own = make_plan(c));
    const int parts = participants(c);
    auto simulated = [&](int r) { return !c.symmetric || r == representative_of(c, r); };
    static const std::vector<std::uint32_t> none;
    auto after_of = [&](int r) -> const std::vector<std::uint32_t>& {
        return c.after.empty() || r >= n ? none : c.after[static_cast<size_t>(r)];
    };
    auto endpoint_of = [&](int x) {
        return x < n ? c.ranks[static_cast<size_t>(x)] : c.engines[static_cast<size_t>(x - n)];
    };
    // in_network: an engine sends the result once every rank's contribution is in (the round before).
    const bool after_whole_round = c.algorithm == collective_algorithm::in_network;

    collective_steps out;
    out.first = static_cast<std::uint32_t>(p.size());
    out.done.assign(static_cast<size_t>(n), ~0u);

    std::vector<std::vector<std::uint32_t>> prev_ids;  // the previous slice's step per transfer (round-major)
    std::vector<std::vector<std::uint32_t>> last_sends(static_cast<size_t>(parts));
    for (std::uint32_t s = 0; s < slices; ++s) {
        const rounds& sched = planned.slices[s].sched;
        const auto& pos = planned.slices[s].pos;
        const auto& rep_at = planned.slices[s].rep_at;
        const auto& first_send = planned.slices[s].first_send;
        std::vector<std::vector<std::uint32_t>> ids(sched.size());
        // A received transfer as a dependency: itself, or (symmetric, from another rank) the representative's
        // transfer in the same round and position.
        std::vector<std::vector<std::pair<std::size_t, std::size_t>>> recv(static_cast<size_t>(parts));
        auto dep_of = [&](std::size_t k, std::size_t i) {
            const xfer& x = sched[k][i];
            if (simulated(x.from)) return ids[k][i];
            return ids[k][rep_at[k][static_cast<size_t>(pos[k][i])]];
        };
        for (auto& l : last_sends) l.clear();
        for (size_t k = 0; k < sched.size(); ++k) {
            ids[k].assign(sched[k].size(), ~0u);
            std::vector<char> sent(static_cast<size_t>(parts), 0);
            for (size_t i = 0; i < sched[k].size(); ++i) {
                const xfer& x = sched[k][i];
                if (!simulated(x.from)) continue;
                std::vector<std::uint32_t> deps = last_sends[x.from];
                for (const auto& [rk, ri] : recv[x.from]) deps.push_back(dep_of(rk, ri));
                if (after_whole_round && k > 0)
                    for (size_t j = 0; j < sched[k - 1].size(); ++j) deps.push_back(dep_of(k - 1, j));
                if (s > 0) deps.push_back(prev_ids[k][i]);
                if (s == 0 && first_send[x.from] == static_cast<int>(k))
                    for (auto a : after_of(x.from)) deps.push_back(a);
                if (s == 0 && !c.symmetric && (first_send[x.to] < 0 || first_send[x.to] >= static_cast<int>(k)))
                    for (auto a : after_of(x.to)) deps.push_back(a);
                endpoint from = endpoint_of(x.from), to = endpoint_of(x.to);
                from.address += x.off_from;
                to.address += x.off_to;
                dedupe(deps);
                ids[k][i] = p.add_transfer(c.op, from, to, x.bytes, deps);
                ++out.transfers;
                sent[x.from] = 1;
            }
            // The round's senders have consumed what they had received; then this round's transfers arrive.
            for (int r = 0; r < parts; ++r)
                if (sent[r]) {
                    last_sends[r].clear();
                    recv[r].clear();
                }
            for (size_t i = 0; i < sched[k].size(); ++i) {
                const xfer& x = sched[k][i];
                if (simulated(x.from)) last_sends[x.from].push_back(ids[k][i]);
                if (simulated(x.to)) recv[x.to].push_back({k, i});
            }
        }
        if (s + 1 == slices) {
            for (int r = 0; r < n; ++r) {
                if (!simulated(r)) continue;
                std::vector<std::uint32_t> deps = last_sends[r];
                for (const auto& [rk, ri] : recv[r]) deps.push_back(dep_of(rk, ri));
                for (auto a : after_of(r)) deps.push_back(a);
                dedupe(deps);
                out.done[r] = p.add_delay(c.op, 0, deps);
            }
        }
        prev_ids = std::move(ids);
    }
    out.end = static_cast<std::uint32_t>(p.size());
    return out;
}

}  // namespace tessel
