#include "models/core/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "models/core/error.h"

namespace tessel {

namespace fs = std::filesystem;

namespace {

// After a rename, the folder's entry reaches the disk only when the folder is synced.
void sync_folder(const std::string& path) {
    const fs::path p(path);
    const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

}  // namespace

output_file::fd_buf::fd_buf() : m_buf(1 << 16) { setp(m_buf.data(), m_buf.data() + m_buf.size()); }

bool output_file::fd_buf::flush_all() {
    const char* p = pbase();
    while (p < pptr() && error == 0) {
        const ssize_t n = ::write(fd, p, static_cast<size_t>(pptr() - p));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            error = n < 0 ? errno : EIO;
        else
            p += n;
    }
    setp(m_buf.data(), m_buf.data() + m_buf.size());
    return error == 0;
}

output_file::fd_buf::int_type output_file::fd_buf::overflow(int_type c) {
    if (!flush_all()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
}

output_file::output_file(std::string path, std::string what, bool durable)
    : m_path(std::move(path)), m_what(std::move(what)), m_durable(durable) {
    std::error_code ec;
    const auto st = fs::status(m_path, ec);
    if (fs::exists(st) && fs::is_directory(st))
        throw input_error("cannot write " + m_what + " '" + m_path + "': it is a folder");
    if (fs::exists(st) && !fs::is_regular_file(st)) {
        m_buf.fd = ::open(m_path.c_str(), O_WRONLY | O_CLOEXEC);
    } else {
        const fs::path p(m_path);
        // Hidden, and unique per process, so a concurrent run or a glob over the folder never sees it.
        m_tmp = (p.parent_path() / ("." + p.filename().string() + ".tessel-" + std::to_string(::getpid()))).string();
        m_buf.fd = ::open(m_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (m_buf.fd < 0) {
        const int err = errno;
        m_tmp.clear();  // nothing was created
        fail(err);
    }
}

output_file::~output_file() {
    if (m_done) return;
    close_fd();
    if (!m_tmp.empty()) ::unlink(m_tmp.c_str());
}

void output_file::close_fd() {
    if (m_buf.fd >= 0) ::close(m_buf.fd);
    m_buf.fd = -1;
}

void output_file::fail(int err) {
    m_done = true;
    close_fd();
    if (!m_tmp.empty()) ::unlink(m_tmp.c_str());
    throw input_error("cannot write " + m_what + " '" + m_path + "': " + std::strerror(err ? err : EIO));
}

void output_file::commit() {
    if (!m_buf.flush_all() || !m_os) fail(m_buf.error);
    if (m_durable && !m_tmp.empty() && ::fsync(m_buf.fd) != 0) fail(errno);
    if (::close(m_buf.fd) != 0) {
        m_buf.fd = -1;
        fail(errno);
    }
    m_buf.fd = -1;
    m_done = true;
    if (m_tmp.empty()) return;
    if (::rename(m_tmp.c_str(), m_path.c_str()) != 0) {
        const int err = errno;
        ::unlink(m_tmp.c_str());
        throw input_error("cannot write " + m_what + " '" + m_path + "': " + std::strerror(err));
    }
    if (m_durable) sync_folder(m_path);
}

void write_file_atomic(const std::string& path, const std::string& text, const std::string& what, bool durable) {
    output_file f(path, what, durable);
    f.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
    f.commit();
}

}  // namespace tessel
