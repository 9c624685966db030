// The 4 x 4 mesh that the policy tests (routing, arbitration) time packets on by hand: 32 B/cycle links at 1 GHz,
// 2-cycle routers, 1-cycle links, 16 B headers, with one test's policy settings added.
#pragma once

#include <string>

namespace tessel::test {

/// A platform of one mesh_noc named `name`, with `extra` (e.g. "routing: {impl: xy}") beside its parameters.
inline std::string mesh4x4_platform(const std::string& name, const std::string& extra) {
    return "platform: " + name + "\nclock: 1GHz\ncomponents:\n  noc:\n    kind: mesh_noc\n    params: {" +
           "width: 4, height: 4, link_bandwidth: 32B/cycle, router_latency: 2cycles, link_latency: 1cycle, "
           "header_bytes: 16B, " +
           extra + "}\n";
}

}  // namespace tessel::test
