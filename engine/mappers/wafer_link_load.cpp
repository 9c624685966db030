#include "engine/mappers/wafer_link_load.h"

#include <algorithm>

namespace tessel::wafer {

void routes_to_line(const fabric& f, int pos, int cross, const rect& r, int l, int len, std::vector<route>& out) {
    for (int end : line_ends(f, pos, r, len)) out.push_back(route{pos, cross, f.pos0(r) + end, f.cross0(r) + l});
}

link_load::link_load(int npos, int ncross, int windows) : m_npos(npos), m_ncross(ncross), m_windows(windows) {
    m_along_size = static_cast<size_t>(ncross) * (static_cast<size_t>(npos) + 1);
    m_across_size = static_cast<size_t>(npos) * (static_cast<size_t>(ncross) + 1);
    for (auto& a : m_along) a.assign(m_along_size * static_cast<size_t>(windows), 0.0f);
    for (auto& a : m_across) a.assign(m_across_size * static_cast<size_t>(windows), 0.0f);
}

void link_load::add(const route& r, double bytes, int w0, int w1) {
    for (int w = w0; w <= w1; ++w) {
        if (r.to_cross != r.from_cross)
            segment(m_across, m_across_size * static_cast<size_t>(w), r.from_pos, m_ncross, r.from_cross, r.to_cross,
                    bytes);
        if (r.to_pos != r.from_pos)
            segment(m_along, m_along_size * static_cast<size_t>(w), r.to_cross, m_npos, r.from_pos, r.to_pos, bytes);
    }
}

void link_load::settle() {
    for (auto* set : {&m_along, &m_across})
        for (int d = 0; d < 2; ++d) {
            auto& a = (*set)[static_cast<size_t>(d)];
            const size_t stride = set == &m_along ? static_cast<size_t>(m_npos) + 1 : static_cast<size_t>(m_ncross) + 1;
            for (size_t row = 0; row + stride <= a.size(); row += stride)
                for (size_t k = 1; k < stride; ++k) a[row + k] += a[row + k - 1];
            auto& b = (set == &m_along ? m_along_blocks : m_across_blocks)[static_cast<size_t>(d)];
            b.assign((a.size() + block - 1) / block, 0.0f);
            for (size_t k = 0; k < a.size(); ++k) b[k / block] = std::max(b[k / block], a[k]);
        }
}

double link_load::most_on(const route& r, int w0, int w1) const {
    double m = 0;
    for (int w = w0; w <= w1; ++w) {
        if (r.to_cross != r.from_cross)
            m = std::max(m, most(m_across, m_across_blocks, m_across_size * static_cast<size_t>(w), r.from_pos,
                                 m_ncross, r.from_cross, r.to_cross));
        if (r.to_pos != r.from_pos)
            m = std::max(m, most(m_along, m_along_blocks, m_along_size * static_cast<size_t>(w), r.to_cross, m_npos,
                                 r.from_pos, r.to_pos));
    }
    return m;
}

std::pair<size_t, size_t> link_load::links(size_t base, int row, int n, int a, int b, int& dir) {
    base += static_cast<size_t>(row) * (static_cast<size_t>(n) + 1);
    dir = b > a ? 0 : 1;
    return b > a ? std::pair{base + static_cast<size_t>(a), base + static_cast<size_t>(b)}
                 : std::pair{base + static_cast<size_t>(b) + 1, base + static_cast<size_t>(a) + 1};
}

void link_load::segment(arrays& set, size_t base, int row, int n, int a, int b, double bytes) {
    int dir;
    const auto [lo, hi] = links(base, row, n, a, b, dir);
    set[static_cast<size_t>(dir)][lo] += static_cast<float>(bytes);
    set[static_cast<size_t>(dir)][hi] -= static_cast<float>(bytes);
}

double link_load::most(const arrays& set, const arrays& blocks, size_t base, int row, int n, int a, int b) {
    int dir;
    const auto [lo, hi] = links(base, row, n, a, b, dir);
    const auto& v = set[static_cast<size_t>(dir)];
    const auto& bm = blocks[static_cast<size_t>(dir)];
    float m = 0;
    size_t k = lo;
    for (; k < hi && k % block; ++k) m = std::max(m, v[k]);
    for (; k + block <= hi; k += block) m = std::max(m, bm[k / block]);
    for (; k < hi; ++k) m = std::max(m, v[k]);
    return m;
}

}  // namespace tessel::wafer
