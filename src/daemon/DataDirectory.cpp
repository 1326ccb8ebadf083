#include "daemon/DataDirectory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>

namespace switchboard::daemon {
namespace fs = std::filesystem;

fs::path DataDirectory::default_path() {
  if (const char* explicit_dir = std::getenv("SWITCHBOARD_DATA_DIR"); explicit_dir && *explicit_dir) return explicit_dir;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg && fs::path(xdg).is_absolute()) {
    return fs::path(xdg) / "switchboard";
  }
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".local" / "share" / "switchboard";
}

std::optional<std::string> DataDirectory::prepare(const fs::path& path) {
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return "cannot create data directory " + path.string() + ": " + std::strerror(errno);
  }
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return "cannot stat data directory " + path.string() + ": " + std::strerror(errno);
  if (!S_ISDIR(info.st_mode)) return "data directory " + path.string() + " is not a directory";
  if (info.st_uid != ::geteuid()) return "data directory " + path.string() + " belongs to another user";
  if ((info.st_mode & 0077) != 0 && ::chmod(path.c_str(), 0700) != 0) {
    return "cannot restrict data directory " + path.string() + " to mode 0700: " + std::strerror(errno);
  }
  return std::nullopt;
}

std::variant<fs::path, std::string> socket_path_for(const fs::path& data_dir) {
  constexpr std::size_t kMaxSocketPath = sizeof(sockaddr_un::sun_path) - 1;
  fs::path in_place = data_dir / "daemon.sock";
  if (in_place.string().size() <= kMaxSocketPath) return in_place;
  fs::path private_dir;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime && fs::path(runtime).is_absolute()) {
    private_dir = fs::path(runtime) / "switchboard";
  } else {
    private_dir = fs::path("/tmp") / ("switchboard-" + std::to_string(::geteuid()));
  }
  // prepare() creates it 0700 and refuses one that another user owns (a /tmp name anyone could take first).
  if (auto error = DataDirectory::prepare(private_dir)) return *error;
  char name[32];
  std::snprintf(name, sizeof name, "%016zx.sock", std::hash<std::string>{}(fs::absolute(data_dir).string()));
  fs::path moved = private_dir / name;
  if (moved.string().size() > kMaxSocketPath) return "no socket path short enough for " + data_dir.string();
  return moved;
}

InstanceLock::~InstanceLock() {
  if (m_fd >= 0) ::close(m_fd);  // releases the flock
}

InstanceLock::Result InstanceLock::acquire(const fs::path& directory, std::string& why) {
  const fs::path path = directory / "daemon.lock";
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (m_fd < 0) {
    why = "cannot open " + path.string() + ": " + std::strerror(errno);
    return Result::Error;
  }
  if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(m_fd);
    m_fd = -1;
    if (error == EWOULDBLOCK) return Result::HeldByOther;
    why = "cannot lock " + path.string() + ": " + std::strerror(error);
    return Result::Error;
  }
  // The pid, for humans looking at the file; the lock itself is what counts.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(m_fd, 0) == 0) (void)::pwrite(m_fd, pid.data(), pid.size(), 0);
  return Result::Acquired;
}

fs::path RuntimeFile::path_in(const fs::path& directory) { return directory / "daemon.json"; }

std::optional<std::string> RuntimeFile::write(const fs::path& directory, const std::string& json_text) {
  const fs::path final_path = path_in(directory);
  const fs::path temp_path = directory / ("daemon.json.tmp." + std::to_string(::getpid()));
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return "cannot write " + temp_path.string() + ": " + std::strerror(errno);
  ::fchmod(fd, 0600);  // whatever the umask
  std::string_view rest = json_text;
  bool ok = true;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  // No fsync: the file describes this running process, so after a crash of the machine it is stale whatever it
  // holds, and its readers take an unreadable one as no daemon. The rename keeps readers from seeing half of it.
  ::close(fd);
  if (!ok || ::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temp_path.c_str());
    return "cannot write " + final_path.string() + ": " + why;
  }
  m_written = final_path;
  return std::nullopt;
}

void RuntimeFile::remove() {
  if (m_written) {
    ::unlink(m_written->c_str());
    m_written.reset();
  }
}

}  // namespace switchboard::daemon
