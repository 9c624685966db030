#include "models/interconnect/routing/west_first.h"

namespace tessel {

int west_first_routing::next_direction(int x, int y, int dx, int dy) const {
    if (dx < x) return mesh_dir::west;   // every west hop first
    if (dy > y) return mesh_dir::north;  // then north or south
    if (dy < y) return mesh_dir::south;
    if (dx > x) return mesh_dir::east;  // east last: no turn ever goes into the west
    return mesh_dir::local;
}

TESSEL_REGISTER_POLICY(make_policy<west_first_routing>(
    "west_first",
    "Glass and Ni's west-first turn model, deterministic: all west hops first; otherwise north or "
    "south before east (no turn into the west: deadlock-free without virtual channels)"));

}  // namespace tessel
