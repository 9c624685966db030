// Files tessel writes (summaries, stats, traces, floorplans, emitted programs, imports, sweep results) are
// written completely or not at all: the bytes go to a hidden temporary beside the file, and only a complete,
// flushed temporary is renamed over it. A failed write (a full disk, a missing folder, no permission) removes the
// temporary and is an input_error naming the path and the system's reason, so the run exits 2 and no truncated
// file is left for a script to read as a result (docs/reliability.md).
#pragma once

#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace tessel {

class output_file {
public:
    /// Opens the temporary for `path`. A path that exists and is not a regular file (/dev/stdout, /dev/null, a
    /// pipe) is written in place: it cannot be replaced by a rename. `what` names the file in messages
    /// ("VCD trace"); `durable` also syncs the data and the folder to disk before and after the rename.
    explicit output_file(std::string path, std::string what = "file", bool durable = false);
    ~output_file();  // an uncommitted temporary is removed
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;

    std::ostream& stream() { return m_os; }
    const std::string& path() const { return m_path; }
    /// Flushes and closes the temporary and renames it over the path; throws input_error
    /// "cannot write WHAT 'PATH': REASON" if any write failed.
    void commit();

private:
    // Buffers and writes to a file descriptor, keeping the first write error's errno (an ofstream loses it).
    class fd_buf : public std::streambuf {
    public:
        fd_buf();
        int fd = -1;
        int error = 0;
        bool flush_all();

    protected:
        int_type overflow(int_type c) override;
        int sync() override { return flush_all() ? 0 : -1; }

    private:
        std::vector<char> m_buf;
    };

    [[noreturn]] void fail(int err);
    void close_fd();

    std::string m_path, m_what, m_tmp;  // m_tmp empty: written in place
    bool m_durable;
    bool m_done = false;
    fd_buf m_buf;
    std::ostream m_os{&m_buf};
};

/// Writes `text` to `path` through an output_file.
void write_file_atomic(const std::string& path, const std::string& text, const std::string& what = "file",
                       bool durable = false);

}  // namespace tessel
