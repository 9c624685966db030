#include "engine/mappers/toolkit/matmul_split.h"

#include <algorithm>
#include <set>

namespace tessel::toolkit {

std::string matmul_split::str() const {
    return std::to_string(batch) + "x" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

split_space::factors fixed(std::vector<int> v) {
    return [v = std::move(v)](const matmul_split&) { return v; };
}

void for_each_split(const split_space& space, const std::function<void(const matmul_split&)>& visit) {
    matmul_split s;
    for (int b : space.batch(s)) {
        s = matmul_split{b, 1, 1, 1};
        for (int m : space.m(s)) {
            s.m = m;
            s.n = s.k = 1;
            for (int n : space.n(s)) {
                s.n = n;
                s.k = 1;
                for (int k : space.k(s)) {
                    s.k = k;
                    visit(s);
                }
            }
        }
    }
}

std::vector<int> smooth_factors(std::int64_t d, int limit) {
    std::set<int> s;
    const std::int64_t top = std::min<std::int64_t>(d, limit);
    for (std::int64_t a = 1; a <= top; a *= 2)
        for (std::int64_t b = a; b <= top; b *= 3) s.insert(static_cast<int>(b));
    for (std::int64_t q = 1; q <= 8; ++q) {
        const std::int64_t v = (d + q - 1) / q;
        if (v <= top) s.insert(static_cast<int>(v));
    }
    if (top >= 1) s.insert(static_cast<int>(top));
    return {s.begin(), s.end()};
}

}  // namespace tessel::toolkit
