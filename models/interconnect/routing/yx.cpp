#include "models/interconnect/routing/yx.h"

namespace tessel {

int yx_routing::next_direction(int x, int y, int dx, int dy) const {
    if (dy > y) return mesh_dir::north;
    if (dy < y) return mesh_dir::south;
    if (dx > x) return mesh_dir::east;
    if (dx < x) return mesh_dir::west;
    return mesh_dir::local;
}

TESSEL_REGISTER_POLICY(make_policy<yx_routing>("yx", "dimension order: all of y first, then x"));

}  // namespace tessel
