// Energy, declared next to timing. A kind keeps one of these structs in its parameters under `energy:`: what
// each action it counts costs (a MAC by data type, a vector operation, a byte read, written or carried over a
// link) and what its units leak while powered. The kind charges the actions its usage() reports
// (resource_usage::dynamic_joules, static_watts); the run summary adds static power over the simulated time.
// Power a unit draws while busy beyond its actions (clock tree, issue, operand delivery) is `active`, charged over
// its busy time. Left out: voltage and frequency scaling, power capping, temperature, data-dependent switching (a
// MAC costs the same whatever its operands).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "models/core/dtype.h"
#include "models/core/param.h"

namespace tessel {

struct resource_usage;

/// Where a kind's default energies come from: the figures as YAML text plus the source, quoted in `describe`.
struct energy_defaults {
    std::string_view mac;       // {fp16: 0.4pJ, ...}: per MAC by data type
    std::string_view op;        // per vector (lane) operation; for a barrier, per synchronisation
    std::string_view read;      // per byte read
    std::string_view write;     // per byte written
    std::string_view transfer;  // per byte over one link
    std::string_view leakage;   // per unit
    std::string_view activate;  // per DRAM row activation
    std::string_view active;    // per unit while busy
    std::string_view node;  // the process node the figures are for; "" where they do not scale with it (DRAM, SerDes)
    std::string_view source;
};

/// Process nodes a kind's default energies scale to (`energy: {node: 16nm}`): logic, SRAM and wire energy per
/// operation scale as (node / 7 nm)^0.558, the fit through Horowitz's 45 nm and Jouppi's 7 nm fp32 multiply
/// (3.7 -> 1.31 pJ); 5 nm class (N5, 4N) is 7 nm x 0.7, TSMC N5's power at iso speed (Yeap et al., IEDM 2019).
/// Explicit values in the YAML are taken as given.
double node_scale(const std::string& node);
const std::vector<std::string>& energy_nodes();

/// A compute unit: MACs by data type and element operations.
struct compute_energy {
    std::string node;
    energy_table mac;
    energy op;
    power leakage;  // of one unit: a PE, a tile, a chip
    power active;   // of one unit while it is busy, beyond its actions (clocks, issue, operand delivery)
    void declare(param_decl& d, const energy_defaults& def);
    /// Joules for the MACs by data type and the element operations counted; a data type with MACs but no entry
    /// in `mac` is an input_error naming `who` (a silent zero would undercount).
    double joules(const std::array<double, dtype_count>& macs, double ops, std::string_view who) const;
    /// The same for one step's MACs of one type.
    double joules(dtype type, double macs, double ops, const char* who) const;
    /// Joules of `busy_seconds` of unit time at the active power.
    double busy_joules(double busy_seconds) const { return active.watts() * busy_seconds; }
};

/// A memory: bytes read and written.
struct memory_energy {
    std::string node;
    energy_per_byte read, write;
    power leakage;  // of one memory: a scratchpad, a DRAM device
    void declare(param_decl& d, const energy_defaults& def);
    double joules(double read_bytes, double write_bytes) const {
        return read_bytes * read.joules() + write_bytes * write.joules();
    }
    /// Joules of one access of `bytes`.
    double access(bool is_write, double bytes) const { return bytes * (is_write ? write : read).joules(); }
};

/// A DRAM: bytes read and written (column access and I/O) plus row activations (refresh is in the leakage).
struct dram_energy : memory_energy {
    energy activate;
    void declare(param_decl& d, const energy_defaults& def);
};

/// A network: bytes carried over each link (a packet crossing three links pays three times), wire and router.
struct link_energy {
    std::string node;
    energy_per_byte transfer;
    power leakage;  // of one link (one direction)
    void declare(param_decl& d, const energy_defaults& def);
};

/// A barrier: one synchronisation (its tree of wires and gates).
struct sync_energy {
    energy sync;
    power leakage;  // of the barrier network
    void declare(param_decl& d, const energy_defaults& def);
};

/// Declares `e` as the `energy:` group of a kind's parameters, with the kind's defaults.
template <class E>
void declare_energy(param_decl& d, E& e, const energy_defaults& def, std::string_view name = "energy",
                    std::string_view desc = "energy per action and static power (docs/energy.md)") {
    struct with_defaults {
        E& e;
        const energy_defaults& def;
        void declare(param_decl& c) { e.declare(c, def); }
    } g{e, def};
    d.group(g, name, desc);
}

/// Default energies of the generic kinds: Horowitz's 45 nm figures (ISSCC 2014, "Computing's energy problem"),
/// the textbook reference; vendor platforms declare their own node's figures.
namespace energy_45nm {
/// MACs: multiply plus add of the type (fp16 1.1 + 0.4 pJ, fp32 3.7 + 0.9, int8 0.2 + 0.03, int32 3.1 + 0.1);
/// bf16 and tf32 as fp16's multiplier (bf16's is smaller: an upper bound) with their accumulator (tf32: fp32 add);
/// fp8 and int4 as int8's multiplier with fp16's and int8's adder (no published 45 nm figure). Element operations
/// as one fp32 add. No leakage figure is given at 45 nm: 0 W unless a platform declares it.
inline constexpr energy_defaults compute{
    "{fp32: 4.6pJ, tf32: 2.0pJ, fp16: 1.5pJ, bf16: 1.5pJ, fp8: 0.6pJ, int8: 0.23pJ, int4: 0.23pJ, int32: 3.2pJ}",
    "0.9pJ",
    "",
    "",
    "",
    "0W",
    "",
    "0W",
    "45nm",
    "Horowitz, ISSCC 2014, 45 nm"};
/// A 64-bit read of a 32 KB SRAM: 20 pJ, 2.5 pJ per byte; writes taken as reads.
inline constexpr energy_defaults sram{"",   "", "2.5pJ/B", "2.5pJ/B", "",
                                      "0W", "", "",        "45nm",    "Horowitz, ISSCC 2014: 32 KB SRAM, 45 nm"};
/// A 64-bit DRAM access: 1.3-2.6 nJ, the low end (20 pJ/bit), activation included.
inline constexpr energy_defaults dram{"",   "",    "20pJ/bit", "20pJ/bit", "",
                                      "0W", "0pJ", "",         "",         "Horowitz, ISSCC 2014: DRAM, 45 nm"};
/// A link crossed on an on-chip network: Park et al.'s 45 nm 4x4 mesh chip (DAC 2012) delivered 892 Gb/s at
/// 531.4 mW, 0.6 pJ per bit with its routers; charged per link crossed (an upper bound per hop).
inline constexpr energy_defaults noc{
    "",   "", "", "",     "0.6pJ/bit",
    "0W", "", "", "45nm", "Park et al., DAC 2012: 45 nm 16-node mesh NoC, 531.4 mW at 892 Gb/s"};
}  // namespace energy_45nm

/// Default energies of the vendor kinds (GPU, TPU, IPU, RDU, wafer, TSP), all 7 nm class or newer: Jouppi et al.,
/// "Ten Lessons From Three Generations Shaped Google's TPUv4i" (ISCA 2021), Table 2, Horowitz's table at 7 nm.
/// Platforms of other nodes declare their own.
namespace energy_7nm {
/// MACs: bf16 multiply 0.21 pJ plus fp32 add 0.38 pJ; fp32 multiply 1.31 pJ plus add; int8 multiply 0.07 pJ plus
/// int32 add 0.03 pJ. fp16 and tf32 (11-bit significands), fp8 (4) and int4 scale the bf16 (8) or int8 multiplier
/// by the square of the significand width, int32 the int8 one; all accumulate as their hardware does (fp32, int32).
/// Element operations as one fp32 add. No leakage figure in the table: 0 W unless a platform declares it.
inline constexpr energy_defaults compute{
    "{fp32: 1.69pJ, tf32: 0.78pJ, fp16: 0.78pJ, bf16: 0.59pJ, fp8: 0.43pJ, int8: 0.1pJ, int4: 0.05pJ, int32: 1.15pJ}",
    "0.38pJ",
    "",
    "",
    "",
    "0W",
    "",
    "0W",
    "7nm",
    "Jouppi et al., ISCA 2021, Table 2: 7 nm"};
/// A 64-bit read of a 32 KB SRAM: 8.5 pJ; writes taken as reads.
inline constexpr energy_defaults sram{
    "", "", "1.06pJ/B", "1.06pJ/B", "", "0W", "", "", "7nm", "Jouppi et al., ISCA 2021, Table 2: 32 KB SRAM, 7 nm"};
/// A 64-bit read of a 1 MB SRAM: 14 pJ (large scratchpads and caches; a lower bound for larger arrays).
inline constexpr energy_defaults sram_mb{
    "", "", "1.75pJ/B", "1.75pJ/B", "", "0W", "", "", "7nm", "Jouppi et al., ISCA 2021, Table 2: 1 MB SRAM, 7 nm"};
/// A link crossed on an on-chip network: ground-referenced signalling, 170 fJ/bit/mm (Turner et al., CICC 2018),
/// over a 1 mm hop.
inline constexpr energy_defaults noc{"",   "", "", "",    "0.17pJ/bit",
                                     "0W", "", "", "7nm", "Turner et al., CICC 2018: 170 fJ/bit/mm, 1 mm hop"};
}  // namespace energy_7nm

/// An external memory appliance reached over the network (MemoryX): DRAM at 20 pJ/bit (Horowitz, ISSCC 2014)
/// plus a 5.6 pJ/bit SerDes hop (VLSI 2022).
inline constexpr energy_defaults memory_appliance{
    "", "", "25.6pJ/bit", "25.6pJ/bit", "", "0W", "", "", "", "Horowitz, ISSCC 2014 DRAM + 112G SerDes, VLSI 2022"};

/// A barrier network: no published energy per synchronisation; its gates and wires are left uncharged unless a
/// platform declares them (a sync moves a few bits, next to the megabytes a superstep exchanges).
inline constexpr energy_defaults barrier_network{"",   "0pJ", "", "", "",
                                                 "0W", "",    "", "", "not modelled by default (no published figure)"};

/// A chip-to-chip SerDes lane: a 112 Gb/s PAM4 long-reach transceiver with its DSP, 5.6 pJ/bit (VLSI 2022).
inline constexpr energy_defaults serdes_link{
    "",          "",
    "",          "",
    "5.6pJ/bit", "0W",
    "",          "",
    "",          "112 Gb/s PAM4 transceiver, 5 nm, VLSI 2022 (doi:10.1109/VLSITechnologyandCir46769.2022.9830304)"};

/// Adds a resource's energy to its usage: `dynamic` joules of counted actions and `static_watts` of leakage (the
/// summary charges it over the simulated time).
void charge(resource_usage& u, double dynamic, double static_watts);

}  // namespace tessel
