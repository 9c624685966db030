#include "models/core/yaml_node.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "models/core/limits.h"
#include "models/core/units.h"

namespace tessel {

namespace {
source_location location_of(const YAML::Mark& m, const std::shared_ptr<const std::string>& file) {
    source_location loc;
    loc.file = file ? *file : std::string();
    if (m.line >= 0) {
        loc.line = m.line + 1;
        loc.column = m.column + 1;
    }
    return loc;
}

// yaml-cpp keeps both entries of a repeated key and lookups see only one of them, so a repeated key would
// silently lose a value: every map of a file is checked once, when it is loaded.
void check_unique_keys(const YAML::Node& n, const std::shared_ptr<const std::string>& file) {
    if (n.IsMap()) {
        std::vector<std::pair<std::string, YAML::Mark>> keys;
        for (auto it = n.begin(); it != n.end(); ++it) {
            if (it->first.IsScalar()) keys.emplace_back(it->first.Scalar(), it->first.Mark());
            check_unique_keys(it->second, file);
        }
        if (keys.size() < 2) return;
        std::vector<size_t> order(keys.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a].first < keys[b].first; });
        for (size_t i = 1; i < order.size(); ++i) {
            const auto& first = keys[order[i - 1]];
            const auto& again = keys[order[i]];
            if (first.first == again.first)
                throw input_error("duplicate key '" + again.first + "' (first given at line " +
                                      std::to_string(first.second.line + 1) + "); each key may appear once in a map",
                                  location_of(again.second, file));
        }
    } else if (n.IsSequence()) {
        for (const auto& c : n) check_unique_keys(c, file);
    }
}
// Aliases share their anchor's node, so a few hundred bytes of nested aliases (each list naming the one before it
// ten times) make a document of 10^9 nodes once walked. Every walk (these checks, then the loaders) sees the
// expanded document, so its size is bounded first: each distinct node (identified by where its text starts) is
// counted once with the expanded size of its children, and no document may expand to more nodes than a plain
// text of its size could hold plus a margin for real anchors.
constexpr double k_expanded_nodes_per_byte = 4;
constexpr double k_expanded_nodes_margin = 1e6;

double expanded_nodes(const YAML::Node& n, std::map<int, double>& memo, double budget) {
    const int at = n.Mark().pos;
    if (const auto it = memo.find(at); it != memo.end() && at >= 0) return it->second;
    double count = 1;
    if (n.IsMap()) {
        for (auto it = n.begin(); it != n.end() && count <= budget; ++it)
            count += expanded_nodes(it->first, memo, budget) + expanded_nodes(it->second, memo, budget);
    } else if (n.IsSequence()) {
        for (auto it = n.begin(); it != n.end() && count <= budget; ++it) count += expanded_nodes(*it, memo, budget);
    }
    if (at >= 0) memo[at] = count;
    return count;
}

void check_expanded_size(const YAML::Node& root, size_t bytes, const std::shared_ptr<const std::string>& file) {
    std::map<int, double> memo;
    const double budget = k_expanded_nodes_margin + k_expanded_nodes_per_byte * static_cast<double>(bytes);
    if (expanded_nodes(root, memo, budget) > budget)
        throw input_error("the document expands to more than " + std::to_string(static_cast<long long>(budget)) +
                              " YAML nodes once its aliases (*name) are replaced by what they name; nested aliases "
                              "that multiply are refused",
                          location_of(root.Mark(), file));
}

// A quoted value left open runs on to the next quote and swallows the lines between into one string (a preset
// name holding the rest of the file). YAML allows quoted values over several lines, so only one that swallows a
// line that reads as a key ("params:", "- x") is refused, where the quote opens.
void check_open_quotes(const YAML::Node& n, const std::string& text, const std::shared_ptr<const std::string>& file) {
    if (n.IsMap()) {
        for (auto it = n.begin(); it != n.end(); ++it) check_open_quotes(it->second, text, file);
    } else if (n.IsSequence()) {
        for (const auto& c : n) check_open_quotes(c, text, file);
    } else if (n.IsScalar() && n.Tag() == "!") {
        const YAML::Mark m = n.Mark();
        if (m.pos < 0 || static_cast<size_t>(m.pos) >= text.size()) return;
        const char q = text[static_cast<size_t>(m.pos)];
        if (q != '"' && q != '\'') return;
        size_t i = static_cast<size_t>(m.pos) + 1;
        for (; i < text.size(); ++i) {
            if (q == '"' && text[i] == '\\') {
                ++i;
                continue;
            }
            if (text[i] == q) {
                if (q == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
                    ++i;
                    continue;
                }
                break;
            }
        }
        const std::string body = text.substr(static_cast<size_t>(m.pos) + 1, i - static_cast<size_t>(m.pos) - 1);
        size_t line_start = body.find('\n');
        int lines = 0;
        while (line_start != std::string::npos) {
            ++lines;
            size_t b = line_start + 1, e = body.find('\n', b);
            const std::string line = body.substr(b, e == std::string::npos ? std::string::npos : e - b);
            const size_t f = line.find_first_not_of(" \t");
            if (f != std::string::npos) {
                size_t k = f;
                while (k < line.size() &&
                       (std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '_' || line[k] == '.'))
                    ++k;
                const bool key =
                    k > f && k < line.size() && line[k] == ':' && (k + 1 == line.size() || line[k + 1] == ' ');
                const bool item = line.compare(f, 2, "- ") == 0;
                if (key || item) {
                    std::string shown = line.substr(f);
                    if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
                    throw input_error(std::string("a ") + (q == '"' ? "double" : "single") +
                                          "-quoted value opens here and runs on to line " +
                                          std::to_string(m.line + 1 + lines) + ", swallowing '" + shown +
                                          "'; is its closing " + (q == '"' ? "\"" : "'") + " missing?",
                                      location_of(m, file));
                }
            }
            line_start = e;
        }
    }
}
}  // namespace

yaml_node yaml_node::load_file(const std::string& path) { return load_string(read_file(path), path); }

std::string yaml_node::read_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) tessel::fail("'" + path + "' is a directory, not a YAML file");
    require_input_file(path, "YAML file");
    std::ifstream in(path, std::ios::binary);
    if (!in) tessel::fail("cannot open '" + path + "': no such file or not readable");
    // In one read at the file's size (an emitted program can be hundreds of MB), then whatever more there is.
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    std::string text(ec ? 0 : static_cast<size_t>(size), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    for (char buf[4096]; in.read(buf, sizeof buf) || in.gcount() > 0;)
        text.append(buf, static_cast<size_t>(in.gcount()));
    return text;
}

yaml_node yaml_node::load_string(const std::string& text, const std::string& name) {
    auto file = std::make_shared<const std::string>(name);
    try {
        YAML::Node root = YAML::Load(text);
        check_expanded_size(root, text.size(), file);
        check_open_quotes(root, text, file);
        check_unique_keys(root, file);
        return yaml_node(root, file);
    } catch (const YAML::Exception& e) {
        std::string hint;
        if (e.msg.find("flow") != std::string::npos)
            hint = " (inside { } or [ ], quote values that contain brackets or commas: from: \"tile[0,0]\")";
        throw input_error("YAML syntax error: " + e.msg + hint, location_of(e.mark, file));
    }
}

source_location yaml_node::where() const {
    static const std::string none;
    if (!m_node.IsDefined()) return source_location{m_file ? *m_file : none, 0, 0};
    return location_of(m_node.Mark(), m_file);
}

const std::string& yaml_node::file() const {
    static const std::string none;
    return m_file ? *m_file : none;
}

yaml_node yaml_node::operator[](std::string_view key) const {
    if (!m_node.IsDefined() || !m_node.IsMap()) return yaml_node(YAML::Node(YAML::NodeType::Undefined), m_file);
    // Const lookup does not insert; a missing key gives yaml-cpp's invalid node, which we normalise.
    const YAML::Node& cn = m_node;
    YAML::Node child = cn[std::string(key)];
    if (!child.IsDefined()) return yaml_node(YAML::Node(YAML::NodeType::Undefined), m_file);
    return yaml_node(child, m_file);
}

bool yaml_node::has(std::string_view key) const { return (*this)[key].m_node.IsDefined(); }

std::vector<yaml_node::entry> yaml_node::entries() const {
    std::vector<entry> out;
    if (!is_map()) return out;
    for (auto it = m_node.begin(); it != m_node.end(); ++it) {
        const source_location at = location_of(it->first.Mark(), m_file);
        // YAML allows '? [a, b]: v' (a list or map as a key); no tessel key is one.
        if (!it->first.IsScalar()) throw input_error("a key must be a plain name, not a list or a map", at);
        out.push_back(entry{it->first.Scalar(), at, yaml_node(it->second, m_file)});
    }
    return out;
}

std::vector<yaml_node> yaml_node::items() const {
    std::vector<yaml_node> out;
    if (!is_seq()) return out;
    for (const auto& n : m_node) out.emplace_back(n, m_file);
    return out;
}

void yaml_node::fail(const std::string& message) const { throw input_error(message, where()); }

std::string yaml_node::scalar(std::string_view what) const {
    if (!is_scalar()) {
        const char* got = is_map() ? "a map" : is_seq() ? "a list" : "nothing";
        fail(std::string(what) + ": expected a single value, got " + got);
    }
    return m_node.Scalar();
}

double yaml_node::as_number(std::string_view what) const {
    const std::string s = scalar(what);
    quantity q;
    try {
        q = parse_quantity(s);
    } catch (const input_error& e) {
        fail(std::string(what) + ": " + e.message());
    }
    if (q.dim != dimension::scalar)
        fail(std::string(what) + ": expected a plain number, got '" + s + "' (a " + dimension_name(q.dim) + ")");
    return q.value;
}

std::int64_t yaml_node::as_int(std::string_view what) const {
    const double v = as_number(what);
    if (std::fabs(v) > 9.0e18)
        fail(std::string(what) + ": '" + scalar(what) + "' is too large (at most 2^53 is meaningful)");
    if (std::floor(v) != v) fail(std::string(what) + ": expected a whole number, got '" + scalar(what) + "'");
    return static_cast<std::int64_t>(v);
}

bool yaml_node::as_bool(std::string_view what) const {
    const std::string s = scalar(what);
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
    fail(std::string(what) + ": expected true or false, got '" + s + "'");
}

void yaml_node::expect_map(std::string_view what) const {
    if (!is_map()) fail(std::string(what) + ": expected a map of key: value");
}

void yaml_node::expect_seq(std::string_view what) const {
    if (!is_seq()) fail(std::string(what) + ": expected a list");
}

void yaml_node::check_keys(std::initializer_list<std::string_view> allowed, std::string_view what) const {
    std::vector<std::string> v;
    for (auto a : allowed) v.emplace_back(a);
    check_keys(v, what);
}

void yaml_node::check_keys(const std::vector<std::string>& allowed, std::string_view what) const {
    for (const auto& e : entries()) {
        if (std::find(allowed.begin(), allowed.end(), e.key) != allowed.end()) continue;
        throw input_error("unknown key '" + e.key + "' in " + std::string(what) + did_you_mean(e.key, allowed) +
                              "; expected one of: " + join(allowed),
                          e.key_where);
    }
}

namespace {
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}
}  // namespace

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
    std::string best;
    size_t best_d = ~size_t{0};
    for (const auto& c : candidates) {
        const size_t d = edit_distance(word, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    const size_t limit = std::max<size_t>(2, word.size() / 3);
    if (!best.empty() && best_d <= limit) return " (did you mean '" + best + "'?)";
    return {};
}

std::string join(const std::vector<std::string>& words, std::string_view sep) {
    std::string s;
    for (size_t i = 0; i < words.size(); ++i) {
        if (i) s += sep;
        s += words[i];
    }
    return s;
}

}  // namespace tessel
