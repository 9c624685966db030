#include "engine/exec/latency.h"

#include <algorithm>
#include <cmath>

namespace tessel {

namespace {
constexpr tick sub_count = tick{1} << latency_histogram::sub_bits;

int top_bit(tick v) { return 63 - __builtin_clzll(v); }  // v > 0
}  // namespace

// Values below 2^sub_bits have a bucket each; above, each power of two [2^e, 2^(e+1)) is cut into sub_count
// equal buckets.
std::size_t latency_histogram::bucket_of(tick v) {
    if (v < sub_count) return static_cast<std::size_t>(v);
    const int e = top_bit(v);
    const int shift = e - sub_bits;
    return static_cast<std::size_t>((static_cast<tick>(shift + 1) << sub_bits) + ((v >> shift) - sub_count));
}

tick latency_histogram::bucket_value(std::size_t b) {
    if (b < sub_count) return static_cast<tick>(b);
    const int shift = static_cast<int>(b >> sub_bits) - 1;
    const tick low = (sub_count + (static_cast<tick>(b) & (sub_count - 1))) << shift;
    return low + ((tick{1} << shift) >> 1);
}

void latency_histogram::add(tick latency) {
    const std::size_t b = bucket_of(latency);
    if (b >= m_buckets.size()) m_buckets.resize(b + 1, 0);
    ++m_buckets[b];
    ++m_count;
    m_sum += static_cast<double>(latency);
    m_max = std::max(m_max, latency);
    m_min = std::min(m_min, latency);
}

tick latency_histogram::quantile_ticks(double q) const {
    if (m_count == 0) return 0;
    if (q <= 0) return m_min;
    if (q >= 1) return m_max;
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(m_count)));
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < m_buckets.size(); ++b) {
        seen += m_buckets[b];
        if (seen >= rank) return std::clamp(bucket_value(b), m_min, m_max);
    }
    return m_max;
}

}  // namespace tessel
