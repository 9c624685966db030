// Where a mapper placed an op on a 2D grid of units (tiles, PEs, PCUs): part of the mapping, drawn by the
// report's floorplans (engine/report/floorplan.h). Here, below both, so a mapper needs nothing from the report.
#pragma once

#include <string>

namespace tessel {

/// A labelled rectangle of units; why it exists: mappers record placements without knowing how they are drawn.
struct floorplan_region {
    std::string label;   // the op (or section) placed there
    int x0, y0, x1, y1;  // half-open rectangle in units
};

}  // namespace tessel
