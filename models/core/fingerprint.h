// FNV-1a 64-bit fingerprints: the config hash of a run and of a sweep point, and the build id of a tessel
// binary. Not cryptographic: they tell configurations and files apart, nothing more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace tessel {

class fingerprint {
public:
    /// Byte by byte (the standard FNV-1a).
    fingerprint& add(std::string_view bytes) {
        for (unsigned char c : bytes) step(c);
        return *this;
    }
    /// Eight bytes at a time, the rest byte by byte: a different digest from add(), eight times fewer steps
    /// (a binary of a few hundred MB is hashed in a fraction of a second).
    fingerprint& add_words(const char* data, std::size_t n) {
        std::size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            std::uint64_t w;
            std::memcpy(&w, data + i, 8);
            step(w);
        }
        for (; i < n; ++i) step(static_cast<unsigned char>(data[i]));
        return *this;
    }
    std::uint64_t value() const { return m_h; }
    /// 16 hex digits.
    std::string hex() const {
        char s[17];
        std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(m_h));
        return s;
    }

private:
    void step(std::uint64_t v) { m_h = (m_h ^ v) * 1099511628211ull; }
    std::uint64_t m_h = 1469598103934665603ull;
};

}  // namespace tessel
