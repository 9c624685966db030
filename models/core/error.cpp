#include "models/core/error.h"

namespace tessel {

std::string source_location::str() const {
    if (file.empty()) return {};
    if (line <= 0) return file;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column > 0 ? column : 1);
}

static std::string with_location(const std::string& message, const source_location& where) {
    const std::string at = where.str();
    return at.empty() ? message : at + ": " + message;
}

input_error::input_error(const std::string& message, source_location where)
    : std::runtime_error(with_location(message, where)), m_where(std::move(where)), m_message(message) {}

void fail(const std::string& message, const source_location& where) { throw input_error(message, where); }

}  // namespace tessel
