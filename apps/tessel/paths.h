// Where tessel finds its bundled platforms and workloads: $TESSEL_HOME, else the source tree it was built from.
#pragma once

#include <string>
#include <vector>

namespace tessel {

std::string data_root();
/// A platform argument as given, or a bundled one by name ("mesh4x4", "teaching/mesh4x4", "rdu/sn10").
std::string find_platform(const std::string& arg);
/// Bundled platform files, relative to platforms/ and without .yaml.
std::vector<std::string> bundled_platforms();

}  // namespace tessel
