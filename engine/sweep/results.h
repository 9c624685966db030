// The results of a sweep: one row per point in results.jsonl (the record, append-only) and results.csv (the
// table). A row is appended as soon as its point finishes, each file with one write() of a whole line followed
// by fsync, so only the last line can be incomplete (a SIGKILL inside that write, power loss, a full disk); such
// a torn line is dropped when the sweep is opened again. results.csv is rebuilt from results.jsonl at every
// start, so it always holds one row per point, the latest.
#pragma once

#include <nlohmann/json.hpp>

#include "models/core/error.h"
#include "models/core/output_file.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tessel::sweep {

/// One point's result: point, key, status (ok | failed | timeout), exit_code, error, params{}, metrics{},
/// config_hash, tessel_version, wall_s, host, finished, backend, slurm_job (array job_task), dir.
using row = nlohmann::ordered_json;

/// Whether `r` has a row's shape: an object with a string key, a point number, a string status and error, and params
/// an object of strings; dir, host, backend, slurm_job and finished strings where present, metrics an object. A line
/// of results.jsonl (or a Slurm row file) that is not is skipped as unreadable, and its point runs again: every
/// reader of rows can then take those fields as their types.
bool is_row(const row& r);

class results_store {
public:
    /// Opens the results in `dir`. A writer creates the folder, takes DIR/.lock (a second runner on the same
    /// folder is an input_error) and truncates a torn last line; a reader only reads.
    results_store(std::string dir, bool writer);
    ~results_store();
    results_store(const results_store&) = delete;
    results_store& operator=(const results_store&) = delete;

    const std::string& dir() const { return m_dir; }
    std::string jsonl_path() const { return m_dir + "/results.jsonl"; }
    std::string csv_path() const { return m_dir + "/results.csv"; }

    /// The latest row of each point key: read at open, then appended.
    const std::map<std::string, row>& latest() const { return m_latest; }
    /// Their keys in the order their rows were written, the newest last.
    const std::vector<std::string>& written_order() const { return m_order; }
    /// Lines read at open; a torn last line dropped (0 or 1); complete lines that were not a row.
    size_t lines() const { return m_lines; }
    size_t torn() const { return m_torn; }
    size_t bad() const { return m_bad; }

    /// Sets the table's columns (parameter and metric names; names seen only in older rows are added after
    /// them) and rewrites results.csv from the latest rows, atomically (temporary file, then rename). Points in
    /// `rerun` are left out: they are about to run again, and their new row is appended when they finish.
    void rewrite_csv(const std::vector<std::string>& params, const std::vector<std::string>& metrics,
                     const std::set<std::string>& rerun = {});
    /// Appends a finished point to results.jsonl, then to results.csv.
    void append(const row& r);

private:
    std::string csv_line(const row& r) const;
    std::string m_dir;
    bool m_writer;
    int m_lock_fd = -1, m_jsonl_fd = -1, m_csv_fd = -1;
    std::map<std::string, row> m_latest;
    std::vector<std::string> m_order;  // keys in the order their latest row was written
    std::vector<std::string> m_params, m_metrics;
    size_t m_lines = 0, m_torn = 0, m_bad = 0;
};

/// The summary.json a finished point's run wrote, from its folder (`dir`) under the sweep's `out_dir`. A point
/// that did not finish ok is an input_error "STATUS: ERROR"; a summary that does not parse, "its summary.json
/// does not read: WHY". Callers say which point it was.
nlohmann::json point_summary(const std::string& out_dir, const row& r);
/// `read(summary)` for a finished point's summary.json: a field of the wrong type (a summary edited, or written by
/// another version) is the same input_error as a summary that does not parse, not an internal error.
template <class Read>
auto read_point_summary(const std::string& out_dir, const row& r, Read&& read) {
    const nlohmann::json s = point_summary(out_dir, r);
    try {
        return read(s);
    } catch (const nlohmann::json::exception& e) {
        // what() is "[json.exception.type_error.302] type must be number, but is string": keep the reason.
        const std::string why = e.what();
        throw input_error("its summary.json does not read: a field has the wrong type (" +
                          why.substr(why.find(']') == std::string::npos ? 0 : why.find(']') + 2) + ")");
    }
}

/// Writes `text` to `fd` completely (retrying short writes), then fsyncs; on failure it truncates the file back
/// to where it was and throws input_error naming `what` and the reason.
void write_line(int fd, const std::string& text, const std::string& what);
/// Writes a sweep file atomically and durably (models/core/output_file.h: temporary, fsync, rename, fsync of
/// the folder), so a resumed sweep never reads half a file.
inline void write_durable(const std::string& path, const std::string& text) {
    write_file_atomic(path, text, "file", true);
}
/// The whole of a file the sweep wrote itself (a point's log or summary, a task list); empty when it is missing.
std::string read_text(const std::string& path);
/// A CSV field, quoted when it needs to be.
std::string csv_field(const std::string& s);
/// A JSON value as a CSV cell: numbers in their shortest exact form, strings as they are, null empty.
std::string csv_cell(const nlohmann::ordered_json& v);

}  // namespace tessel::sweep
