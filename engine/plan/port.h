// The porting report (`tessel port MODEL -p PLATFORM`): what meeting a chip with a model looks like. Which of
// the model's op types tessel models on the platform and which run as memory traffic only, whether the chip runs
// the model's data type, whether its weights fit, where the simulated time goes, and what to change. It maps and
// simulates the model as `tessel run` does; a mapping that fails (a data type the chip lacks, weights that do
// not fit) is reported as the blocker with its message, not as an error.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace tessel {

struct port_options {
    std::string platform;           // path of the platform YAML
    std::string platform_arg;       // as the user named it
    std::string model;              // workload spec: .onnx, .yaml, .csv or a built-in name
    std::vector<std::string> sets;  // --set overrides (workload.NAME for the model's parameters)
};

/// Runs the analysis and prints the report; returns the number of blockers found (0: the model runs as it is).
int port_report(const port_options& o, std::ostream& os);

}  // namespace tessel
