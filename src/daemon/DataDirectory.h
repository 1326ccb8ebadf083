#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <variant>

namespace switchboard::daemon {

// The per-user directory that holds one daemon's state: the lock, the runtime file and (later) the database.
// Chosen by --data-dir, else $SWITCHBOARD_DATA_DIR, else $XDG_DATA_HOME/switchboard, else
// ~/.local/share/switchboard. Created with mode 0700 and refused if another user owns it or others can enter it.
struct DataDirectory {
  std::filesystem::path path;

  static std::filesystem::path default_path();
  // Creates (0700) or validates the directory; returns an error message on failure.
  static std::optional<std::string> prepare(const std::filesystem::path& path);
};

// Where the daemon's Unix-domain socket lives (named in the runtime file as "socket"): <dir>/daemon.sock, in
// the 0700 data directory. A path too long for a socket address (108 bytes) moves to a 0700 directory of the
// user's own, $XDG_RUNTIME_DIR/switchboard or /tmp/switchboard-<uid>, under a name derived from <dir>.
// Returns an error message when no usable place exists.
std::variant<std::filesystem::path, std::string> socket_path_for(const std::filesystem::path& data_dir);

// One daemon per data directory: an exclusive flock on <dir>/daemon.lock. The kernel drops the lock when its
// holder dies, so a stale lock from a killed daemon simply is not held and is taken over.
class InstanceLock {
 public:
  InstanceLock() = default;
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;
  ~InstanceLock();

  enum class Result { Acquired, HeldByOther, Error };
  Result acquire(const std::filesystem::path& directory, std::string& why);

 private:
  int m_fd = -1;
};

// <dir>/daemon.json: how local clients find the daemon (url, port, pid, protocol version, token). Written
// atomically (temp file + rename) with mode 0600, removed on shutdown.
class RuntimeFile {
 public:
  static std::filesystem::path path_in(const std::filesystem::path& directory);
  // Returns an error message on failure.
  std::optional<std::string> write(const std::filesystem::path& directory, const std::string& json_text);
  void remove();
  ~RuntimeFile() { remove(); }

 private:
  std::optional<std::filesystem::path> m_written;
};

}  // namespace switchboard::daemon
