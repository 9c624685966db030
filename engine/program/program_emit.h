// Emitted programs: a program written out exactly as it will run (`tessel run ... --emit-program FILE.yaml`),
// so what a mapper decided can be read, edited and replayed with `tessel run -p SAME -g FILE.yaml` to the same
// simulated time and statistics. A mapped program can have millions of steps, so the steps, works and payloads
// are tables of one line each inside YAML block scalars (docs/program-yaml.md, "Emitted programs"), read by a
// line parser rather than node by node: numbers are written so they read back to the same bits (integers for
// ticks and bytes, 17 significant digits for work counts).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/netlist/platform.h"
#include "engine/program/program.h"

namespace tessel {

/// How a mapped run's summary weighs what its program did, kept with the program so a replay reports the same:
/// the samples one run processes, and on a symmetric system the chips a representative ran for (component id
/// ranges left idle) and the share of the system's traffic the simulated ranks carried.
struct emitted_scale {
    double samples = 0;
    double traffic_scale = 1;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> represented;
};

struct emit_header {
    std::string platform;  // what -p names (written as `platform:` so -g alone finds it)
    std::string command;   // the command that produced it, for the comment at the top
    emitted_scale scale;   // written as `scale:` in the emitted block
};

/// Writes `p` as program YAML with an `emitted:` block. Throws input_error for a program that cannot be
/// written this way (synthetic traffic: its own `traffic:` file is the replayable form).
void write_emitted_program(const program& p, const platform& plat, const emit_header& h, std::ostream& out);

/// An emitted program's tables (`emitted.works`, `steps`, `labels`, `payloads`, `placements`: literal blocks of
/// one line a row) cut out of the file's text before it is parsed as YAML, which would scan them character by
/// character (a 406 MB ResNet-50 program: 85 of its 91 s). Each body is blanked in the text, line breaks kept, so
/// every other line keeps its number and the YAML sees an empty block; the readers take the body from here.
struct emitted_tables {
    std::map<std::string, std::string> body;  // by key ("steps"), the block's lines with its indentation removed
};

/// Cuts the tables out of `text` (a program file): only a key two spaces inside a top-level `emitted:` whose value
/// is a plain literal block (`steps: |`); anything else is left to the YAML parser.
emitted_tables split_emitted_tables(std::string& text);

/// Reads an `emitted:` block into `prog` (name and `strict:` are read by the caller). Errors name the
/// file:line of the bad line. `tables`: the tables split_emitted_tables cut out of the file (taken from it).
void read_emitted_program(const yaml_node& emitted, const platform& plat, program& prog,
                          emitted_tables* tables = nullptr);

/// The `scale:` of an emitted block (the defaults where it has none: a program written before it existed).
emitted_scale read_emitted_scale(const yaml_node& emitted, const platform& plat);

}  // namespace tessel
