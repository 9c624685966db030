// Synthetic traffic: a program's `traffic:` block (docs/program-yaml.md) expanded into one transfer step per
// packet between the ports of one network, the way network studies drive a NoC (Dally & Towles ch. 3, BookSim).
//
// Algorithm: for every cycle c of the network's clock in [0, warmup + measure) and every node (port) n, in
// that order, the injection process decides whether n creates a packet at c (bernoulli: with probability
// rate / packet_flits, drawn per node and cycle; periodic: every packet_flits / rate cycles from a random
// phase per node). The pattern then gives the packet's destination. The packet becomes a transfer step from
// {network, unit n} to {network, unit dest}, with not_before = the tick of cycle c, no dependencies, and
// payload packet_flits * flit - header_bytes (the network adds the header back on the wire).
// Random numbers come from one std::mt19937_64 seeded with `seed` and our own uniform draws, so a seed gives
// the same program with any standard library.
//
// Leaves out: source queues (a packet that cannot be injected waits in the executor, not here), packets that
// span networks, closed-loop (request/reply) traffic, and traces replayed from files.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine/netlist/platform.h"
#include "engine/program/program.h"

namespace tessel {

enum class traffic_pattern { uniform, transpose, bit_complement, hotspot, neighbour, tornado };
enum class traffic_process { bernoulli, periodic };

/// Names as the YAML spells them, and the list for messages.
const char* traffic_pattern_name(traffic_pattern p);
const char* traffic_process_name(traffic_process p);

/// Where packets go: the pattern on a network of shape {w, h} (a ring or crossbar of n ports is {n, 1}).
/// Nodes are port indices, x fastest (index = x + w * y, as component::unit_at numbers them).
class traffic_destinations {
public:
    /// Checks that the pattern fits the shape; throws input_error (without a location) if not.
    traffic_destinations(traffic_pattern p, int w, int h, std::vector<std::uint32_t> hotspots = {},
                         double fraction = 0);

    std::uint32_t nodes() const { return m_n; }
    /// The fixed destination of `src` for the deterministic patterns (transpose, bit_complement, neighbour,
    /// tornado); `src` itself means the node sends nothing.
    std::uint32_t fixed(std::uint32_t src) const;
    bool random() const { return m_pattern == traffic_pattern::uniform || m_pattern == traffic_pattern::hotspot; }
    /// The destination of one packet from `src` (draws from `rng` for uniform and hotspot).
    std::uint32_t pick(std::uint32_t src, std::mt19937_64& rng) const;

private:
    traffic_pattern m_pattern;
    int m_w;
    std::uint32_t m_n;
    std::vector<std::uint32_t> m_hotspots;
    double m_fraction;
};

/// Uniform draws from a std::mt19937_64, identical on every standard library.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n);  // [0, n), n > 0, unbiased
double uniform_unit(std::mt19937_64& rng);                           // [0, 1), 53 bits

/// At most this many packets (steps) per traffic block; more is an error naming what to lower.
constexpr double max_traffic_packets = 50e6;

/// The text of a scalar with its {expr} replaced (the program loader's rules: platform parameters visible).
using traffic_text = std::function<std::string(const yaml_node&, const std::string& what)>;

/// Expands the `traffic:` block `block` into transfer steps appended to `prog` (op "traffic", labels
/// "n<node>.p<k>": the k-th packet of node <node>) and fills prog.traffic. Every error is an input_error
/// located at the offending value.
void expand_traffic(const yaml_node& block, const platform& plat, const traffic_text& text, program& prog);

}  // namespace tessel
