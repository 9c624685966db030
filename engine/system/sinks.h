// The ends of a program piece: the steps nothing in it depends on, which the next piece of a system program
// waits for (a chip's pass, a microbatch).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/program/program.h"

namespace tessel {

inline std::vector<std::uint32_t> sinks_of(const program& p) {
    std::vector<char> used(p.size(), 0);
    for (std::uint32_t d : p.deps) used[d] = 1;
    std::vector<std::uint32_t> out;
    for (std::uint32_t s = 0; s < p.size(); ++s)
        if (!used[s]) out.push_back(s);
    return out;
}

}  // namespace tessel
