// The executor's event queue against the rule it implements: earliest time first, and events of one time in
// the order they were pushed. Random pushes and pops (many events per time, pushes at the current time while
// it is being served, times far apart and close together) are checked against a plain reference.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "engine/exec/event_queue.h"

using namespace tessel;

namespace {

struct ev {
    tick time;
    std::uint32_t id;
};

// The reference: a map from time to the events of that time in push order.
struct reference {
    std::map<tick, std::vector<std::uint32_t>> by_time;
    std::size_t size = 0;
    void push(const ev& e) {
        by_time[e.time].push_back(e.id);
        ++size;
    }
    ev pop() {
        auto it = by_time.begin();
        const ev e{it->first, it->second.front()};
        it->second.erase(it->second.begin());
        if (it->second.empty()) by_time.erase(it);
        --size;
        return e;
    }
    tick next_time() const { return by_time.begin()->first; }
};

}  // namespace

TEST(event_queue, serves_time_order_and_push_order_within_a_time) {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 40; ++trial) {
        event_queue<ev> q;
        reference r;
        const tick start = trial % 3 == 0 ? 0 : rng() % 1000000;
        q.reset(start);
        tick now = start;
        std::uint32_t id = 0;
        // A few distinct offsets (lock-step programs share times), sometimes far ahead.
        const tick spread = trial % 2 == 0 ? 16 : tick{1} << 40;
        for (int op = 0; op < 20000; ++op) {
            if (r.size == 0 || rng() % 100 < 55) {
                const std::uint64_t kind = rng() % 10;
                const tick t = kind == 0 ? now : now + 1 + rng() % (kind < 8 ? 8 : spread);
                const ev e{t, id++};
                q.push(e);
                r.push(e);
            } else {
                ASSERT_EQ(q.next_time(), r.next_time());
                const ev a = q.pop(), b = r.pop();
                ASSERT_EQ(a.time, b.time) << "trial " << trial << " op " << op;
                ASSERT_EQ(a.id, b.id) << "trial " << trial << " op " << op;
                now = a.time;
            }
            ASSERT_EQ(q.size(), r.size);
        }
        // Drain with pop_until, one time at a time.
        while (r.size > 0) {
            const tick t = r.next_time();
            ev a{};
            ASSERT_FALSE(t > 0 && q.pop_until(t - 1, a));
            ASSERT_TRUE(q.pop_until(t, a));
            const ev b = r.pop();
            ASSERT_EQ(a.time, b.time);
            ASSERT_EQ(a.id, b.id);
        }
        ev a{};
        EXPECT_FALSE(q.pop_until(~tick{0}, a));
        EXPECT_TRUE(q.empty());
    }
}

TEST(event_queue, a_push_into_the_past_is_an_error_and_reset_starts_over) {
    event_queue<ev> q;
    q.reset(100);
    q.push({150, 1});
    q.push({120, 2});
    EXPECT_EQ(q.pop().id, 2u);
    EXPECT_THROW(q.push({110, 3}), std::logic_error);
    q.push({120, 4});  // the current time is fine
    EXPECT_EQ(q.pop().id, 4u);
    q.reset(10);
    EXPECT_TRUE(q.empty());
    q.push({150, 5});
    q.push({10, 6});
    EXPECT_EQ(q.pop().id, 6u);
    EXPECT_EQ(q.pop().id, 5u);
}
