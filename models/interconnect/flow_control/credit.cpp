#include "models/interconnect/flow_control/credit.h"

#include <cmath>

#include "models/core/component.h"
#include "models/core/limits.h"
#include "models/interconnect/flow_control/credit_flow.h"
#include "models/interconnect/mesh_noc.h"

namespace tessel {

void credit_flow_control::params::arbitration_params::declare(param_decl& d) {
    declare_policy(d, impl, policy, "round_robin",
                   "how each output's switch allocator picks among requesting input VCs (`tessel describe NAME`)");
}

void credit_flow_control::params::declare(param_decl& d) {
    d.group(arbitration, "arbitration", "switch arbitration policy");
}

namespace {

/// `t` as a whole number of the mesh's cycles; an input_error located at `name` (else `at`) otherwise.
std::uint64_t whole_cycles(const mesh_noc& noc, const component_args& a, const source_location& at,
                           const std::string& who, tick t, const char* name) {
    const double n = noc.clock().to_cycles(t);
    const double r = std::round(n);
    const tick whole = noc.clock().cycles(r);
    if ((t > whole ? t - whole : whole - t) > 1)  // within the rounding of a time to femtoseconds
        throw input_error(
            who + "flow_control 'credit' counts whole cycles, but " + name + " is " + format_number(n, 6) + " cycles",
            a.params[name].defined() ? a.params[name].where() : at);
    return static_cast<std::uint64_t>(r);
}

/// The flit: the link's bytes per cycle, a whole number of at least one.
std::uint64_t flit_bytes(const mesh_noc& noc, const component_args& a, const source_location& at,
                         const std::string& who) {
    const double per_cycle = noc.link_bytes_per_second() / noc.clock().hz;
    if (std::abs(per_cycle - std::round(per_cycle)) > 1e-6 || std::round(per_cycle) < 1)
        throw input_error(
            who + "flow_control 'credit' makes a flit of the link's bytes per cycle, but link_bandwidth is " +
                format_number(per_cycle, 6) + " B/cycle (not a whole number of bytes)",
            a.params["link_bandwidth"].defined() ? a.params["link_bandwidth"].where() : at);
    return static_cast<std::uint64_t>(std::round(per_cycle));
}

}  // namespace

std::unique_ptr<noc_flow_engine> credit_flow_control::make_engine(mesh_noc& noc, const component_args& a) const {
    const std::string who = "component '" + a.config_path + "' (mesh_noc): ";
    const yaml_node fc = a.params["flow_control"];
    const source_location at = fc.defined() ? fc.where() : a.where;
    const mesh_noc::params& m = noc.settings();
    const mesh_noc::flow_control_params& f = m.flow_control;
    if (m.representation != "arrays")
        throw input_error(who + "flow_control 'credit' is simulated on flat arrays only; use representation: arrays",
                          at);
    if (f.vcs > 8)
        throw input_error(who + "flow_control.vcs is " + std::to_string(f.vcs) + "; at most 8 are supported", at);
    // Every flit slot of every buffer is held in memory: bound them before they are allocated.
    try {
        require_units(static_cast<double>(m.width * m.height) * 5 * static_cast<double>(f.vcs) *
                          static_cast<double>(f.buffer_flits),
                      who + "credit buffers of " + std::to_string(f.buffer_flits) + " flits x " +
                          std::to_string(f.vcs) + " virtual channels x 5 ports x " +
                          std::to_string(m.width * m.height) + " routers");
    } catch (const input_error& e) {
        throw input_error(e.message(), at);
    }
    credit_flow::config c;
    c.width = static_cast<int>(m.width);
    c.height = static_cast<int>(m.height);
    c.vcs = static_cast<int>(f.vcs);
    c.buffer_flits = static_cast<int>(f.buffer_flits);
    c.cut_through = f.switching == "virtual_cut_through";
    c.cycle = noc.clock().cycles(1);
    c.router_cycles = whole_cycles(noc, a, at, who, noc.router_ticks(), "router_latency");
    c.link_cycles = whole_cycles(noc, a, at, who, noc.wire_ticks(), "link_latency");
    c.arbiter = m_arbiter.get();
    if (c.router_cycles + c.link_cycles == 0)
        throw input_error(who + "flow_control 'credit' needs router_latency + link_latency of at least one cycle", at);
    c.flit_bytes = flit_bytes(noc, a, at, who);
    const std::uint64_t packet_flits = (noc.packet_bytes() + noc.header_bytes() + c.flit_bytes - 1) / c.flit_bytes;
    if (c.cut_through && packet_flits > static_cast<std::uint64_t>(f.buffer_flits))
        throw input_error(who + "virtual cut-through needs a buffer that holds a whole packet: " +
                              std::to_string(packet_flits) + " flits of " + std::to_string(c.flit_bytes) +
                              " B, but buffer_flits is " + std::to_string(f.buffer_flits),
                          at);
    return std::make_unique<credit_flow>(noc, c);
}

TESSEL_REGISTER_POLICY(make_policy<credit_flow_control>(
    "credit", "finite input buffers, virtual channels and credit flow control, cycle by cycle (arrays only)"));

}  // namespace tessel
