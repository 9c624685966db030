#include "engine/workload/overrides.h"

#include <cctype>

namespace tessel {

namespace {

// Text typed only when it round-trips, so the resolved parameters (written with every run) keep the user's text.
std::optional<std::int64_t> plain_int(const std::string& s) {
    if (s.empty() || s == "-" || s.size() > 18) return std::nullopt;
    for (size_t i = 0; i < s.size(); ++i)
        if (!(std::isdigit(static_cast<unsigned char>(s[i])) || (i == 0 && s[i] == '-'))) return std::nullopt;
    const std::int64_t v = std::stoll(s);
    if (std::to_string(v) != s) return std::nullopt;
    return v;
}

std::optional<bool> plain_bool(const std::string& s) {
    if (s == "true") return true;
    if (s == "false") return false;
    return std::nullopt;
}

const char* bool_text(bool b) { return b ? "true" : "false"; }

}  // namespace

std::map<std::string, std::string> workload_overrides::to_map() const {
    std::map<std::string, std::string> m = other;
    auto put = [&](const char* key, const std::optional<std::int64_t>& v) {
        if (v) m[key] = std::to_string(*v);
    };
    put("batch", batch);
    put("seq", seq);
    put("kv_cache", kv_cache);
    put("layers", layers);
    put("tp", tp);
    if (sequence_parallel) m["sequence_parallel"] = bool_text(*sequence_parallel);
    if (fuse) m["fuse"] = bool_text(*fuse);
    if (training) m["training"] = *training;
    return m;
}

workload_overrides parse_workload_overrides(const std::map<std::string, std::string>& text) {
    workload_overrides o;
    for (const auto& [key, value] : text) {
        std::optional<std::int64_t>* i = key == "batch"      ? &o.batch
                                         : key == "seq"      ? &o.seq
                                         : key == "kv_cache" ? &o.kv_cache
                                         : key == "layers"   ? &o.layers
                                         : key == "tp"       ? &o.tp
                                                             : nullptr;
        std::optional<bool>* b = key == "sequence_parallel" ? &o.sequence_parallel : key == "fuse" ? &o.fuse : nullptr;
        if (i && (*i = plain_int(value))) continue;
        if (b && (*b = plain_bool(value))) continue;
        if (key == "training") {
            o.training = value;
            continue;
        }
        o.other[key] = value;
    }
    return o;
}

}  // namespace tessel
