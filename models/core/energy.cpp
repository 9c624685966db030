#include "models/core/energy.h"

#include <string>

#include "models/core/error.h"
#include "models/core/reservation.h"

namespace tessel {

namespace {
std::string with_source(std::string_view what, const energy_defaults& def) {
    return std::string(what) + " (default: " + std::string(def.source) + ")";
}
}  // namespace

void compute_energy::declare(param_decl& d, const energy_defaults& def) {
    d(mac, "mac", def.mac, with_source("energy per multiply-accumulate, by data type", def));
    d(op, "op", def.op, with_source("energy per element operation on the vector lanes", def));
    d(leakage, "leakage", def.leakage, with_source("static power of one unit (a PE, a tile, a chip) while powered", def));
    d(active, "active", def.active,
      "power of one unit while it is busy, beyond the energy of its actions (clock tree, instruction issue, operand "
      "delivery), charged over its busy time (default 0 W: no per-technology figure; vendor platforms fit it to "
      "their published power, docs/energy.md)");
}

double compute_energy::joules(const std::array<double, dtype_count>& macs, double ops, const std::string& who) const {
    double j = ops * op.joules();
    for (int i = 0; i < dtype_count; ++i) {
        if (macs[i] <= 0) continue;
        const dtype t = static_cast<dtype>(i);
        if (!mac.has(t))
            throw input_error("component '" + who + "' ran " + format_number(macs[i]) + " " + dtype_name(t) +
                              " MACs but its energy.mac table has no " + dtype_name(t) + " entry; declare one (energy: {mac: {" +
                              dtype_name(t) + ": 0.5pJ, ...}})");
        j += macs[i] * mac.at(t);
    }
    return j;
}

void memory_energy::declare(param_decl& d, const energy_defaults& def) {
    d(read, "read", def.read, with_source("energy per byte read", def));
    d(write, "write", def.write, with_source("energy per byte written", def));
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
    d(transfer, "transfer", def.transfer, with_source("energy per byte carried over one link (wire and router)", def));
    d(leakage, "leakage", def.leakage, with_source("static power of one link (one direction) while powered", def));
}

void charge(resource_usage& u, double dynamic, double static_watts) {
    u.dynamic_joules += dynamic;
    u.static_watts += static_watts;
}

}  // namespace tessel
