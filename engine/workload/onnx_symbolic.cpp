#include "engine/workload/onnx_symbolic.h"

#include <cctype>
#include <sstream>
#include <vector>

#include "engine/workload/yaml_workload.h"
#include "models/core/error.h"

namespace tessel {

namespace {

std::string yaml_of(const workload_graph& g) {
    std::ostringstream os;
    write_workload_yaml(g, os);
    return os.str();
}

// A YAML text cut at its runs of digits: text[0] number[0] text[1] ... number[n-1] text[n].
struct cut_text {
    std::vector<std::string> text, number;
};

cut_text cut_at_numbers(const std::string& s) {
    cut_text c;
    c.text.emplace_back();
    for (size_t i = 0; i < s.size();) {
        if (std::isdigit(static_cast<unsigned char>(s[i]))) {
            size_t j = i;
            while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
            c.number.push_back(s.substr(i, j - i));
            c.text.emplace_back();
            i = j;
        } else {
            c.text.back() += s[i++];
        }
    }
    return c;
}

// A size as c + a*s + b*q + m*s*q over the symbols s (and q).
struct size_form {
    long long c = 0, a = 0, b = 0, m = 0;
    long long at(long long s, long long q) const { return c + a * s + b * q + m * s * q; }
};

std::string term(long long k, const std::string& names) { return k == 1 ? names : std::to_string(k) + " * " + names; }

std::string size_expression(const size_form& f, const std::vector<std::string>& names) {
    std::vector<std::pair<long long, std::string>> terms = {{f.m, names.size() > 1 ? names[0] + " * " + names[1] : ""},
                                                            {f.a, names[0]},
                                                            {f.b, names.size() > 1 ? names[1] : ""}};
    std::string e;
    for (const auto& [k, n] : terms) {
        if (k == 0) continue;
        if (e.empty())
            e = k < 0 ? "-" + term(-k, n) : term(k, n);
        else
            e += (k < 0 ? " - " : " + ") + term(k < 0 ? -k : k, n);
    }
    if (f.c != 0)
        e += e.empty() ? std::to_string(f.c) : (f.c < 0 ? " - " : " + ") + std::to_string(f.c < 0 ? -f.c : f.c);
    return e;
}

bool plain_boundary(char before, char after) {
    return (before == ' ' || before == '[' || before == ',') &&
           (after == ',' || after == ']' || after == '}' || after == '\n');
}

}  // namespace

onnx_yaml onnx_workload_yaml(const std::string& model, const onnx_import_options& options,
                             const onnx_import_result& base) {
    onnx_yaml fixed{yaml_of(base.graph), ""};
    const auto& symbols = base.report.symbols;
    if (symbols.empty()) return fixed;
    if (symbols.size() > 2) {
        fixed.fixed_why = "it has " + std::to_string(symbols.size()) + " symbolic dimensions (tessel keeps up to two)";
        return fixed;
    }
    std::vector<std::string> names;
    std::vector<long long> start;
    for (const auto& [name, value] : symbols) {
        names.push_back(name);
        try {
            start.push_back(std::stoll(value));
        } catch (const std::exception&) {
            fixed.fixed_why = "symbol " + name + " = '" + value + "' is not a whole number";
            return fixed;
        }
    }
    // Offsets from the imported values: enough points to fit every coefficient, and one more to check the fit.
    const std::vector<std::pair<long long, long long>> offsets =
        names.size() == 1 ? std::vector<std::pair<long long, long long>>{{0, 0}, {1, 0}, {2, 0}}
                          : std::vector<std::pair<long long, long long>>{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 3}};
    std::vector<std::map<std::string, std::string>> values;
    std::vector<std::string> texts;
    std::vector<cut_text> cuts;
    for (const auto& [ds, dq] : offsets) {
        std::map<std::string, std::string> v = {{names[0], std::to_string(start[0] + ds)}};
        if (names.size() > 1) v[names[1]] = std::to_string(start[1] + dq);
        onnx_import_options o = options;
        for (const auto& [k, x] : v) o.overrides[k] = x;
        try {
            texts.push_back(values.empty() ? yaml_of(base.graph) : yaml_of(import_onnx(model, o).graph));
        } catch (const input_error& e) {
            fixed.fixed_why = std::string("it does not import at other sizes: ") + e.what();
            return fixed;
        }
        values.push_back(v);
        cuts.push_back(cut_at_numbers(texts.back()));
        if (cuts.back().text != cuts.front().text) {
            fixed.fixed_why = "its graph changes shape with " + names[0] + (names.size() > 1 ? " or " + names[1] : "");
            return fixed;
        }
    }
    const cut_text& first = cuts.front();
    const long long s0 = start[0], q0 = names.size() > 1 ? start[1] : 0;
    std::string text = first.text[0];
    for (size_t k = 0; k < first.number.size(); ++k) {
        bool varies = false;
        for (const auto& c : cuts) varies = varies || c.number[k] != first.number[k];
        if (!varies) {
            text += first.number[k] + first.text[k + 1];
            continue;
        }
        std::vector<long long> d;
        for (const auto& c : cuts) {
            if (c.number[k].size() > 15) {
                fixed.fixed_why = "a size " + c.number[k] + " is too large to fit";
                return fixed;
            }
            d.push_back(std::stoll(c.number[k]));
        }
        size_form f;
        if (names.size() == 1) {
            f.a = d[1] - d[0];
            f.c = d[0] - f.a * s0;
        } else {
            f.m = d[3] - d[1] - d[2] + d[0];
            f.a = d[1] - d[0] - f.m * q0;
            f.b = d[2] - d[0] - f.m * s0;
            f.c = d[0] - f.a * s0 - f.b * q0 - f.m * s0 * q0;
        }
        const auto& [ls, lq] = offsets.back();
        const std::string& before = first.text[k];
        const std::string& after = first.text[k + 1];
        if (f.at(s0 + ls, q0 + lq) != d.back() || before.empty() || after.empty() ||
            !plain_boundary(before.back(), after.front())) {
            fixed.fixed_why = "a size (" + first.number[k] + " at the imported values) does not follow " + names[0] +
                              (names.size() > 1 ? " and " + names[1] : "") + " linearly";
            return fixed;
        }
        text += size_expression(f, names) + after;
    }
    // The symbols become parameters, at the values the import used.
    const size_t at = text.find("\nparameters:\n");
    if (at == std::string::npos) throw std::logic_error("onnx_workload_yaml: the written workload has no parameters");
    std::string declared;
    for (size_t i = 0; i < names.size(); ++i) declared += "  " + names[i] + ": " + std::to_string(start[i]) + "\n";
    text.insert(at + 13, declared);
    // Read back at every value, it must give what the import gave there.
    for (size_t i = 0; i < texts.size(); ++i) {
        try {
            const std::string got = yaml_of(load_workload_yaml_text(text, model, values[i]));
            if (got != yaml_of(load_workload_yaml_text(texts[i], model, {}))) {
                fixed.fixed_why = "its sizes written as expressions did not read back to the import";
                return fixed;
            }
        } catch (const input_error& e) {
            fixed.fixed_why = std::string("its sizes written as expressions did not read back: ") + e.what();
            return fixed;
        }
    }
    return {text, ""};
}

}  // namespace tessel
