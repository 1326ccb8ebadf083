#include "checkpoint/IndexEntries.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
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

std::string hex_of(const unsigned char* id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(40, '0');
  for (std::size_t i = 0; i < 20; ++i) {
    hex[2 * i] = kDigits[id[i] >> 4];
    hex[2 * i + 1] = kDigits[id[i] & 0xF];
  }
  return hex;
}

// One node of the TREE extension and, recursively, those below it: "<name>\0<entries> <subtrees>\n<id>" (no id
// when <entries> is -1: a directory whose tree is not known, and then the cache is not used).
bool read_cached_tree(std::string_view data, std::size_t& at, const std::string& parent, bool root, IndexTree& tree) {
  const auto name_end = data.find('\0', at);
  if (name_end == std::string_view::npos) return false;
  const std::string name(data.substr(at, name_end - at));
  const auto line_end = data.find('\n', name_end);
  if (line_end == std::string_view::npos) return false;
  const std::string counts(data.substr(name_end + 1, line_end - name_end - 1));
  long entries = 0;
  long subtrees = 0;
  if (std::sscanf(counts.c_str(), "%ld %ld", &entries, &subtrees) != 2 || entries < 0 || subtrees < 0) return false;
  at = line_end + 1;
  if (at + 20 > data.size()) return false;
  auto id = hex_of(reinterpret_cast<const unsigned char*>(data.data() + at));
  at += 20;
  const std::string path = root ? std::string() : parent.empty() ? name : parent + "/" + name;
  if (root)
    tree.root_id = std::move(id);
  else
    tree.directories.emplace(path, std::move(id));
  for (long i = 0; i < subtrees; ++i) {
    if (!read_cached_tree(data, at, path, false, tree)) return false;
  }
  return true;
}

// One entry of an index file: where it starts, its flags, and its path.
struct EntryAt {
  std::size_t at = 0;
  unsigned flags = 0;
  std::size_t name_at = 0;
  std::size_t name_length = 0;
};

// Walks the entries of an index file (versions 2 and 3, the ones git writes for the store). Header: "DIRC", the
// version, the number of entries. Each entry: 62 bytes of stat data, object id and flags (2 bytes more in version
// 3 when the extended flag is set), the path (its length in the flags' low 12 bits, 0xFFF for a longer one), and
// NULs up to a multiple of 8 bytes. `visit` answers false to give up on the file. The offset after the last entry
// (where the extensions begin); nullopt when the file is not in that form or `visit` gave up.
template <class Visit>
std::optional<std::size_t> walk_entries(const std::string& data, Visit&& visit) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
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
    if (!visit(EntryAt{at, flags, name_at, length})) return std::nullopt;
    at = (name_at - at + length + 8) / 8 * 8 + at;  // the entry, its path's NUL and the padding
  }
  return at;
}

}  // namespace

std::string IndexTree::id_of(const File& file) const {
  return hex_of(reinterpret_cast<const unsigned char*>(bytes.data()) + file.id_at);
}

std::string IndexTree::listing() const {
  std::string listing;
  for (const auto& [path, id] : directories) listing.append("040000 tree ").append(id).append("\t").append(path).push_back('\0');
  for (const auto& file : files) {
    char mode[16];
    std::snprintf(mode, sizeof mode, "%06o", static_cast<unsigned>(file.mode));
    listing.append(mode).append((file.mode & 0170000) == 0160000 ? " commit " : " blob ").append(id_of(file));
    listing.append("\t").append(path_of(file)).push_back('\0');
  }
  return listing;
}

std::optional<IndexTree> tree_of_index(const std::filesystem::path& index) {
  const process::UniqueFd fd(::open(index.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  auto whole = read_whole(fd.get());
  if (!whole) return std::nullopt;
  IndexTree tree;
  tree.bytes = std::move(*whole);
  const std::string& data = tree.bytes;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  if (data.size() < 12 + 20 || data.size() > UINT32_MAX) return std::nullopt;
  tree.files.reserve(data.size() / 64);  // an entry takes 64 bytes at the least; a count read from the file could lie
  // Each entry's mode is at byte 24 of it, its object id at 40.
  const auto entries_end = walk_entries(data, [&](const EntryAt& entry) {
    if ((entry.flags & 0x3000) != 0) return false;  // a merge stage: never in the store's index
    tree.files.push_back(IndexTree::File{static_cast<std::uint32_t>(entry.name_at),
                                         static_cast<std::uint32_t>(entry.name_length), big_endian32(bytes + entry.at + 24),
                                         static_cast<std::uint32_t>(entry.at + 40)});
    return true;
  });
  if (!entries_end) return std::nullopt;
  std::size_t at = *entries_end;
  // The extensions, up to the file's own checksum: "<signature><size>" and the data.
  const std::string_view view(data);
  while (at + 8 <= data.size() - 20) {
    const auto size = big_endian32(bytes + at + 4);
    const bool cached_trees = std::memcmp(bytes + at, "TREE", 4) == 0;
    at += 8;
    if (at + size > data.size() - 20) return std::nullopt;
    if (cached_trees) {
      std::size_t node = 0;
      if (!read_cached_tree(view.substr(at, size), node, "", true, tree)) return std::nullopt;
      return tree;
    }
    at += size;
  }
  return std::nullopt;  // no cache of tree ids
}

std::optional<std::set<std::string>> indexed_among(const std::filesystem::path& index,
                                                   const std::set<std::string>& paths) {
  std::set<std::string> found;
  const process::UniqueFd fd(::open(index.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno == ENOENT ? std::optional(found) : std::nullopt;
  const auto whole = read_whole(fd.get());
  if (!whole) return std::nullopt;
  const std::string& data = *whole;
  const std::unordered_set<std::string_view> wanted(paths.begin(), paths.end());
  const auto walked = walk_entries(data, [&](const EntryAt& entry) {
    const std::string_view name(data.data() + entry.name_at, entry.name_length);
    if (wanted.count(name) != 0) found.emplace(name);
    return true;
  });
  if (!walked) return std::nullopt;
  return found;
}

}  // namespace switchboard::checkpoint
