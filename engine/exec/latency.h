// Packet latency statistics without keeping every packet: count, mean and max exactly, percentiles from a
// log-linear histogram (HdrHistogram's layout: 2^sub_bits buckets per power of two), so a percentile is within
// 2^-sub_bits (0.05%) of the true value while memory stays under 1 MiB for any number of packets.
#pragma once

#include <cstdint>
#include <vector>

#include "models/core/units.h"

namespace tessel {

class latency_histogram {
public:
    static constexpr int sub_bits = 11;

    void add(tick latency);
    std::uint64_t count() const { return m_count; }
    double mean_ticks() const { return m_count ? m_sum / static_cast<double>(m_count) : 0.0; }
    tick max_ticks() const { return m_max; }
    tick min_ticks() const { return m_count ? m_min : 0; }
    /// The smallest latency with at least `q` (0..1) of the packets at or below it (within the bucket width;
    /// exact at the ends: q = 0 gives the minimum, q = 1 the maximum).
    tick quantile_ticks(double q) const;

private:
    static std::size_t bucket_of(tick v);
    static tick bucket_value(std::size_t b);  // the middle of bucket b
    std::vector<std::uint64_t> m_buckets;
    std::uint64_t m_count = 0;
    double m_sum = 0;
    tick m_max = 0, m_min = ~tick{0};
};

}  // namespace tessel
