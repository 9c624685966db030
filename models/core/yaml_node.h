// A YAML node that remembers the file it came from, so every error can say file:line:column.
// Strictness lives here too: check_keys() turns an unknown key into an error with a suggestion.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/core/error.h"

namespace tessel {

class yaml_node {
public:
    yaml_node() = default;
    yaml_node(YAML::Node node, std::shared_ptr<const std::string> file)
        : m_node(std::move(node)), m_file(std::move(file)) {}

    /// Loads a file; a missing file or a YAML syntax error is an input_error with its location.
    static yaml_node load_file(const std::string& path);
    /// A YAML file's text, read as load_file reads it (a regular file of bounded size; errors name the path).
    static std::string read_file(const std::string& path);
    /// Parses text; `name` stands in for the file name in messages.
    static yaml_node load_string(const std::string& text, const std::string& name);

    bool defined() const { return m_node.IsDefined() && !m_node.IsNull(); }
    bool is_map() const { return m_node.IsDefined() && m_node.IsMap(); }
    bool is_seq() const { return m_node.IsDefined() && m_node.IsSequence(); }
    bool is_scalar() const { return m_node.IsDefined() && m_node.IsScalar(); }
    source_location where() const;
    const std::string& file() const;

    /// Child by key; undefined (defined() == false) when absent.
    yaml_node operator[](std::string_view key) const;
    bool has(std::string_view key) const;
    /// Map entries in file order, with the key's own location.
    struct entry;
    std::vector<entry> entries() const;
    std::vector<yaml_node> items() const;
    size_t size() const { return m_node.IsDefined() ? m_node.size() : 0; }

    /// The scalar text; an error naming `what` if the node is a map or list.
    std::string scalar(std::string_view what) const;
    std::int64_t as_int(std::string_view what) const;
    double as_number(std::string_view what) const;
    bool as_bool(std::string_view what) const;

    void expect_map(std::string_view what) const;
    void expect_seq(std::string_view what) const;
    /// Every key must be one of `allowed`; `what` names the map in the message ("component 'noc'").
    void check_keys(std::initializer_list<std::string_view> allowed, std::string_view what) const;
    void check_keys(const std::vector<std::string>& allowed, std::string_view what) const;

    const YAML::Node& raw() const { return m_node; }
    std::shared_ptr<const std::string> file_ptr() const { return m_file; }

    [[noreturn]] void fail(const std::string& message) const;

private:
    YAML::Node m_node;
    std::shared_ptr<const std::string> m_file;
};

struct yaml_node::entry {
    std::string key;
    source_location key_where;
    yaml_node value;
};

/// " (did you mean 'x'?)" when some candidate is close to `word`, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);
/// "a, b, c"
std::string join(const std::vector<std::string>& words, std::string_view sep = ", ");

}  // namespace tessel
