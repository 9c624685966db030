// Floorplans: a picture of a 2D grid of units (tiles, PEs, PCUs) coloured by how busy each was, with the
// regions a mapper placed each op on outlined and labelled. What an architect looks at to see a layout:
// which layer got which rectangle, where the hot spots and the idle units are.
// Written as SVG (one rectangle per unit, hover for values; grids over 200 units a side drawn in blocks) or PNG
// (any size: one pixel or more per unit), chosen by the file's extension; both with a title, the op regions and
// a colour bar with its scale.
#pragma once

#include <string>
#include <vector>

#include "engine/mappers/region.h"

namespace tessel {

/// A link between neighbouring units, drawn as a bar in the gutter between them (its direction: which side of
/// the gutter), coloured like the units by how busy it was.
struct floorplan_link {
    enum direction {
        east,
        west,
        north,
        south
    };                 // towards x + 1, x - 1, y + 1, y - 1 (interconnect::link_bytes's order)
    int x = 0, y = 0;  // the unit it leaves
    direction dir = east;
    double value = 0;  // 0..1: busy fraction (bytes over what it could carry)
};

struct floorplan {
    std::string title;
    int width = 0, height = 0;
    std::vector<double> value;  // per unit (x fastest), 0..1: busy fraction
    std::vector<floorplan_region> regions;
    std::vector<floorplan_link> links;  // empty: units only
    /// Colours span the values' own range (least to most busy unit) instead of 0..100%: a run whose units are all
    /// 2-5% busy shows its pattern instead of one flat colour. The colour bar says which.
    bool relative = false;
};

/// Writes `fp` to `path` (.svg or .png); throws input_error for another extension or a write error.
void write_floorplan(const floorplan& fp, const std::string& path);

}  // namespace tessel
