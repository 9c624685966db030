#include "engine/sweep/results.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "models/core/error.h"
#include "models/core/limits.h"

namespace tessel::sweep {

namespace fs = std::filesystem;

namespace {

// The disk, not tessel, failed (full, read-only, gone): exit 2 with the path and the system's reason.
[[noreturn]] void sys_fail(const std::string& what) { throw input_error(what + ": " + std::strerror(errno)); }

int open_append(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) sys_fail("cannot open '" + path + "'");
    return fd;
}

const char* fixed_columns_before[] = {"point", "key", "status", "exit_code"};
const char* fixed_columns_after[] = {"config_hash", "tessel_version", "wall_s", "host", "finished",
                                     "backend",     "slurm_job",      "error",  "dir"};

}  // namespace

bool is_row(const row& r) {
    if (!r.is_object() || !r.contains("key") || !r["key"].is_string()) return false;
    for (const char* k : {"point", "status", "error", "params"})
        if (!r.contains(k)) return false;
    const row& point = r["point"];
    if (!point.is_number_integer() || (!point.is_number_unsigned() && point.get<std::int64_t>() < 0)) return false;
    if (!r["params"].is_object()) return false;
    for (const char* k : {"status", "error", "dir", "host", "backend", "slurm_job", "finished"})
        if (r.contains(k) && !r[k].is_string()) return false;
    for (const auto& [name, value] : r["params"].items())
        if (!value.is_string()) return false;
    return !r.contains("metrics") || r["metrics"].is_object();
}

void write_line(int fd, const std::string& text, const std::string& what) {
    // On failure (a full disk) the partial line is cut off again, so the file never holds a torn row.
    const off_t before = ::lseek(fd, 0, SEEK_END);
    auto undo_and_fail = [&](const std::string& doing) {
        const int err = errno;
        if (before >= 0 && ::ftruncate(fd, before) != 0) {
            // The torn line is dropped when the sweep is opened again.
        }
        errno = err;
        sys_fail(doing + what);
    };
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            undo_and_fail("cannot write ");
        }
        done += size_t(n);
    }
    if (::fsync(fd) != 0) undo_and_fail("cannot sync ");
}

nlohmann::json point_summary(const std::string& out_dir, const row& r) {
    if (r.value("status", "") != "ok")
        throw input_error(r.value("status", std::string("failed")) + ": " + r.value("error", std::string()));
    const std::string path = out_dir + "/" + r.value("dir", std::string()) + "/summary.json";
    try {
        require_input_file(path, "summary");
        return nlohmann::json::parse(read_text(path));
    } catch (const std::exception& e) {
        throw input_error(std::string("its summary.json does not read: ") + e.what());
    }
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string csv_field(const std::string& s) {
    const bool quote =
        s.find_first_of(",\"\n\r") != std::string::npos || (!s.empty() && (s.front() == ' ' || s.back() == ' '));
    if (!quote) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string csv_cell(const nlohmann::ordered_json& v) {
    if (v.is_null()) return {};
    if (v.is_string()) return csv_field(v.get<std::string>());
    return csv_field(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

results_store::results_store(std::string dir, bool writer) : m_dir(std::move(dir)), m_writer(writer) {
    {
        std::error_code ec;
        if (fs::exists(m_dir, ec) && !fs::is_directory(m_dir, ec))
            throw input_error("results folder '" + m_dir + "' is a file, not a folder; name another with --out");
    }
    if (m_writer) {
        std::error_code ec;
        fs::create_directories(m_dir, ec);
        if (ec) throw input_error("cannot create results folder '" + m_dir + "': " + ec.message());
        const std::string lock = m_dir + "/.lock";
        m_lock_fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (m_lock_fd < 0) sys_fail("cannot open '" + lock + "'");
        if (::flock(m_lock_fd, LOCK_EX | LOCK_NB) != 0) {
            std::ifstream in(lock);
            std::string pid;
            std::getline(in, pid);
            ::close(m_lock_fd);
            throw input_error("another tessel sweep (pid " + (pid.empty() ? std::string("?") : pid) +
                              ") is writing to '" + m_dir + "'; wait for it, or use another --out");
        }
        const std::string pid = std::to_string(::getpid()) + "\n";
        if (::ftruncate(m_lock_fd, 0) == 0 && ::write(m_lock_fd, pid.data(), pid.size()) < 0) {
            // The pid is only informative; the lock is what matters.
        }
    }
    std::string text;
    {
        std::ifstream in(jsonl_path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        text = ss.str();
    }
    // Everything after the last newline is a line a crash cut short.
    const size_t end = text.rfind('\n');
    const size_t complete = end == std::string::npos ? 0 : end + 1;
    if (complete < text.size()) {
        m_torn = 1;
        if (m_writer && ::truncate(jsonl_path().c_str(), off_t(complete)) != 0)
            sys_fail("cannot truncate '" + jsonl_path() + "'");
    }
    size_t start = 0;
    while (start < complete) {
        const size_t nl = text.find('\n', start);
        const std::string line = text.substr(start, nl - start);
        start = nl + 1;
        if (line.empty()) continue;
        ++m_lines;
        row r = row::parse(line, nullptr, false);
        if (r.is_discarded() || !is_row(r)) {
            ++m_bad;
            continue;
        }
        const std::string key = r["key"].get<std::string>();
        if (m_latest.count(key)) m_order.erase(std::find(m_order.begin(), m_order.end(), key));
        m_order.push_back(key);
        m_latest[key] = std::move(r);
    }
    if (m_writer) m_jsonl_fd = open_append(jsonl_path());
}

results_store::~results_store() {
    for (int fd : {m_jsonl_fd, m_csv_fd, m_lock_fd})
        if (fd >= 0) ::close(fd);
}

void results_store::rewrite_csv(const std::vector<std::string>& params, const std::vector<std::string>& metrics,
                                const std::set<std::string>& rerun) {
    m_params = params;
    m_metrics = metrics;
    for (const auto& key : m_order) {
        const row& r = m_latest.at(key);
        auto add = [](std::vector<std::string>& cols, const row& obj) {
            if (!obj.is_object()) return;
            for (auto it = obj.begin(); it != obj.end(); ++it)
                if (std::find(cols.begin(), cols.end(), it.key()) == cols.end()) cols.push_back(it.key());
        };
        if (r.contains("params")) add(m_params, r["params"]);
        if (r.contains("metrics")) add(m_metrics, r["metrics"]);
    }
    std::string header;
    for (const char* c : fixed_columns_before) header += std::string(header.empty() ? "" : ",") + c;
    for (const auto& p : m_params) header += "," + csv_field(p);
    for (const auto& m : m_metrics) header += "," + csv_field(m);
    for (const char* c : fixed_columns_after) header += std::string(",") + c;
    std::string text = header + "\n";
    for (const auto& key : m_order)
        if (!rerun.count(key)) text += csv_line(m_latest.at(key));
    write_durable(csv_path(), text);
    if (m_csv_fd >= 0) ::close(m_csv_fd);
    m_csv_fd = open_append(csv_path());
}

std::string results_store::csv_line(const row& r) const {
    auto field = [&](const char* k) { return r.contains(k) ? csv_cell(r[k]) : std::string(); };
    auto nested = [&](const char* obj, const std::string& k) {
        return r.contains(obj) && r[obj].is_object() && r[obj].contains(k) ? csv_cell(r[obj][k]) : std::string();
    };
    std::string line;
    for (const char* c : fixed_columns_before) line += (line.empty() ? "" : ",") + field(c);
    for (const auto& p : m_params) line += "," + nested("params", p);
    for (const auto& m : m_metrics) line += "," + nested("metrics", m);
    for (const char* c : fixed_columns_after) line += "," + field(c);
    return line + "\n";
}

void results_store::append(const row& r) {
    if (!m_writer) throw std::logic_error("results_store::append on a reader");
    const std::string key = r.at("key").get<std::string>();
    write_line(m_jsonl_fd, r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
               "'" + jsonl_path() + "'");
    if (m_csv_fd >= 0) write_line(m_csv_fd, csv_line(r), "'" + csv_path() + "'");
    if (m_latest.count(key)) m_order.erase(std::find(m_order.begin(), m_order.end(), key));
    m_order.push_back(key);
    m_latest[key] = r;
}

}  // namespace tessel::sweep
