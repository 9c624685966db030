// `routing: {impl: west_first}`: Glass and Ni's west-first turn model (ISCA 1992), made deterministic. A packet
// whose destination lies west takes all of its west hops first, then north or south; any other packet goes north
// or south first, then east. No route ever turns into the west, so routes are deadlock-free on a mesh without
// virtual channels, and all are minimal. Westbound packets route as in xy, the others as in yx.
// Leaves out: the model's adaptivity (a choice among east, north and south by congestion); this picks y first.
#pragma once

#include "models/interconnect/routing/routing_policy.h"

namespace tessel {

class west_first_routing final : public routing_policy {
public:
    int next_direction(int x, int y, int dx, int dy) const override;
};

}  // namespace tessel
