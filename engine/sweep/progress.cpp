#include "engine/sweep/progress.h"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace tessel::sweep {

progress::progress(std::ostream& os, bool tty, size_t total)
    : m_os(os), m_tty(tty), m_total(total), m_start(std::chrono::steady_clock::now()), m_last_draw(m_start) {}

double progress::elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

std::string progress::format_eta(double s) {
    if (!std::isfinite(s) || s < 0) return "?";
    char buf[32];
    const long t = std::lround(s);
    if (t < 60)
        std::snprintf(buf, sizeof buf, "%lds", t);
    else if (t < 3600)
        std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
    else
        std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
    return buf;
}

void progress::point_done(const job& j, const row& r) {
    ++m_done;
    const std::string status = r.value("status", "");
    if (status == "ok")
        ++m_ok;
    else if (status == "timeout")
        ++m_timeout;
    else
        ++m_failed;
    std::string params;
    for (const auto& p : j.params) params += " " + p.name + "=" + p.value;
    const double wall = r.contains("wall_s") && r["wall_s"].is_number() ? r["wall_s"].get<double>() : 0.0;
    const std::string error = r.value("error", "");
    char head[64];
    const int width = int(std::to_string(m_total).size());
    std::snprintf(head, sizeof head, "[%*zu/%zu] %-7s %6.2fs ", width, m_done, m_total, status.c_str(), wall);
    const std::string line =
        std::string(head) + "point " + std::to_string(j.index) + ":" + params + (error.empty() ? "" : "  -- " + error);
    if (!m_tty) {
        m_os << line << "\n" << std::flush;
        return;
    }
    if (status != "ok") m_os << "\r\033[K" << line << "\n";
    draw();
}

void progress::tick() {
    if (!m_tty) return;
    if (std::chrono::steady_clock::now() - m_last_draw < std::chrono::milliseconds(200)) return;
    draw();
}

void progress::draw() {
    m_last_draw = std::chrono::steady_clock::now();
    m_drawn = true;
    const double t = elapsed();
    const double rate = t > 0 ? double(m_done) / t : 0;
    constexpr int bar = 24;
    const int filled = m_total ? int(double(bar) * double(m_done) / double(m_total)) : bar;
    std::string b(size_t(filled), '#');
    b += std::string(size_t(bar - filled), '.');
    char line[200];
    std::snprintf(line, sizeof line, "\r\033[K%zu/%zu [%s] %zu ok, %zu failed%s, %.1f points/s, elapsed %s, ETA %s",
                  m_done, m_total, b.c_str(), m_ok, m_failed + m_timeout,
                  m_timeout ? (" (" + std::to_string(m_timeout) + " timed out)").c_str() : "", rate,
                  format_eta(t).c_str(), m_done == 0 ? "?" : format_eta(double(m_total - m_done) / rate).c_str());
    m_os << line << std::flush;
}

void progress::finish() {
    if (m_tty && m_drawn) {
        draw();
        m_os << "\n" << std::flush;
    }
}

}  // namespace tessel::sweep
