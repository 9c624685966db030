// `routing: {impl: xy}`: dimension-order routing, all of x first, then all of y. Deadlock-free on a mesh without
// virtual channels (no turn from y back to x).
#pragma once

#include "models/interconnect/routing/routing_policy.h"

namespace tessel {

class xy_routing final : public routing_policy {
public:
    int next_direction(int x, int y, int dx, int dy) const override;
    int first_axis() const override { return 0; }
};

}  // namespace tessel
