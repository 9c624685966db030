// `routing: {impl: yx}`: dimension-order routing, all of y first, then all of x (the wafer platforms': data
// then stream along rows). Deadlock-free on a mesh without virtual channels (no turn from x back to y).
#pragma once

#include "models/interconnect/routing/routing_policy.h"

namespace tessel {

class yx_routing final : public routing_policy {
public:
    int next_direction(int x, int y, int dx, int dy) const override;
    int first_axis() const override { return 1; }
};

}  // namespace tessel
