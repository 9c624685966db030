// Programs written by hand (course exercises, microbenchmarks): a YAML list of steps bound to platform
// resources by path, with ids and dependencies. `for:` repeats a step over index ranges with {expr}
// substitution; expressions see the loop variables, the program's `parameters:` and the platform's parameters. A
// `traffic:` block adds synthetic network traffic (engine/program/traffic.h). Loading is linear in the number of steps.
// See docs/program-yaml.md.
#pragma once

#include <string>

#include "engine/netlist/platform.h"
#include "engine/program/program.h"
#include "engine/program/program_emit.h"

namespace tessel {

/// Loads a program; paths resolve against `plat`. Unknown ids, keys, units and paths are input_errors with
/// file:line:column. The program's own `parameters:` take `--set program.NAME=VALUE` overrides from `ctx`
/// (marked used, and recorded in the resolved configuration) when it is given.
program load_program(const std::string& path, const platform& plat, param_context* ctx = nullptr);
/// The same from a file's text (`name` stands for the file in messages): an emitted program's tables are read
/// by the line reader without going through the YAML parser (program_emit.h, split_emitted_tables).
program parse_program_text(std::string text, const std::string& name, const platform& plat,
                           param_context* ctx = nullptr);
program parse_program(const yaml_node& root, const platform& plat, param_context* ctx = nullptr,
                      emitted_tables* tables = nullptr);

/// The platform a program file names with `platform:` (a bundled name or a path), or "" when it names none:
/// `tessel run -g FILE` uses it when no --platform is given.
std::string program_platform(const std::string& path);

}  // namespace tessel
