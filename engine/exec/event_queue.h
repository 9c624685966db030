// The executor's event queue: earliest time first, first in first out among events of one time (so the order
// of simultaneous events follows the order their causes happened).
//
// A radix heap. Simulated time never goes back, so an event is kept in the bucket named by the highest bit in
// which its time differs from the current time (bucket 0: the current time itself, popped in push order). When
// the current time's events are used up, the lowest non-empty bucket holds the next time: it becomes the
// current time and that bucket's events move to lower buckets, in their order. Every event of one time is
// always in one bucket (its bucket depends only on its time and the current time), in push order, so the queue
// pops exactly by (time, push order).
// Pushes are an append; an event moves down a few buckets before it is popped, each move a sequential copy.
// That suits both shapes of run: lock-step programs with a hundred events per instant (the 64 x 64 mesh
// benchmark) and runs whose events nearly all have times of their own (packets hop by hop over a large mesh:
// an SN40L decode step queues 87 million events, up to 8,250 distinct times pending), where the time-slot heap and hash
// table this replaced cost a third of the run.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "models/core/units.h"

namespace tessel {

template <class Event>  // Event has a `tick time` member
class event_queue {
public:
    event_queue() { reset(0); }
    void reset(tick now) {
        for (auto& b : m_bucket) b.clear();
        m_min.fill(never);
        m_nonempty = 0;
        m_current.clear();
        m_next = 0;
        m_size = 0;
        m_last = m_filed_time = now;
    }
    bool empty() const { return m_size == 0; }
    std::size_t size() const { return m_size; }

    void push(const Event& e) {
        if (e.time == m_last) {
            m_current.push_back(e);
        } else if (e.time == m_filed_time) {  // lock-step programs push runs of one time
            m_filed->push_back(e);
        } else {
            if (e.time < m_last) throw std::logic_error("event_queue: an event was pushed into the past");
            m_filed = &file(e.time);
            m_filed_time = e.time;
            m_filed->push_back(e);
        }
        ++m_size;
    }
    /// Time of the next event (the queue must not be empty). Looking does not move the queue on, so events
    /// may still be pushed at any time from the last popped one on.
    tick next_time() const {
        if (m_next < m_current.size()) return m_last;
        return m_min[lowest()];
    }
    /// Takes the next event into `e` if there is one at `t` or earlier.
    bool pop_until(tick t, Event& e) {
        if (m_next == m_current.size()) {
            if (m_nonempty == 0 || m_min[lowest()] > t) return false;
            next_time_becomes_current();
        } else if (m_last > t) {
            return false;
        }
        --m_size;
        e = m_current[m_next++];
        return true;
    }
    /// The event after the one just popped if it is of the same time, nullptr otherwise: a caller may start
    /// fetching what that event will touch.
    const Event* peek_same_time() const { return m_next < m_current.size() ? &m_current[m_next] : nullptr; }
    /// Takes the next event (the queue must not be empty).
    Event pop() {
        if (m_next == m_current.size()) next_time_becomes_current();
        --m_size;
        return m_current[m_next++];
    }

private:
    static constexpr tick never = std::numeric_limits<tick>::max();
    static constexpr std::size_t buckets = 65;  // 0: the current time; b: times whose highest differing bit is b - 1

    static std::size_t bucket_of(tick t, tick now) {
        return t == now ? 0 : static_cast<std::size_t>(64 - __builtin_clzll(t ^ now));
    }

    /// The lowest non-empty bucket (some must be).
    std::size_t lowest() const { return static_cast<std::size_t>(__builtin_ctzll(m_nonempty)) + 1; }

    /// The bucket of a time after the current one, marked as holding it.
    std::vector<Event>& file(tick t) {
        const std::size_t b = bucket_of(t, m_last);
        if (t < m_min[b]) m_min[b] = t;
        m_nonempty |= std::uint64_t{1} << (b - 1);
        return m_bucket[b];
    }

    /// The current time's events are used up: the earliest pending time becomes current. Its events all sit in
    /// the lowest non-empty bucket, with later ones that move to lower buckets (bucket indices only fall), in
    /// their order.
    void next_time_becomes_current() {
        const std::size_t b = lowest();
        m_last = m_min[b];
        m_current.clear();
        m_next = 0;
        m_filed_time = m_last;  // buckets are relative to the current time: forget the last push's
        std::vector<Event>& from = m_bucket[b];
        m_min[b] = never;
        m_nonempty &= ~(std::uint64_t{1} << (b - 1));
        tick run = m_last;  // events of one time come in runs: find their bucket once per run
        std::vector<Event>* to = &m_current;
        for (const Event& e : from) {
            if (e.time != run) {
                run = e.time;
                to = run == m_last ? &m_current : &file(run);
            }
            to->push_back(e);
        }
        from.clear();
    }

    std::array<std::vector<Event>, buckets> m_bucket;  // [0] unused: the current time's events are m_current
    std::array<tick, buckets> m_min{};                 // earliest time per bucket (never: empty)
    std::uint64_t m_nonempty = 0;                      // bit b - 1: bucket b holds events
    std::vector<Event> m_current;                      // the events of time m_last, in push order
    std::size_t m_next = 0;                            // the next of them to pop
    std::size_t m_size = 0;
    tick m_last = 0;                        // the current time: of the last event popped
    tick m_filed_time = 0;                  // the time of the last push filed into a bucket (m_last: none) ...
    std::vector<Event>* m_filed = nullptr;  // ... and its bucket
};

}  // namespace tessel
