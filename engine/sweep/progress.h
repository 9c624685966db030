// Progress of a running sweep on stderr: on a terminal a bar that redraws in place (points done, failed, rate,
// time left), with failures printed above it as they happen; otherwise one plain line per finished point, so
// logs and CI output stay readable.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>

#include "engine/sweep/runner.h"

namespace tessel::sweep {

class progress {
public:
    /// `total` points are to run now; `tty` picks the bar.
    progress(std::ostream& os, bool tty, size_t total);

    void point_done(const job& j, const row& r);
    /// Redraws the bar (rate and ETA move while nothing finishes); nothing for plain output.
    void tick();
    /// Ends the bar's line.
    void finish();

    size_t done() const { return m_done; }
    size_t ok() const { return m_ok; }
    size_t failed() const { return m_failed; }
    size_t timed_out() const { return m_timeout; }
    double elapsed() const;

    /// "15s", "3m20s", "1h05m"
    static std::string format_eta(double seconds);

private:
    void draw();
    std::ostream& m_os;
    bool m_tty;
    size_t m_total;
    size_t m_done = 0, m_ok = 0, m_failed = 0, m_timeout = 0;
    std::chrono::steady_clock::time_point m_start, m_last_draw;
    bool m_drawn = false;
};

}  // namespace tessel::sweep
