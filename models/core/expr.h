// A small expression language for YAML values, connection indices, program loops and sweep filters:
// numbers, strings, variables, + - * / // % **, comparisons, and/or/not, parentheses and a few functions
// (min, max, abs, ceil, floor, round, log2, sqrt, pow). Parsed once, evaluated many times.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tessel {

/// A value: a number (booleans are 0/1) or a string.
using expr_value = std::variant<double, std::string>;

/// Resolves a variable name; returns nullopt when the name is unknown.
using expr_scope = std::function<std::optional<expr_value>(std::string_view)>;

class expression {
public:
    /// Parses `text`; throws expr_error with the column (0-based offset) of the problem.
    static expression parse(std::string_view text);

    expr_value eval(const expr_scope& scope) const;
    double eval_number(const expr_scope& scope) const;
    bool eval_bool(const expr_scope& scope) const;

    /// Names of the variables the expression reads, in order of first use.
    std::vector<std::string> variables() const;
    const std::string& text() const { return m_text; }

    struct node;

private:
    std::shared_ptr<const node> m_root;
    std::string m_text;
};

/// A parse or evaluation error; `offset` is the 0-based character position in the expression text.
struct expr_error : std::runtime_error {
    expr_error(const std::string& what, size_t at) : std::runtime_error(what), offset(at) {}
    size_t offset;
};

std::string expr_value_str(const expr_value& v);

}  // namespace tessel
