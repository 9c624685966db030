#include "models/interconnect/routing/xy.h"

namespace tessel {

int xy_routing::next_direction(int x, int y, int dx, int dy) const {
    if (dx > x) return mesh_dir::east;
    if (dx < x) return mesh_dir::west;
    if (dy > y) return mesh_dir::north;
    if (dy < y) return mesh_dir::south;
    return mesh_dir::local;
}

TESSEL_REGISTER_POLICY(make_policy<xy_routing>("xy", "dimension order: all of x first, then y"));

}  // namespace tessel
