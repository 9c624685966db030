// Placing a chip's program in a system program: its component ids moved from chip 0 (where the chip's mapper
// planned it) to the chip that runs it, and its ends (the steps nothing in it depends on), which the next piece
// (a pass, a microbatch) waits for.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "engine/netlist/platform.h"
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

/// For program::append: chip 0's component ids to chip `chip`'s (chips of a group are built alike).
inline std::function<std::uint32_t(std::uint32_t)> on_chip(const platform::chip_group& cg, int chip) {
    const std::uint32_t from = cg.first[0], to = cg.first[static_cast<size_t>(chip)], n = cg.components;
    return [from, to, n](std::uint32_t id) {
        if (id < from || id >= from + n) throw std::logic_error("a chip program uses a component outside its chip");
        return id - from + to;
    };
}

}  // namespace tessel
