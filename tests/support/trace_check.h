// A Perfetto trace's tracks never hold overlapping slices (the tracer splits a busy unit into lanes): checked on
// every trace the test suite writes.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessel::test {

/// Counts the complete slices ("X") of `trace` and fails the test for any two on one thread that overlap.
inline size_t expect_no_overlapping_slices(const nlohmann::json& trace, const std::string& what) {
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;
    size_t n = 0;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const double ts = e["ts"].get<double>();
        spans[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back({ts, ts + e["dur"].get<double>()});
        ++n;
    }
    for (auto& [thread, v] : spans) {
        std::sort(v.begin(), v.end());
        for (size_t i = 1; i < v.size(); ++i)
            if (v[i - 1].second > v[i].first + 1e-9) {  // microseconds, printed exact to the femtosecond
                ADD_FAILURE() << what << ": pid " << thread.first << " tid " << thread.second
                              << " has overlapping slices [" << v[i - 1].first << ", " << v[i - 1].second << ") and ["
                              << v[i].first << ", " << v[i].second << ")";
                return n;
            }
    }
    return n;
}

}  // namespace tessel::test
