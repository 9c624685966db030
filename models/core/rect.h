// One rectangle type for everything laid out in two dimensions: a block of units on a grid (the wafer's PEs,
// a component's spans: `grid_rect`, whole numbers) and a region of a tensor's 2D view (`region`, fractions:
// x runs along the columns, the last axis; y along the rows, all axes before it). Half-open: [x0, x1) x [y0, y1).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace tessel {

template <class T>
struct basic_rect {
    T x0{}, y0{}, x1{}, y1{};

    T width() const { return x1 > x0 ? x1 - x0 : T{}; }
    T height() const { return y1 > y0 ? y1 - y0 : T{}; }
    /// Units covered (whole numbers, widened so a wafer's 750 x 994 does not overflow) or the share of a tensor.
    auto area() const {
        if constexpr (std::is_integral_v<T>)
            return static_cast<std::int64_t>(width()) * static_cast<std::int64_t>(height());
        else
            return height() * width();
    }
    bool empty() const { return !(x1 > x0 && y1 > y0); }
    bool contains(const basic_rect& o) const { return o.x0 >= x0 && o.x1 <= x1 && o.y0 >= y0 && o.y1 <= y1; }
};

/// The common part of two rectangles (empty when they do not overlap: area() is then 0).
template <class T>
basic_rect<T> intersect(const basic_rect<T>& a, const basic_rect<T>& b) {
    return basic_rect<T>{std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
}

using grid_rect = basic_rect<int>;
using region = basic_rect<double>;

/// A region of a tensor's 2D view from its row band [r0, r1) and column band [c0, c1), as fractions.
inline region rows_cols(double r0, double r1, double c0, double c1) { return region{c0, r0, c1, r1}; }

}  // namespace tessel
