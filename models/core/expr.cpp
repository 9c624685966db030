#include "models/core/expr.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "models/core/units.h"

namespace tessel {

struct expression::node {
    enum kind_t { number, string, variable, unary, binary, call } kind;
    double num = 0;
    std::string text;  // string literal, variable name, operator or function name
    std::vector<std::shared_ptr<const node>> args;
    size_t offset = 0;
};

namespace {

using node_ptr = std::shared_ptr<const expression::node>;

class parser {
public:
    explicit parser(std::string_view s) : m_s(s) {}

    node_ptr parse_all() {
        node_ptr n = parse_or();
        skip();
        if (m_pos < m_s.size()) throw expr_error("unexpected '" + std::string(1, m_s[m_pos]) + "'", m_pos);
        return n;
    }

private:
    std::string_view m_s;
    size_t m_pos = 0;

    void skip() {
        while (m_pos < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_pos]))) ++m_pos;
    }
    bool accept(std::string_view tok) {
        skip();
        if (m_s.substr(m_pos, tok.size()) != tok) return false;
        // Word operators must not be a prefix of an identifier ("order" is not "or").
        if (std::isalpha(static_cast<unsigned char>(tok[0])) && m_pos + tok.size() < m_s.size()) {
            const char next = m_s[m_pos + tok.size()];
            if (std::isalnum(static_cast<unsigned char>(next)) || next == '_') return false;
        }
        m_pos += tok.size();
        return true;
    }
    // Evaluating, printing and freeing a tree recurse over its height, and parsing over its nesting: both are
    // bounded so that no input can overflow the stack (a fuzzer found "((((..." 100,000 deep).
    static constexpr int k_max_height = 256, k_max_nesting = 3 * 256;
    std::unordered_map<const expression::node*, int> m_height;  // of every inner node made so far
    int m_nesting = 0;
    struct nest {
        parser& p;
        nest(parser& pp) : p(pp) {
            if (++p.m_nesting > k_max_nesting) throw expr_error("expression nested too deeply", p.m_pos);
        }
        ~nest() { --p.m_nesting; }
    };

    node_ptr make(expression::node::kind_t k, std::string text, std::vector<node_ptr> args, size_t off) {
        int h = 1;
        for (const auto& a : args) {
            const auto it = m_height.find(a.get());
            h = std::max(h, 1 + (it == m_height.end() ? 1 : it->second));
        }
        if (h > k_max_height)
            throw expr_error("expression too long: more than " + std::to_string(k_max_height) + " operations deep",
                             off);
        auto n = std::make_shared<expression::node>();
        n->kind = k;
        n->text = std::move(text);
        n->args = std::move(args);
        n->offset = off;
        m_height[n.get()] = h;
        return n;
    }

    node_ptr parse_or() {
        node_ptr l = parse_and();
        for (;;) {
            const size_t at = m_pos;
            if (accept("or") || accept("||"))
                l = make(expression::node::binary, "or", {l, parse_and()}, at);
            else
                return l;
        }
    }
    node_ptr parse_and() {
        node_ptr l = parse_not();
        for (;;) {
            const size_t at = m_pos;
            if (accept("and") || accept("&&"))
                l = make(expression::node::binary, "and", {l, parse_not()}, at);
            else
                return l;
        }
    }
    node_ptr parse_not() {
        const nest guard(*this);
        skip();
        const size_t at = m_pos;
        if (accept("not")) return make(expression::node::unary, "not", {parse_not()}, at);
        if (m_pos < m_s.size() && m_s[m_pos] == '!' && (m_pos + 1 >= m_s.size() || m_s[m_pos + 1] != '=')) {
            ++m_pos;
            return make(expression::node::unary, "not", {parse_not()}, at);
        }
        return parse_cmp();
    }
    node_ptr parse_cmp() {
        node_ptr l = parse_add();
        for (;;) {
            skip();
            const size_t at = m_pos;
            std::string op;
            for (const char* c : {"==", "!=", "<=", ">=", "<", ">"})
                if (accept(c)) {
                    op = c;
                    break;
                }
            if (op.empty()) return l;
            l = make(expression::node::binary, op, {l, parse_add()}, at);
        }
    }
    node_ptr parse_add() {
        node_ptr l = parse_mul();
        for (;;) {
            skip();
            const size_t at = m_pos;
            if (accept("+"))
                l = make(expression::node::binary, "+", {l, parse_mul()}, at);
            else if (accept("-"))
                l = make(expression::node::binary, "-", {l, parse_mul()}, at);
            else
                return l;
        }
    }
    node_ptr parse_mul() {
        node_ptr l = parse_unary();
        for (;;) {
            skip();
            const size_t at = m_pos;
            if (m_s.substr(m_pos, 2) == "**") return l;  // handled in parse_pow
            if (accept("//"))
                l = make(expression::node::binary, "//", {l, parse_unary()}, at);
            else if (accept("*"))
                l = make(expression::node::binary, "*", {l, parse_unary()}, at);
            else if (accept("/"))
                l = make(expression::node::binary, "/", {l, parse_unary()}, at);
            else if (accept("%"))
                l = make(expression::node::binary, "%", {l, parse_unary()}, at);
            else
                return l;
        }
    }
    node_ptr parse_unary() {
        const nest guard(*this);
        skip();
        const size_t at = m_pos;
        if (accept("-")) return make(expression::node::unary, "-", {parse_unary()}, at);
        if (accept("+")) return parse_unary();
        return parse_pow();
    }
    node_ptr parse_pow() {
        node_ptr base = parse_primary();
        skip();
        const size_t at = m_pos;
        if (accept("**")) return make(expression::node::binary, "**", {base, parse_unary()}, at);
        return base;
    }
    node_ptr parse_primary() {
        const nest guard(*this);
        skip();
        const size_t at = m_pos;
        if (m_pos >= m_s.size()) throw expr_error("expression ends where a value was expected", m_pos);
        const char c = m_s[m_pos];
        if (c == '(') {
            ++m_pos;
            node_ptr inner = parse_or();
            if (!accept(")")) throw expr_error("missing ')'", m_pos);
            return inner;
        }
        if (c == '"' || c == '\'') {
            const size_t close = m_s.find(c, m_pos + 1);
            if (close == std::string_view::npos) throw expr_error("unterminated string", m_pos);
            std::string lit(m_s.substr(m_pos + 1, close - m_pos - 1));
            m_pos = close + 1;
            return make(expression::node::string, lit, {}, at);
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            const std::string rest(m_s.substr(m_pos));
            char* end = nullptr;
            const double v = std::strtod(rest.c_str(), &end);
            if (end == rest.c_str()) throw expr_error("bad number", m_pos);
            m_pos += static_cast<size_t>(end - rest.c_str());
            auto n = std::make_shared<expression::node>();
            n->kind = expression::node::number;
            n->num = v;
            n->offset = at;
            // A unit right after a number ("48KiB", "2cycles", "32B/cycle") makes it a quantity in canonical
            // units. A unit starts with a letter and has a '/' only between letters, so "6/2" and "48KiB/2" divide.
            auto letter = [&](size_t i) { return i < m_s.size() && std::isalpha(static_cast<unsigned char>(m_s[i])); };
            size_t u = m_pos;
            while (letter(u) || (u > m_pos && m_s[u] == '/' && letter(u - 1) && letter(u + 1))) ++u;
            if (u > m_pos) {
                const std::string unit(m_s.substr(m_pos, u - m_pos));
                if (unit != "and" && unit != "or" && unit != "not") {
                    try {
                        n->num = parse_quantity(rest.substr(0, static_cast<size_t>(end - rest.c_str())) + unit).value;
                    } catch (const std::exception& e) {
                        throw expr_error(e.what(), m_pos);
                    }
                    m_pos = u;
                }
            }
            return n;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t e = m_pos;
            while (e < m_s.size() &&
                   (std::isalnum(static_cast<unsigned char>(m_s[e])) || m_s[e] == '_' || m_s[e] == '.'))
                ++e;
            std::string name(m_s.substr(m_pos, e - m_pos));
            m_pos = e;
            if (name == "true") return make_number(1, at);
            if (name == "false") return make_number(0, at);
            skip();
            if (m_pos < m_s.size() && m_s[m_pos] == '(') {
                ++m_pos;
                std::vector<node_ptr> args;
                if (!accept(")")) {
                    do args.push_back(parse_or());
                    while (accept(","));
                    if (!accept(")")) throw expr_error("missing ')' after arguments of " + name, m_pos);
                }
                check_function(name, args.size(), at);
                return make(expression::node::call, name, std::move(args), at);
            }
            return make(expression::node::variable, name, {}, at);
        }
        throw expr_error("unexpected '" + std::string(1, c) + "'", m_pos);
    }
    static node_ptr make_number(double v, size_t at) {
        auto n = std::make_shared<expression::node>();
        n->kind = expression::node::number;
        n->num = v;
        n->offset = at;
        return n;
    }
    static void check_function(const std::string& name, size_t n, size_t at) {
        struct fn {
            const char* name;
            size_t min, max;
        };
        static const fn fns[] = {{"min", 1, 64},  {"max", 1, 64}, {"abs", 1, 1},  {"ceil", 1, 1}, {"floor", 1, 1},
                                 {"round", 1, 1}, {"log2", 1, 1}, {"sqrt", 1, 1}, {"pow", 2, 2}};
        for (const auto& f : fns)
            if (name == f.name) {
                if (n < f.min || n > f.max) throw expr_error("wrong number of arguments to " + name, at);
                return;
            }
        throw expr_error("unknown function '" + name + "' (known: min, max, abs, ceil, floor, round, log2, sqrt, pow)",
                         at);
    }
};

double as_number(const expr_value& v, size_t at) {
    if (const double* d = std::get_if<double>(&v)) return *d;
    throw expr_error("expected a number, got the string \"" + std::get<std::string>(v) + "\"", at);
}

bool truthy(const expr_value& v) {
    if (const double* d = std::get_if<double>(&v)) return *d != 0;
    return !std::get<std::string>(v).empty();
}

expr_value eval_node(const expression::node& n, const expr_scope& scope) {
    using K = expression::node;
    switch (n.kind) {
        case K::number:
            return n.num;
        case K::string:
            return n.text;
        case K::variable: {
            std::optional<expr_value> v = scope ? scope(n.text) : std::nullopt;
            if (!v) throw expr_error("unknown variable '" + n.text + "'", n.offset);
            return *v;
        }
        case K::unary: {
            const expr_value a = eval_node(*n.args[0], scope);
            if (n.text == "not") return truthy(a) ? 0.0 : 1.0;
            return -as_number(a, n.offset);
        }
        case K::binary: {
            if (n.text == "and")
                return truthy(eval_node(*n.args[0], scope)) && truthy(eval_node(*n.args[1], scope)) ? 1.0 : 0.0;
            if (n.text == "or")
                return truthy(eval_node(*n.args[0], scope)) || truthy(eval_node(*n.args[1], scope)) ? 1.0 : 0.0;
            const expr_value a = eval_node(*n.args[0], scope), b = eval_node(*n.args[1], scope);
            if (n.text == "==" || n.text == "!=") {
                bool eq;
                if (a.index() != b.index())
                    eq = false;
                else if (a.index() == 0)
                    eq = std::get<double>(a) == std::get<double>(b);
                else
                    eq = std::get<std::string>(a) == std::get<std::string>(b);
                return (eq == (n.text == "==")) ? 1.0 : 0.0;
            }
            if (n.text == "+" && a.index() == 1 && b.index() == 1)
                return std::get<std::string>(a) + std::get<std::string>(b);
            const double x = as_number(a, n.args[0]->offset), y = as_number(b, n.args[1]->offset);
            if (n.text == "+") return x + y;
            if (n.text == "-") return x - y;
            if (n.text == "*") return x * y;
            if (n.text == "/") {
                if (y == 0) throw expr_error("division by zero", n.offset);
                return x / y;
            }
            if (n.text == "//") {
                if (y == 0) throw expr_error("division by zero", n.offset);
                return std::floor(x / y);
            }
            if (n.text == "%") {
                if (y == 0) throw expr_error("modulo by zero", n.offset);
                return x - y * std::floor(x / y);
            }
            if (n.text == "**") return std::pow(x, y);
            if (n.text == "<") return x < y ? 1.0 : 0.0;
            if (n.text == "<=") return x <= y ? 1.0 : 0.0;
            if (n.text == ">") return x > y ? 1.0 : 0.0;
            if (n.text == ">=") return x >= y ? 1.0 : 0.0;
            throw expr_error("unknown operator " + n.text, n.offset);
        }
        case K::call: {
            std::vector<double> v;
            for (const auto& a : n.args) v.push_back(as_number(eval_node(*a, scope), a->offset));
            const std::string& f = n.text;
            if (f == "min") {
                double r = v[0];
                for (double x : v) r = std::min(r, x);
                return r;
            }
            if (f == "max") {
                double r = v[0];
                for (double x : v) r = std::max(r, x);
                return r;
            }
            if (f == "abs") return std::fabs(v[0]);
            if (f == "ceil") return std::ceil(v[0]);
            if (f == "floor") return std::floor(v[0]);
            if (f == "round") return std::round(v[0]);
            if (f == "log2") return std::log2(v[0]);
            if (f == "sqrt") return std::sqrt(v[0]);
            if (f == "pow") return std::pow(v[0], v[1]);
            throw expr_error("unknown function " + f, n.offset);
        }
    }
    return 0.0;
}

void collect_vars(const expression::node& n, std::vector<std::string>& out) {
    if (n.kind == expression::node::variable) {
        for (const auto& s : out)
            if (s == n.text) return;
        out.push_back(n.text);
    }
    for (const auto& a : n.args) collect_vars(*a, out);
}

}  // namespace

expression expression::parse(std::string_view text) {
    expression e;
    e.m_text = std::string(text);
    parser p(e.m_text);
    e.m_root = p.parse_all();
    return e;
}

expr_value expression::eval(const expr_scope& scope) const { return eval_node(*m_root, scope); }
double expression::eval_number(const expr_scope& scope) const { return as_number(eval(scope), 0); }
bool expression::eval_bool(const expr_scope& scope) const { return truthy(eval(scope)); }

std::vector<std::string> expression::variables() const {
    std::vector<std::string> out;
    collect_vars(*m_root, out);
    return out;
}

std::string expr_value_str(const expr_value& v) {
    if (const double* d = std::get_if<double>(&v)) {
        if (std::floor(*d) == *d && std::fabs(*d) < 1e15) return std::to_string(static_cast<long long>(*d));
        return format_number(*d, 12);
    }
    return std::get<std::string>(v);
}

}  // namespace tessel
