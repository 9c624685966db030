// Floorplans: a picture of a 2D grid of units (tiles, PEs, PCUs) coloured by how busy each was, with the
// regions a mapper placed each op on outlined and labelled. What an architect looks at to see a layout:
// which layer got which rectangle, where the hot spots and the idle units are.
// Written as SVG (small grids: one rectangle per unit, hover for values) or PNG (any size: one pixel or
// more per unit, no text), chosen by the file's extension.
#pragma once

#include <string>
#include <vector>

namespace tessel {

struct floorplan_region {
    std::string label;      // the op (or section) placed there
    int x0, y0, x1, y1;     // half-open rectangle in units
};

struct floorplan {
    std::string title;
    int width = 0, height = 0;
    std::vector<double> value;  // per unit (x fastest), 0..1: busy fraction
    std::vector<floorplan_region> regions;
};

/// Writes `fp` to `path` (.svg or .png); throws input_error for another extension or a write error.
void write_floorplan(const floorplan& fp, const std::string& path);

}  // namespace tessel
