#include "models/core/energy.h"

#include <cmath>
#include <regex>
#include <string>

#include "models/core/error.h"
#include "models/core/reservation.h"

namespace tessel {

const std::vector<std::string>& energy_nodes() {
    static const std::vector<std::string> nodes = {"45nm", "28nm", "16nm", "14nm", "12nm", "7nm", "5nm"};
    return nodes;
}

double node_scale(const std::string& node) {
    if (node == "5nm") return 0.7;
    const double nm = std::stod(node);  // "16nm" -> 16
    return std::pow(nm / 7.0, 0.558);
}

namespace {

std::string with_source(std::string_view what, const energy_defaults& def) {
    return std::string(what) + " (default: " + std::string(def.source) + ")";
}

/// Reads the `node` the figures are for (where they scale with it) and returns the factor from the defaults' node.
double read_node(param_decl& d, std::string& node, const energy_defaults& def) {
    if (def.node.empty()) return 1.0;
    d.choice(node, "node", def.node, energy_nodes(),
             "process node: the default energies below scale from " + std::string(def.node) +
                 " by (node / 7 nm)^0.558 (5nm: x0.7 of 7 nm); values given explicitly are taken as they are");
    if (d.describing() || node.empty()) return 1.0;
    return node_scale(node) / node_scale(std::string(def.node));
}

/// A default's text with every quantity multiplied by `f` ("{fp16: 0.78pJ}" x 2 -> "{fp16: 1.56pJ}").
std::string scaled(std::string_view text, double f) {
    if (f == 1.0 || text.empty()) return std::string(text);
    static const std::regex number(R"(([0-9]+(?:\.[0-9]+)?)([a-zA-Z]))");
    std::string out;
    auto it = std::cregex_iterator(text.data(), text.data() + text.size(), number);
    size_t last = 0;
    for (; it != std::cregex_iterator(); ++it) {
        const auto& m = *it;
        out.append(text.substr(last, static_cast<size_t>(m.position(0)) - last));
        out += format_number(std::stod(m.str(1)) * f, 4) + m.str(2);
        last = static_cast<size_t>(m.position(0) + m.length(0));
    }
    out.append(text.substr(last));
    return out;
}

}  // namespace

void compute_energy::declare(param_decl& d, const energy_defaults& def) {
    const double f = read_node(d, node, def);
    d(mac, "mac", scaled(def.mac, f), with_source("energy per multiply-accumulate, by data type", def));
    d(op, "op", scaled(def.op, f), with_source("energy per element operation on the vector lanes", def));
    d(leakage, "leakage", def.leakage,
      with_source("static power of one unit (a PE, a tile, a chip) while powered", def));
    d(active, "active", def.active,
      "power of one unit while it is busy, beyond the energy of its actions (clock tree, instruction issue, operand "
      "delivery), charged over its busy time (default 0 W: no per-technology figure; vendor platforms fit it to "
      "their published power, docs/energy.md)");
}

namespace {
[[noreturn]] void no_mac_entry(std::string_view who, dtype type, double macs) {
    throw input_error("component '" + std::string(who) + "' ran " + format_number(macs) + " " + dtype_name(type) +
                      " MACs but its energy.mac table has no " + dtype_name(type) +
                      " entry; declare one (energy: {mac: {" + dtype_name(type) + ": 0.5pJ, ...}})");
}
}  // namespace

double compute_energy::joules(dtype type, double macs, double ops, const char* who) const {
    const double j = ops * op.joules();
    if (macs <= 0) return j;
    const auto it = mac.by_type.find(type);
    if (it == mac.by_type.end()) no_mac_entry(who, type, macs);
    return j + macs * it->second;
}

double compute_energy::joules(const std::array<double, dtype_count>& macs, double ops, std::string_view who) const {
    // Called for every compute step: the name becomes a string only for the error.
    double j = ops * op.joules();
    for (int i = 0; i < dtype_count; ++i) {
        const double m = macs[static_cast<size_t>(i)];
        if (m <= 0) continue;
        const auto it = mac.by_type.find(static_cast<dtype>(i));
        if (it == mac.by_type.end()) no_mac_entry(who, static_cast<dtype>(i), m);
        j += m * it->second;
    }
    return j;
}

void memory_energy::declare(param_decl& d, const energy_defaults& def) {
    const double f = read_node(d, node, def);
    d(read, "read", scaled(def.read, f), with_source("energy per byte read", def));
    d(write, "write", scaled(def.write, f), with_source("energy per byte written", def));
    d(leakage, "leakage", def.leakage, with_source("static power of the whole memory while powered", def));
}

void dram_energy::declare(param_decl& d, const energy_defaults& def) {
    memory_energy::declare(d, def);
    d(activate, "activate", def.activate, with_source("energy per row activation (and its precharge)", def));
}

void sync_energy::declare(param_decl& d, const energy_defaults& def) {
    d(sync, "sync", def.op, with_source("energy per synchronisation", def));
    d(leakage, "leakage", def.leakage, with_source("static power of the barrier network while powered", def));
}

void link_energy::declare(param_decl& d, const energy_defaults& def) {
    const double f = read_node(d, node, def);
    d(transfer, "transfer", scaled(def.transfer, f),
      with_source("energy per byte carried over one link (wire and router)", def));
    d(leakage, "leakage", def.leakage, with_source("static power of one link (one direction) while powered", def));
}

void charge(resource_usage& u, double dynamic, double static_watts) {
    u.dynamic_joules += dynamic;
    u.static_watts += static_watts;
}

}  // namespace tessel
