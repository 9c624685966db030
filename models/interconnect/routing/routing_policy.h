// Routing on a 2D mesh, as a policy (models/core/policy.h): mesh_noc's `routing: {impl: NAME}` picks which
// output port a packet's head takes at each router. Each implementation is one file pair in this folder that
// registers itself; mesh_noc's two representations and its credit flow control all ask the same policy, so they
// route alike.
// A route here depends only on where the head is and where it goes (no congestion: the representations and flow
// control models must cross the same links), and it is minimal (mesh_noc::hops counts the Manhattan distance).
// Leaves out: adaptive routing, which would need the router's state passed in.
#pragma once

#include "models/core/policy.h"

namespace tessel {

/// A mesh router's output ports: the four neighbours (+x, -x, +y, -y) and the local (ejection) port, numbered
/// as the mesh keeps its links.
struct mesh_dir {
    enum : int { east = 0, west = 1, north = 2, south = 3, local = 4 };
};

class routing_policy {
public:
    using family = routing_policy;
    static constexpr const char* family_name = "routing";
    virtual ~routing_policy() = default;

    /// The output port at router (x, y) for a head bound for router (dx, dy): a step towards it along one axis,
    /// mesh_dir::local when there.
    virtual int next_direction(int x, int y, int dx, int dy) const = 0;
    /// For dimension-order routing, the axis every route crosses first (0: x, 1: y): the wafer mappers lay data
    /// along the last one. -1 for any other routing.
    virtual int first_axis() const { return -1; }
};

}  // namespace tessel
