#include "checkpoint/IndexEntries.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "process/UniqueFd.h"

namespace switchboard::checkpoint {

namespace {

std::uint32_t big_endian32(const unsigned char* at) {
  return (std::uint32_t{at[0]} << 24) | (std::uint32_t{at[1]} << 16) | (std::uint32_t{at[2]} << 8) | at[3];
}

// The whole file, read at once (an index of 10,000 files is about 800 KB).
std::optional<std::string> read_whole(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  return data;
}

}  // namespace

std::optional<std::set<std::string>> indexed_among(const std::filesystem::path& index,
                                                   const std::set<std::string>& paths) {
  std::set<std::string> found;
  const process::UniqueFd fd(::open(index.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno == ENOENT ? std::optional(found) : std::nullopt;
  const auto whole = read_whole(fd.get());
  if (!whole) return std::nullopt;
  const std::string& data = *whole;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const std::unordered_set<std::string_view> wanted(paths.begin(), paths.end());
  // Header: "DIRC", the version, the number of entries. Each entry: 62 bytes of stat data, object id and flags
  // (2 bytes more in version 3 when the extended flag is set), the path (its length in the flags' low 12 bits,
  // 0xFFF for a longer one), and NULs up to a multiple of 8 bytes.
  if (data.size() < 12 || std::memcmp(bytes, "DIRC", 4) != 0) return std::nullopt;
  const auto version = big_endian32(bytes + 4);
  if (version != 2 && version != 3) return std::nullopt;
  const auto count = big_endian32(bytes + 8);
  std::size_t at = 12;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (at + 62 > data.size()) return std::nullopt;
    const unsigned flags = (unsigned{bytes[at + 60]} << 8) | bytes[at + 61];
    std::size_t name_at = at + 62;
    if (flags & 0x4000) {
      if (version < 3) return std::nullopt;
      name_at += 2;
    }
    std::size_t length = flags & 0x0FFF;
    if (length == 0x0FFF) {
      const auto end = data.find('\0', name_at);
      if (end == std::string::npos) return std::nullopt;
      length = end - name_at;
    }
    if (name_at + length >= data.size() || data[name_at + length] != '\0') return std::nullopt;
    const std::string_view name(data.data() + name_at, length);
    if (wanted.count(name) != 0) found.emplace(name);
    at = (name_at - at + length + 8) / 8 * 8 + at;  // the entry, its path's NUL and the padding
  }
  return found;
}

}  // namespace switchboard::checkpoint
