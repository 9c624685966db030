// The YAML workload format (docs/workload-yaml.md): either an explicit graph (parameters, tensors, ops) or a
// generator with its parameters. Strict: an unknown key, an unknown tensor or op type, a shape that does not
// fit, or a cycle is an input_error with the file, line and column.
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <string>

#include "engine/workload/graph.h"
#include "engine/workload/source.h"

namespace tessel {

/// A workload file read and parsed once (a generator with the file's parameters, or an explicit graph); `spec`
/// is how the user named it (the path when empty). Syntax and structure errors come here; override errors at build.
std::shared_ptr<const workload_source> make_yaml_source(const std::string& path, const std::string& spec = {});
/// The same from text; `name` stands for the file name in messages.
std::shared_ptr<const workload_source> make_yaml_source_text(const std::string& text, const std::string& name);

/// Loads a workload file with `--set workload.KEY=VALUE` overrides (keys without the prefix) applied, and the
/// common options (training, fuse) carried out.
workload_graph load_workload_yaml(const std::string& path, const std::map<std::string, std::string>& overrides);
/// The same from text; `name` stands for the file name in messages.
workload_graph load_workload_yaml_text(const std::string& text, const std::string& name,
                                       const std::map<std::string, std::string>& overrides);

/// Writes `g` as an explicit YAML workload graph that load_workload_yaml reads back to the same graph
/// (every tensor with its shape, every op with its attributes). `comment` lines go first, as # comments.
void write_workload_yaml(const workload_graph& g, std::ostream& out, const std::string& comment = {});
/// `text` as YAML comment lines ("# " before each line).
std::string yaml_comment(const std::string& text);

}  // namespace tessel
