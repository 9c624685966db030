// The executor's event queue: earliest time first, first in first out among events of one time (so the order
// of simultaneous events follows the order their causes happened). A monotone radix queue: no event is ever
// pushed earlier than the last one popped, which lets events sit in 65 buckets by the highest bit in which
// their time differs from the last popped time; a push is O(1) and each event moves down at most 64 buckets
// over its life, much cheaper than a binary heap for the hundreds of thousands of in-flight packet events a
// large mesh has.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "models/core/units.h"

namespace tessel {

template <class Event>  // Event has a `tick time` member
class event_queue {
public:
    void reset(tick now) {
        for (auto& b : m_buckets) b.clear();
        m_least.fill(~tick{0});
        m_full = 0;
        m_head = 0;
        m_size = 0;
        m_last = now;
    }
    bool empty() const { return m_size == 0; }
    std::size_t size() const { return m_size; }

    void push(const Event& e) {
        if (e.time < m_last) throw std::logic_error("event_queue: an event was pushed into the past");
        const std::size_t b = bucket(e.time);
        m_buckets[b].push_back(e);
        if (b > 0) {
            m_full |= std::uint64_t{1} << (b - 1);
            if (e.time < m_least[b]) m_least[b] = e.time;
        }
        ++m_size;
    }
    /// Time of the next event (the queue must not be empty). Looking does not move the queue on, so events
    /// may still be pushed at any time from the last popped one on.
    tick next_time() const {
        if (m_head < m_buckets[0].size()) return m_last;
        return m_least[static_cast<std::size_t>(__builtin_ctzll(m_full)) + 1];
    }
    /// Takes the next event (the queue must not be empty).
    Event pop() {
        if (m_head == m_buckets[0].size()) refill();
        --m_size;
        return m_buckets[0][m_head++];
    }

private:
    std::size_t bucket(tick t) const { return t == m_last ? 0 : static_cast<std::size_t>(64 - __builtin_clzll(t ^ m_last)); }
    void refill() {
        m_buckets[0].clear();
        m_head = 0;
        const std::size_t i = static_cast<std::size_t>(__builtin_ctzll(m_full)) + 1;
        m_last = m_least[i];
        m_full &= ~(std::uint64_t{1} << (i - 1));
        m_least[i] = ~tick{0};
        // In push order, so events of one time keep their order; every one lands in a lower bucket.
        std::vector<Event> from;
        from.swap(m_buckets[i]);
        for (const Event& e : from) {
            const std::size_t b = bucket(e.time);
            m_buckets[b].push_back(e);
            if (b > 0) {
                m_full |= std::uint64_t{1} << (b - 1);
                if (e.time < m_least[b]) m_least[b] = e.time;
            }
        }
        from.clear();
        from.swap(m_buckets[i]);  // keep the storage for the next events of that bucket
    }

    std::array<std::vector<Event>, 65> m_buckets;
    std::array<tick, 65> m_least{};  // earliest time in each bucket (buckets 1..64)
    std::uint64_t m_full = 0;        // bit b - 1: bucket b holds events
    std::size_t m_head = 0;          // next event of bucket 0
    std::size_t m_size = 0;
    tick m_last = 0;                 // time of the last event popped (bucket 0's time)
};

}  // namespace tessel
