// The executor's event queue: earliest time first, first in first out among events of one time (so the order
// of simultaneous events follows the order their causes happened).
//
// Events of one time share a slot: a list in push order. A large lock-step program has few distinct times and
// many events at each (the 64 x 64 mesh benchmark: about 120 per time), so the queue orders slots, not events.
// A push appends to its time's list, found through the slots the last pushes used or a small hash table (or
// made); a pop takes the next event of the current time's list. Pending slots are ordered by a binary heap of
// (time, slot) pairs: few slots are pending at once (at most 119 in the 1T GPT system run, whose 23 million
// events nearly all have times of their own), so a heap of a few cache lines beats moving slots between
// radix buckets.
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
    event_queue() { reset(0); }
    void reset(tick now) {
        if (m_slots.empty()) m_slots.emplace_back();
        m_heap.clear();
        for (std::uint32_t s = 0; s < m_slots.size(); ++s) m_slots[s].events.clear();
        m_free_slots.clear();
        for (std::uint32_t s = static_cast<std::uint32_t>(m_slots.size()); s-- > 0;) m_free_slots.push_back(s);
        m_table.assign(m_table.size(), entry{0, none});
        m_table_used = 0;
        m_current.clear();
        m_next = 0;
        m_cached = m_cached2 = 0;  // a free slot of time 0, which no push after `now` matches
        m_slots[0].time = 0;
        m_size = 0;
        m_last = now;
    }
    bool empty() const { return m_size == 0; }
    std::size_t size() const { return m_size; }

    void push(const Event& e) {
        if (e.time == m_last) {
            m_current.push_back(e);
            ++m_size;
            return;
        }
        // The slots the last two pushes used (a used-up slot's time is in the past, so it never matches), else
        // look it up.
        if (m_slots[m_cached].time != e.time) {
            const std::uint32_t other = m_cached;
            m_cached = m_slots[m_cached2].time == e.time ? m_cached2 : slot_for(e.time);
            m_cached2 = other;
        }
        m_slots[m_cached].events.push_back(e);
        ++m_size;
    }
    /// Time of the next event (the queue must not be empty). Looking does not move the queue on, so events
    /// may still be pushed at any time from the last popped one on.
    tick next_time() const {
        if (m_next < m_current.size()) return m_last;
        return m_heap.front().time;
    }
    /// Takes the next event into `e` if there is one at `t` or earlier.
    bool pop_until(tick t, Event& e) {
        if (m_next == m_current.size()) {
            if (m_heap.empty() || m_heap.front().time > t) return false;
            next_slot();
        } else if (m_last > t) {
            return false;
        }
        --m_size;
        e = m_current[m_next++];
        return true;
    }
    /// Takes the next event (the queue must not be empty).
    Event pop() {
        if (m_next == m_current.size()) next_slot();
        --m_size;
        return m_current[m_next++];
    }

private:
    static constexpr std::uint32_t none = ~0u;
    struct slot {
        tick time = 0;
        std::vector<Event> events;  // in push order (storage kept when the slot is reused)
    };
    struct entry {  // hash table: a pending slot's time and index (slot == none: empty)
        tick time;
        std::uint32_t slot;
    };

    /// The pending slot of time `t` (not the current time), made if there is none.
    __attribute__((noinline)) std::uint32_t slot_for(tick t) {
        if (t < m_last) throw std::logic_error("event_queue: an event was pushed into the past");
        const std::uint32_t s = find(t);
        return s != none ? s : new_slot(t);
    }
    std::size_t home(tick t) const {
        return static_cast<std::size_t>((t * 0x9E3779B97F4A7C15ull) >> 32) & (m_table.size() - 1);
    }
    std::uint32_t find(tick t) const {
        for (std::size_t i = home(t);; i = (i + 1) & (m_table.size() - 1)) {
            if (m_table[i].slot == none) return none;
            if (m_table[i].time == t) return m_table[i].slot;
        }
    }
    void insert(tick t, std::uint32_t s) {
        std::size_t i = home(t);
        while (m_table[i].slot != none) i = (i + 1) & (m_table.size() - 1);
        m_table[i] = entry{t, s};
    }
    void erase(tick t) {
        // Linear probing: close the gap by moving back every later entry of the run that may sit there.
        const std::size_t mask = m_table.size() - 1;
        std::size_t i = home(t);
        while (m_table[i].time != t || m_table[i].slot == none) i = (i + 1) & mask;
        for (std::size_t j = (i + 1) & mask; m_table[j].slot != none; j = (j + 1) & mask) {
            const std::size_t h = home(m_table[j].time);
            if (((j - h) & mask) >= ((j - i) & mask)) {  // its home is at or before i (cyclically)
                m_table[i] = m_table[j];
                i = j;
            }
        }
        m_table[i].slot = none;
        --m_table_used;
    }
    std::uint32_t new_slot(tick t) {
        std::uint32_t s;
        if (m_free_slots.empty()) {
            s = static_cast<std::uint32_t>(m_slots.size());
            m_slots.emplace_back();
        } else {
            s = m_free_slots.back();
            m_free_slots.pop_back();
        }
        m_slots[s].time = t;
        if (2 * (m_table_used + 1) > m_table.size()) grow();
        insert(t, s);
        ++m_table_used;
        place(s);
        return s;
    }
    void grow() {
        std::vector<entry> old(m_table.size() * 2, entry{0, none});
        old.swap(m_table);
        for (const entry& x : old)
            if (x.slot != none) insert(x.time, x.slot);
    }
    void place(std::uint32_t s) {
        // Sift up: a parent is earlier, or as early (one time has one pending slot, so ties do not occur).
        const entry x{m_slots[s].time, s};
        std::size_t i = m_heap.size();
        m_heap.push_back(x);
        while (i > 0) {
            const std::size_t up = (i - 1) / 2;
            if (m_heap[up].time <= x.time) break;
            m_heap[i] = m_heap[up];
            i = up;
        }
        m_heap[i] = x;
    }
    /// The earliest pending slot's events become the current list (the current one is used up).
    void next_slot() {
        const std::uint32_t s = m_heap.front().slot;
        m_last = m_heap.front().time;
        const entry x = m_heap.back();
        m_heap.pop_back();
        if (!m_heap.empty()) {  // sift the last entry down from the root
            const std::size_t n = m_heap.size();
            std::size_t i = 0;
            for (;;) {
                std::size_t c = 2 * i + 1;
                if (c >= n) break;
                if (c + 1 < n && m_heap[c + 1].time < m_heap[c].time) ++c;
                if (x.time <= m_heap[c].time) break;
                m_heap[i] = m_heap[c];
                i = c;
            }
            m_heap[i] = x;
        }
        m_current.clear();
        m_current.swap(m_slots[s].events);  // the slot keeps the old list's storage for its next use
        m_next = 0;
        erase(m_last);
        m_free_slots.push_back(s);  // keeps its time (now the past), so m_cached may still name it
    }

    std::vector<slot> m_slots;
    std::vector<std::uint32_t> m_free_slots;
    std::vector<entry> m_table = std::vector<entry>(64, entry{0, none});  // pending slots by time (linear probing)
    std::size_t m_table_used = 0;
    std::vector<entry> m_heap;                             // pending slots, earliest on top
    std::vector<Event> m_current;                          // the events of time m_last
    std::size_t m_next = 0;                                // the next of them to pop
    std::uint32_t m_cached = 0, m_cached2 = 0;  // the slots the last pushes went to (any slot: its time is checked)
    std::size_t m_size = 0;
    tick m_last = 0;  // time of the last event popped (the current list's time)
};

}  // namespace tessel
