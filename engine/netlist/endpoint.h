// An endpoint names a place in a platform's netlist: what the netlist resolves a path ("tile[1,2].sram") to, and
// what a program's steps read, write and run on.
#pragma once

#include <cstdint>

namespace tessel {

/// A place a step reads, writes or runs on: a component, one of its units (-1: chosen by address), an address.
struct endpoint {
    std::uint32_t comp = ~0u;
    std::int32_t unit = 0;
    std::uint64_t address = 0;
    bool valid() const { return comp != ~0u; }
};

}  // namespace tessel
