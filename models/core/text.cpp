#include "models/core/text.h"

#include <cstdio>

namespace tessel {

std::string group_name(const std::string& path) {
    std::string out;
    for (size_t i = 0; i < path.size(); ++i) {
        if (path[i] == '[') {
            const size_t close = path.find(']', i);
            if (close == std::string::npos) return out + path.substr(i);
            out += "[*]";
            i = close;
        } else {
            out += path[i];
        }
    }
    return out;
}

std::vector<std::string> split_path(const std::string& p) {
    std::vector<std::string> parts;
    std::string cur;
    int depth = 0;
    for (char c : p) {
        if (c == '[') ++depth;
        if (c == ']') --depth;
        if (c == '.' && depth == 0) {
            parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    parts.push_back(cur);
    return parts;
}

std::string json_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            o += '\\';
            o += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            o += buf;
        } else {
            o += c;
        }
    }
    return o;
}

}  // namespace tessel
