#include "engine/program/traffic.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "models/interconnect/interconnect.h"

namespace tessel {

namespace {

const std::vector<std::string> pattern_names = {"uniform", "transpose", "bit_complement",
                                                "hotspot", "neighbour", "tornado"};
const std::vector<std::string> process_names = {"bernoulli", "periodic"};

std::string num(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

bool power_of_two(std::uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

const char* traffic_pattern_name(traffic_pattern p) { return pattern_names[static_cast<size_t>(p)].c_str(); }
const char* traffic_process_name(traffic_process p) { return process_names[static_cast<size_t>(p)].c_str(); }

std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
    // Rejection: accept r only in [2^64 mod n, 2^64), a whole number of copies of [0, n).
    const std::uint64_t threshold = (0 - n) % n;
    for (;;) {
        const std::uint64_t r = rng();
        if (r >= threshold) return r % n;
    }
}

double uniform_unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

traffic_destinations::traffic_destinations(traffic_pattern p, int w, int h, std::vector<std::uint32_t> hotspots,
                                           double fraction)
    : m_pattern(p),
      m_w(w),
      m_n(static_cast<std::uint32_t>(w) * static_cast<std::uint32_t>(h)),
      m_hotspots(std::move(hotspots)),
      m_fraction(fraction) {
    if (m_n < 2) throw input_error("synthetic traffic needs a network of at least 2 ports");
    if (p == traffic_pattern::transpose && (h == 1 || w != h))
        throw input_error("pattern transpose needs a square 2D network (k x k ports)");
    if (p == traffic_pattern::bit_complement && !power_of_two(m_n))
        throw input_error("pattern bit_complement needs a power-of-two number of ports");
}

std::uint32_t traffic_destinations::fixed(std::uint32_t src) const {
    const std::uint32_t w = static_cast<std::uint32_t>(m_w);
    const std::uint32_t x = src % w, y = src / w;
    switch (m_pattern) {
        case traffic_pattern::transpose:
            return y + w * x;
        case traffic_pattern::bit_complement:
            return ~src & (m_n - 1);
        case traffic_pattern::neighbour:
            return (x + 1) % w + w * y;
        case traffic_pattern::tornado:
            return (x + (w + 1) / 2 - 1) % w + w * y;
        case traffic_pattern::uniform:
        case traffic_pattern::hotspot:
            break;
    }
    return src;
}

std::uint32_t traffic_destinations::pick(std::uint32_t src, std::mt19937_64& rng) const {
    if (m_pattern == traffic_pattern::hotspot) {
        const bool hot = uniform_unit(rng) < m_fraction;
        std::uint64_t others = 0;
        for (std::uint32_t h : m_hotspots) others += h != src ? 1 : 0;
        if (hot && others > 0) {
            std::uint64_t j = uniform_below(rng, others);
            for (std::uint32_t h : m_hotspots)
                if (h != src && j-- == 0) return h;
        }
    } else if (m_pattern != traffic_pattern::uniform) {
        return fixed(src);
    }
    const std::uint32_t d = static_cast<std::uint32_t>(uniform_below(rng, m_n - 1));
    return d >= src ? d + 1 : d;
}

namespace {

/// Reads the block's values; every error carries the offending value's location.
struct traffic_reader {
    const traffic_text& text;

    quantity number(const yaml_node& n, const std::string& what) const {
        return parse_quantity(text(n, what), what, n.where());
    }

    /// A non-negative (or, with `positive`, a positive) length in cycles of `clk` or a time, as ticks.
    tick window(const yaml_node& n, const std::string& what, const clock_domain& clk, bool positive) const {
        const quantity q = number(n, what);
        const bool ok_dim =
            q.dim == dimension::cycles || q.dim == dimension::time || (q.dim == dimension::scalar && q.value == 0);
        if (!ok_dim)
            throw input_error(what + ": expected cycles of the network's clock (1000cycles) or a time (1us), got '" +
                                  text(n, what) + "'",
                              n.where());
        if (q.value < 0 || (positive && q.value == 0))
            throw input_error(
                what + ": the " +
                    (positive ? "measurement window must be longer than 0" : "warmup cannot be negative") + ", got '" +
                    text(n, what) + "'",
                n.where());
        return q.dim == dimension::cycles ? clk.cycles(q.value) : seconds_to_ticks(q.value);
    }

    /// A port coordinate or index: a whole number >= 0 (-1 when it is not one).
    int index(const yaml_node& n, const std::string& what, const std::string& t) const {
        quantity q;
        try {
            q = parse_quantity(t);
        } catch (const input_error& e) {
            throw input_error(what + ": '" + t + "' is not a number (" + e.message() + ")", n.where());
        }
        if (q.dim != dimension::scalar || std::floor(q.value) != q.value || q.value < 0 || q.value > 1e9) return -1;
        return static_cast<int>(q.value);
    }

    std::uint64_t whole(const yaml_node& n, const std::string& what, const std::string& t) const {
        const quantity q = parse_quantity(t, what, n.where());
        if (q.dim != dimension::scalar || q.value < 1 || std::floor(q.value) != q.value || q.value > 1e12)
            throw input_error(what + ": expected a positive whole number, got '" + t + "'", n.where());
        return static_cast<std::uint64_t>(q.value);
    }
};

/// Position of `value` in `names`; a located error naming the valid ones otherwise.
size_t index_of(const std::vector<std::string>& names, const std::string& value, const std::string& key,
                const std::string& what, const yaml_node& n) {
    const auto it = std::find(names.begin(), names.end(), value);
    if (it == names.end())
        throw input_error(key + ": unknown " + what + " '" + value + "'" + did_you_mean(value, names) +
                              "; expected one of: " + join(names),
                          n.where());
    return static_cast<size_t>(it - names.begin());
}

}  // namespace

namespace {

/// The network a traffic block crosses, and the shape of its ports.
struct traffic_network {
    std::string name;
    const interconnect* net = nullptr;
    std::vector<int> shape;
    int w = 0, h = 0;
    std::uint32_t n_nodes = 0;

    /// "W x H" (or "W"): the ports, for messages.
    std::string ports_text() const {
        return std::to_string(w) + (shape.size() == 2 ? " x " + std::to_string(h) : std::string());
    }
};

/// `network:`: one interconnect, not replicated, with 1D or 2D ports.
traffic_network find_network(const yaml_node& net_node, const platform& plat, const traffic_text& text) {
    traffic_network tn;
    const std::string net_name = text(net_node, "network");
    tn.name = net_name;
    std::vector<std::string> networks;
    for (const auto* g : plat.groups_with(component::role::interconnect)) networks.push_back(g->name);
    const std::string known =
        networks.empty() ? std::string("; this platform has no networks") : "; networks: " + join(networks);
    const platform::group* g = plat.find_group(net_name);
    if (!g)
        throw input_error("network: no component named '" + net_name + "'" + did_you_mean(net_name, networks) + known,
                          net_node.where());
    if (!plat.comp(g->ids.front()).has_role(component::role::interconnect))
        throw input_error("network: '" + net_name + "' is a " + g->kind + ", not a network" + known, net_node.where());
    if (g->ids.size() != 1)
        throw input_error("network: '" + net_name + "' is a replicated group of " + std::to_string(g->ids.size()) +
                              " networks; synthetic traffic crosses one",
                          net_node.where());
    tn.net = &plat.net(g->ids.front());
    tn.shape = tn.net->port_shape();
    if (tn.shape.empty() || tn.shape.size() > 2)
        throw input_error("network: '" + net_name + "' has ports of shape " + std::to_string(tn.shape.size()) +
                              "D; synthetic traffic needs a 1D or 2D network",
                          net_node.where());
    tn.w = tn.shape[0];
    tn.h = tn.shape.size() == 2 ? tn.shape[1] : 1;
    tn.n_nodes = static_cast<std::uint32_t>(tn.w) * static_cast<std::uint32_t>(tn.h);
    return tn;
}

/// `hotspot.nodes`: ports as "x,y" or an index.
std::vector<std::uint32_t> read_hotspot_nodes(const yaml_node& nodes, const traffic_network& tn,
                                              const traffic_reader& rd) {
    const traffic_text& text = rd.text;
    const interconnect& net = *tn.net;
    const std::vector<int>& shape = tn.shape;
    const std::uint32_t n_nodes = tn.n_nodes;
    std::vector<std::uint32_t> hotspots;
    for (const auto& item : nodes.items()) {
        const std::string t = text(item, "hotspot.nodes");
        std::vector<int> coords;
        std::stringstream ss(t);
        for (std::string part; std::getline(ss, part, ',');) coords.push_back(rd.index(item, "hotspot.nodes", part));
        int idx = -1;
        if (coords.size() == 1) {
            if (coords[0] < static_cast<int>(n_nodes)) idx = coords[0];
        } else if (coords.size() == shape.size()) {
            idx = net.unit_at(coords);
        }
        if (idx < 0) {
            throw input_error("hotspot.nodes: '" + t + "' is not a port of '" + tn.name + "' (" + tn.ports_text() +
                                  " ports: give " + (shape.size() == 2 ? "\"x,y\" or " : "") + "an index below " +
                                  std::to_string(n_nodes) + ")",
                              item.where());
        }
        hotspots.push_back(static_cast<std::uint32_t>(idx));
    }
    return hotspots;
}

/// `hotspot:` for pattern hotspot: its nodes and the fraction of packets sent to them.
void read_hotspot(const yaml_node& block, traffic_pattern pattern, const std::string& pat_name,
                  const yaml_node& pat_node, const traffic_network& tn, const traffic_reader& rd,
                  std::vector<std::uint32_t>& hotspots, double& fraction) {
    const traffic_text& text = rd.text;
    if (block.has("hotspot")) {
        const yaml_node hs = block["hotspot"];
        if (pattern != traffic_pattern::hotspot)
            throw input_error("hotspot: only for pattern: hotspot (this block's pattern is " + pat_name + ")",
                              hs.where());
        hs.expect_map("hotspot ({nodes: [\"x,y\", ...], fraction: 0.2})");
        hs.check_keys({"nodes", "fraction"}, "hotspot");
        for (const char* k : {"nodes", "fraction"})
            if (!hs.has(k)) throw input_error(std::string("hotspot needs '") + k + "'", hs.where());
        const yaml_node nodes = hs["nodes"];
        nodes.expect_seq("hotspot.nodes (a list of \"x,y\" or port indices)");
        if (nodes.size() == 0) throw input_error("hotspot.nodes: give at least one node", nodes.where());
        hotspots = read_hotspot_nodes(nodes, tn, rd);
        const quantity f = rd.number(hs["fraction"], "hotspot.fraction");
        if (f.dim != dimension::scalar || f.value < 0 || f.value > 1)
            throw input_error("hotspot.fraction: expected a fraction in [0, 1], got '" +
                                  text(hs["fraction"], "hotspot.fraction") + "'",
                              hs["fraction"].where());
        fraction = f.value;
    } else if (pattern == traffic_pattern::hotspot) {
        throw input_error("pattern hotspot needs 'hotspot: {nodes: [\"x,y\", ...], fraction: 0.2}'", pat_node.where());
    }
}

/// `flit:`, or the network's link width in bytes per cycle when it is a whole number.
std::uint64_t read_flit(const yaml_node& block, const traffic_network& tn, const traffic_reader& rd) {
    const traffic_text& text = rd.text;
    const interconnect& net = *tn.net;
    const clock_domain clk = net.clock();
    const std::string& net_name = tn.name;
    if (block.has("flit")) {
        const yaml_node f = block["flit"];
        const quantity q = rd.number(f, "flit");
        if (q.dim != dimension::size || q.value < 1 || std::floor(q.value) != q.value)
            throw input_error("flit: expected a whole number of bytes such as 16B, got '" + text(f, "flit") + "'",
                              f.where());
        return static_cast<std::uint64_t>(q.value);
    }
    const double per_cycle = net.link_bytes_per_second() / clk.hz;
    const double r = std::round(per_cycle);
    if (!(r >= 1) || std::fabs(per_cycle - r) > 1e-9 * r)
        throw input_error("traffic needs 'flit:' (e.g. flit: 16B): a link of '" + net_name + "' carries " +
                              num(per_cycle) + " B per cycle, not a whole number of bytes",
                          block.where());
    return static_cast<std::uint64_t>(r);
}

/// `packet:` in flits (4flits) or a size (64B), as a flit count.
std::uint64_t read_packet_flits(const yaml_node& pk, std::uint64_t flit, const traffic_reader& rd) {
    const traffic_text& text = rd.text;
    std::uint64_t flits = 0;
    std::string t = text(pk, "packet");
    while (!t.empty() && t.back() == ' ') t.pop_back();
    for (const char* suffix : {"flits", "flit"}) {
        const std::string sfx(suffix);
        if (t.size() > sfx.size() && t.compare(t.size() - sfx.size(), sfx.size(), sfx) == 0) {
            flits = rd.whole(pk, "packet", t.substr(0, t.size() - sfx.size()));
            break;
        }
    }
    if (flits == 0) {
        const quantity q = rd.number(pk, "packet");
        if (q.dim != dimension::size || !(q.value > 0))
            throw input_error("packet: expected flits (4flits) or a size (64B), got '" + t + "'", pk.where());
        flits = static_cast<std::uint64_t>(std::ceil(q.value / static_cast<double>(flit) - 1e-9));
    }
    return flits;
}

/// `seed:`, 1 when absent.
std::uint64_t read_seed(const yaml_node& block, const traffic_reader& rd) {
    const traffic_text& text = rd.text;
    if (!block.has("seed")) return 1;
    const yaml_node s = block["seed"];
    const quantity q = rd.number(s, "seed");
    if (q.dim != dimension::scalar || q.value < 0 || std::floor(q.value) != q.value || q.value >= 1.8e19)
        throw input_error("seed: expected a whole number >= 0, got '" + text(s, "seed") + "'", s.where());
    return static_cast<std::uint64_t>(q.value);
}

/// The packets, cycle by cycle, node by node: one transfer step each, after the program's steps.
void generate_packets(const traffic_spec& spec, const interconnect& net, const std::vector<std::uint32_t>& senders,
                      const traffic_destinations& dest, traffic_process process, std::uint64_t seed,
                      std::uint64_t payload, double expected, program& prog) {
    const clock_domain clk = net.clock();
    const double rate = spec.rate;
    const std::uint64_t flits = spec.packet_flits;
    const tick end = spec.measure_end;
    std::mt19937_64 rng(seed);
    const double p = rate / static_cast<double>(flits);  // packets per node per cycle
    const double period = 1.0 / p;
    std::vector<double> phase(senders.size(), 0);
    if (process == traffic_process::periodic)
        for (double& ph : phase) ph = uniform_unit(rng) * period;
    std::vector<std::uint64_t> count(senders.size(), 0);
    const std::uint32_t op = prog.intern_op("traffic");
    prog.step_labels.resize(prog.size());
    const size_t reserve = static_cast<size_t>(expected * 1.01 + 16);
    prog.steps.reserve(prog.steps.size() + reserve);
    prog.step_labels.reserve(prog.step_labels.size() + reserve);
    const std::vector<std::uint32_t> none;
    for (std::uint64_t c = 0;; ++c) {
        const tick at = clk.cycles(static_cast<double>(c));
        if (at >= end) break;
        for (size_t i = 0; i < senders.size(); ++i) {
            bool create;
            if (process == traffic_process::bernoulli) {
                create = uniform_unit(rng) < p;
            } else {
                create = std::floor(phase[i] + static_cast<double>(count[i]) * period) <= static_cast<double>(c);
            }
            if (!create) continue;
            const std::uint32_t src = senders[i];
            const std::uint32_t dst = dest.pick(src, rng);
            const std::uint32_t s =
                prog.add_transfer(op, endpoint{net.id(), static_cast<std::int32_t>(src), 0},
                                  endpoint{net.id(), static_cast<std::int32_t>(dst), 0}, payload, none);
            prog.steps[s].not_before = at;
            prog.step_labels.push_back("n" + std::to_string(src) + ".p" + std::to_string(count[i]));
            ++count[i];
        }
    }
}

}  // namespace

void expand_traffic(const yaml_node& block, const platform& plat, const traffic_text& text, program& prog) {
    block.expect_map("traffic");
    block.check_keys(
        {"network", "pattern", "rate", "packet", "flit", "process", "seed", "warmup", "measure", "hotspot"}, "traffic");
    for (const char* k : {"network", "pattern", "rate", "packet", "measure"})
        if (!block.has(k)) throw input_error(std::string("traffic needs '") + k + "'", block.where());
    const traffic_reader rd{text};

    // The network and its ports.
    const traffic_network tn = find_network(block["network"], plat, text);
    const std::string& net_name = tn.name;
    const interconnect& net = *tn.net;
    const int w = tn.w, h = tn.h;
    const std::uint32_t n_nodes = tn.n_nodes;
    const clock_domain clk = net.clock();

    // Pattern and hotspots.
    const yaml_node pat_node = block["pattern"];
    const std::string pat_name = text(pat_node, "pattern");
    const auto pattern =
        static_cast<traffic_pattern>(index_of(pattern_names, pat_name, "pattern", "pattern", pat_node));
    std::vector<std::uint32_t> hotspots;
    double fraction = 0;
    read_hotspot(block, pattern, pat_name, pat_node, tn, rd, hotspots, fraction);
    std::optional<traffic_destinations> dest;
    try {
        dest.emplace(pattern, w, h, hotspots, fraction);
    } catch (const input_error& e) {
        throw input_error("pattern: " + e.message() + "; '" + net_name + "' has " + tn.ports_text() + " ports",
                          pat_node.where());
    }

    // Load, packets, flits, process.
    const yaml_node rate_node = block["rate"];
    const quantity rq = rd.number(rate_node, "rate");
    if (rq.dim != dimension::scalar || !(rq.value > 0) || rq.value > 1)
        throw input_error("rate: the offered load is in flits per node per cycle, above 0 and at most 1; got '" +
                              text(rate_node, "rate") + "'",
                          rate_node.where());
    const double rate = rq.value;

    const std::uint64_t flit = read_flit(block, tn, rd);

    const yaml_node pk = block["packet"];
    const std::uint64_t flits = read_packet_flits(pk, flit, rd);
    const std::uint64_t header = net.header_bytes();
    if (flits * flit <= header)
        throw input_error("packet: " + std::to_string(flits) + " flit" + (flits == 1 ? "" : "s") + " of " +
                              std::to_string(flit) + " B leave no payload after the " + std::to_string(header) +
                              " B header of '" + net_name + "' (its header_bytes); make packets larger",
                          pk.where());
    const std::uint64_t payload = flits * flit - header;

    traffic_process process = traffic_process::bernoulli;
    if (block.has("process")) {
        const yaml_node pr = block["process"];
        process = static_cast<traffic_process>(
            index_of(process_names, text(pr, "process"), "process", "injection process", pr));
    }
    const std::uint64_t seed = read_seed(block, rd);

    // Window.
    const tick warmup = block.has("warmup") ? rd.window(block["warmup"], "warmup", clk, false) : 0;
    const tick measure = rd.window(block["measure"], "measure", clk, true);
    const tick end = warmup + measure;
    const tick cycle = clk.cycles(1);

    // Senders and the budget.
    std::vector<std::uint32_t> senders;
    for (std::uint32_t n = 0; n < n_nodes; ++n)
        if (dest->random() || dest->fixed(n) != n) senders.push_back(n);
    const double cycles = std::ceil(static_cast<double>(end) / static_cast<double>(cycle));
    const double expected = static_cast<double>(senders.size()) * cycles * rate / static_cast<double>(flits);
    if (expected > max_traffic_packets || static_cast<double>(senders.size()) * cycles > 4e9)
        throw input_error("traffic would create about " + num(expected) + " packets (" +
                              std::to_string(senders.size()) + " nodes x " + num(cycles) + " cycles x rate " +
                              num(rate) + " / " + std::to_string(flits) + " flits per packet), over the limit of " +
                              num(max_traffic_packets) + ": lower rate, warmup or measure, or make packets larger",
                          block.where());

    prog.traffic = traffic_spec{};
    prog.traffic.pattern = pat_name;
    prog.traffic.network = net.id();
    prog.traffic.nodes = static_cast<std::uint32_t>(senders.size());
    prog.traffic.rate = rate;
    prog.traffic.flit_bytes = flit;
    prog.traffic.packet_flits = flits;
    prog.traffic.cycle = cycle;
    prog.traffic.measure_begin = warmup;
    prog.traffic.measure_end = end;

    generate_packets(prog.traffic, net, senders, *dest, process, seed, payload, expected, prog);
}

}  // namespace tessel
