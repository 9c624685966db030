// Errors tessel reports to its user. An input_error is the user's to fix (exit code 2): it names where
// (file:line:column when the input came from a file) and what was expected. Anything else is ours (exit 1).
#pragma once

#include <stdexcept>
#include <string>

namespace tessel {

/// A place in an input file; line and column are 1-based, 0 means unknown.
struct source_location {
    std::string file;
    int line = 0;
    int column = 0;

    bool known() const { return !file.empty(); }
    /// "file:line:column", "file" or "" depending on what is known.
    std::string str() const;
};

/// Bad input: a typo in YAML, a wrong unit, a missing file, a workload that cannot fit.
class input_error : public std::runtime_error {
public:
    explicit input_error(const std::string& message, source_location where = {});
    const source_location& where() const { return m_where; }
    /// The message alone, without the location prefix.
    const std::string& message() const { return m_message; }

private:
    source_location m_where;
    std::string m_message;
};

/// Throws an input_error; keeps call sites short.
[[noreturn]] void fail(const std::string& message, const source_location& where = {});

}  // namespace tessel
