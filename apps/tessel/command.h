// Subcommands of `tessel` register themselves: a cmd_*.cpp file defines how to set up its CLI11 subcommand and
// what to run. Exit codes: 0 success, 2 bad input (input_error), 1 internal error.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace tessel {

struct command {
    std::string name;
    int order = 50;  // position in `tessel --help`
    /// Adds the subcommand to `app` and returns it; `run` is called when it was chosen.
    std::function<CLI::App*(CLI::App& app)> setup;
    std::function<int()> run;
};

std::vector<command>& commands();
bool register_command(command c);

}  // namespace tessel

#define TESSEL_REGISTER_COMMAND(...)                                               \
    static const bool TESSEL_CMD_CONCAT(tessel_command_registered_, __COUNTER__) = \
        ::tessel::register_command(__VA_ARGS__)
#define TESSEL_CMD_CONCAT_(a, b) a##b
#define TESSEL_CMD_CONCAT(a, b) TESSEL_CMD_CONCAT_(a, b)
