// The fabric's load as the `wafer_pipeline` mapper plans it: routes over the mesh in stream coordinates (see
// wafer_common.h: lines run along the routes' last leg), and the bytes per chunk each link carries in a few windows
// of the planned run, so the plan can find the busiest link on the routes that feed an op.
#pragma once

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "engine/mappers/wafer_common.h"

namespace tessel::wafer {

/// A route over the fabric in stream coordinates: across the lines first (at the source's position), then along
/// the destination's line, as the mesh routes it (the lines run along its last leg).
struct route {
    int from_pos, from_cross, to_pos, to_cross;
};

/// The routes of a stream from (pos, cross) into line `l` of `r` (line_ends: one or two).
void routes_to_line(const fabric& f, int pos, int cross, const rect& r, int l, int len, std::vector<route>& out);

/// Bytes per chunk on every fabric link in each of a few windows of the planned run, from the flows of the ops at
/// work in that window (each op on one chunk); and the most loaded link of a route over a range of windows.
/// Links are indexed by the node they leave, one array per direction and window, rows padded by one so a
/// segment's difference never spills into the next row.
class link_load {
public:
    link_load(int npos, int ncross, int windows);
    int windows() const { return m_windows; }
    void add(const route& r, double bytes, int w0, int w1);
    /// Turns the differences into loads and keeps each block's maximum (call once, after every add).
    void settle();
    /// The most bytes per chunk any link of `r` carries in windows w0 .. w1.
    double most_on(const route& r, int w0, int w1) const;

private:
    static constexpr size_t block = 32;
    using arrays = std::array<std::vector<float>, 2>;  // [0]: towards higher coordinates, [1]: towards lower
    /// The links leaving nodes [a, b) of the row (b > a: direction 0), or (b, a] (b < a: direction 1).
    static std::pair<size_t, size_t> links(size_t base, int row, int n, int a, int b, int& dir);
    static void segment(arrays& set, size_t base, int row, int n, int a, int b, double bytes);
    static double most(const arrays& set, const arrays& blocks, size_t base, int row, int n, int a, int b);
    int m_npos, m_ncross, m_windows;
    size_t m_along_size = 0, m_across_size = 0;
    arrays m_along, m_across, m_along_blocks, m_across_blocks;
};

}  // namespace tessel::wafer
