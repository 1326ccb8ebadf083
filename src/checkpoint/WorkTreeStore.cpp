#include "checkpoint/WorkTreeStore.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <utility>

#include <spdlog/spdlog.h>

#include "checkpoint/BlobStream.h"
#include "checkpoint/PatchFiles.h"
#include "checkpoint/IgnoredPaths.h"
#include "checkpoint/IndexEntries.h"
#include "checkpoint/TreePath.h"
#include "process/UniqueFd.h"

namespace switchboard::checkpoint {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTempSuffix = ".switchboard-restore";

// A checkpoint id is a tree's full object name. Anything else is refused before it reaches git's command line.
bool is_checkpoint_id(std::string_view id) {
  return id.size() == 40 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    const auto end = text.find(separator);
    parts.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return parts;
}

// A path as a line of `git hash-object --stdin-paths`, which strips a carriage return from the end of each line
// and takes a line that starts with a quote for a C-quoted one: a path with a control byte (a carriage return, a
// newline), a quote or a backslash is given quoted, as git's quote_c_style writes it (escapes and octal).
std::string path_line(std::string_view path) {
  const bool plain = std::none_of(path.begin(), path.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f || c == '"' || c == '\\';
  });
  if (plain) return std::string(path);
  std::string quoted("\"");
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted.push_back('\\');
      quoted.push_back(c);
    } else if (byte < 0x20 || byte == 0x7f) {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", static_cast<unsigned>(byte));
      quoted.append(octal);
    } else {
      quoted.push_back(c);
    }
  }
  quoted.push_back('"');
  return quoted;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Writes `content` to `path` through a temporary file renamed over it: a reader, or a crash, sees the old file or
// the new one, never a part.
bool write_atomically(const fs::path& path, std::string_view content) {
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out.write(content.data(), static_cast<std::streamsize>(content.size()))) return false;
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  return !error;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The number of entries the index holds (its header: "DIRC", version, count), 0 if there is none.
std::size_t index_entries(const fs::path& index) {
  std::ifstream in(index, std::ios::binary);
  unsigned char header[12];
  if (!in.read(reinterpret_cast<char*>(header), sizeof header) || std::memcmp(header, "DIRC", 4) != 0) return 0;
  return (std::size_t{header[8]} << 24) | (std::size_t{header[9]} << 16) | (std::size_t{header[10]} << 8) |
         std::size_t{header[11]};
}

bool safe_relative(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  for (const auto part : split(path, '/')) {
    if (part.empty() || part == "." || part == ".." || part == ".git") return false;
  }
  return true;
}

fs::path temporary_for(const fs::path& target) {
  return target.parent_path() / ("." + target.filename().string() + std::string(kTempSuffix));
}

// The permission bits a file written back gets. A file there now keeps its own (a 0600 secret stays 0600): the
// checkpoint only decides its executable bits, which is all git records. A file the restore creates gets git's
// 0644 or 0755, less the umask (applied by the kernel at its creation).
mode_t kept_permissions(mode_t now, bool executable) {
  mode_t permissions = now & 0777;
  return executable ? permissions | ((permissions & 0444) >> 2) : permissions & ~mode_t{0111};
}

// Writes one file of a checkpoint into the working tree: a regular file (with its executable bit) or a symbolic
// link, made under a temporary name beside it and renamed over it, all relative to the directory `place` reached
// without following a link. Returns what went wrong, if anything.
std::optional<std::string> write_entry(const TreePath& place, std::uint32_t mode, std::string_view content) {
  const int directory = place.parent();
  const std::string temporary = "." + place.name() + std::string(kTempSuffix);
  if (mode == 0120000) {
    if (::symlinkat(std::string(content).c_str(), directory, temporary.c_str()) != 0) return std::strerror(errno);
  } else {
    const bool executable = mode == 0100755;
    const int fd = ::openat(directory, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            executable ? 0777 : 0666);
    if (fd < 0) return std::strerror(errno);
    const auto fail = [&](int error) {
      ::close(fd);
      ::unlinkat(directory, temporary.c_str(), 0);
      return std::string(std::strerror(error));
    };
    struct stat now {};
    if (::fstatat(directory, place.name().c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(now.st_mode) &&
        ::fchmod(fd, kept_permissions(now.st_mode, executable)) != 0)  // before any byte is in it
      return fail(errno);
    std::size_t written = 0;
    while (written < content.size()) {
      const ssize_t put = ::write(fd, content.data() + written, content.size() - written);
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) return fail(errno);
      written += static_cast<std::size_t>(put);
    }
    ::close(fd);
  }
  if (::renameat(directory, temporary.c_str(), directory, place.name().c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlinkat(directory, temporary.c_str(), 0);
    return reason;
  }
  return std::nullopt;
}

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

void add_skip(std::vector<std::string>& skipped, std::string path) { skipped.push_back(std::move(path)); }

// A restore that stops part way: once it has changed a file the tree is half restored (RestoreIncomplete), before
// that nothing changed (StoreUnavailable). Either way `before_id` holds the tree as it was.
CheckpointError incomplete_or_unavailable(std::size_t changed, const std::string& reason, const std::string& before_id) {
  if (changed == 0)
    return CheckpointError{CheckpointError::Code::StoreUnavailable,
                           reason + "; nothing was changed (the tree before the restore is checkpoint " + before_id + ")",
                           before_id};
  return CheckpointError{CheckpointError::Code::RestoreIncomplete,
                         reason + "; the restore stopped part way (" + std::to_string(changed) +
                             " file(s) restored, the rest as they were): restoring checkpoint " + before_id +
                             " puts the tree back as it was before",
                         before_id};
}

}  // namespace

struct WorkTreeStore::RawChange {
  std::uint32_t old_mode = 0;
  std::uint32_t new_mode = 0;
  std::string new_id;
  char status = 'M';
  std::string path;
};

std::string store_name_for(const fs::path& work_tree) {
  std::string base = work_tree.filename().string();
  std::string safe;
  for (const char c : base) {
    if (safe.size() == 32) break;
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    safe.push_back(plain ? c : '_');
  }
  if (safe.empty()) safe = "root";
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(work_tree.string())));
  return safe + "-" + hash;
}

WorkTreeStore::WorkTreeStore(const GitProcess& git, fs::path directory, fs::path work_tree,
                             const CheckpointOptions& options)
    : m_git(git),
      m_directory(std::move(directory)),
      m_place{m_directory / "git", m_directory / "index", std::move(work_tree)},
      m_options(options),
      m_watch(m_place.work_tree) {}

CheckpointResult<void> WorkTreeStore::open() {
  std::error_code error;
  for (const auto* sub : {"git/objects", "git/refs", "git/info", "skipped"}) {
    fs::create_directories(m_directory / sub, error);
    if (error) return store_unavailable("cannot create the checkpoint store " + m_directory.string() + ": " + error.message());
  }
  // A repository of our own, made by hand so that no template (and no hook) is copied in: what git needs to
  // recognise one, and a configuration that makes no difference between one machine's git and another's.
  const std::pair<const char*, std::string_view> files[] = {
      {"git/HEAD", "ref: refs/heads/checkpoints\n"},
      {"git/config",
       "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tsymlinks = true\n\tbare = false\n"
       "\tautocrlf = false\n\tlogAllRefUpdates = false\n\tuntrackedCache = false\n[gc]\n\tauto = 0\n"},
      {"git/info/attributes", "* -text -eol -filter -ident -working-tree-encoding\n"},
  };
  for (const auto& [name, content] : files) {
    const auto path = m_directory / name;
    if (read_file(path) == std::string(content)) continue;
    if (!write_atomically(path, content)) return store_unavailable("cannot write " + path.string());
  }
  // The store, and whatever else the daemon keeps, is not the user's: excluded where the tree holds it (a
  // session whose working directory is the home directory would otherwise checkpoint its own checkpoints).
  std::string exclude;
  auto excluded = m_options.excluded;
  excluded.push_back(m_options.root);
  for (const auto& path : excluded) {
    const auto relative = path.lexically_normal().lexically_relative(m_place.work_tree);
    if (relative.empty() || relative == "." || *relative.begin() == "..") continue;
    exclude += "/" + relative.string() + "/\n";
  }
  if (read_file(m_directory / "git/info/exclude").value_or("") != exclude &&
      !write_atomically(m_directory / "git/info/exclude", exclude))
    return store_unavailable("cannot write " + (m_directory / "git/info/exclude").string());
  m_exclude = exclude;
  const auto worktree_note = m_place.work_tree.string() + "\n";
  if (read_file(m_directory / "worktree") != worktree_note) write_atomically(m_directory / "worktree", worktree_note);
  // Only this process uses the store (one daemon per data directory), so a lock left now is a crashed run's.
  const auto lock = fs::path(m_place.index_file.string() + ".lock");
  if (fs::remove(lock, error)) spdlog::info("checkpoints: removed a stale index lock in {}", m_directory.string());
  recover_interrupted_restore();
  return {};
}

void WorkTreeStore::recover_interrupted_restore() const {
  const auto journal_path = m_directory / "restore.journal";
  const auto journal = read_file(journal_path);
  if (!journal) return;
  const auto lines = split(*journal, '\0');
  std::size_t removed = 0;
  const process::UniqueFd tree(::open(m_place.work_tree.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (std::size_t i = 1; tree && i < lines.size(); ++i) {
    // Reached from the tree without following a link, as the restore wrote it.
    const auto relative = fs::path(std::string(lines[i])).lexically_relative(m_place.work_tree).generic_string();
    if (!safe_relative(relative)) continue;
    const TreePath place(tree.get(), relative, /*create=*/false);
    if (place.reach() == TreePath::Reach::Opened && ::unlinkat(place.parent(), place.name().c_str(), 0) == 0) ++removed;
  }
  spdlog::warn(
      "checkpoints: a restore of {} was interrupted; every file is either as it was or as restored ({} temporary "
      "file(s) removed); the tree as it was before that restore is checkpoint {}",
      m_place.work_tree.string(), removed, lines.empty() ? std::string_view("unknown") : lines[0]);
  std::error_code error;
  fs::remove(journal_path, error);
}

CheckpointResult<FullSnapshot> WorkTreeStore::snapshot() {
  std::error_code error;
  if (!fs::is_directory(m_place.work_tree, error))
    return CheckpointError{CheckpointError::Code::WorkTreeUnreadable,
                           "the working directory " + m_place.work_tree.string() + " is not a readable directory"};
  auto taken = snapshot_once();
  if (taken) consolidate_packs();
  if (!taken) {  // whatever the watch saw is consumed: the next snapshot reads the whole tree
    m_watch.stop();
    m_last.reset();
    m_tree.reset();
  }
  if (taken || !fs::exists(m_place.index_file)) return taken;
  // An index git cannot read (a disk that lost its last write): it is only a cache of what the tree was, so the
  // snapshot starts over without it and hashes every file again.
  spdlog::warn("checkpoints: {}; the index of {} is rebuilt", taken.error().message, m_directory.string());
  fs::remove(m_place.index_file, error);
  m_index_behind.clear();
  return snapshot_once();
}

void WorkTreeStore::consolidate_packs() {
  // Each snapshot adds a pack (see snapshot_once); git looks for an object in every pack, so once there are many
  // they are merged into one. No ref names a checkpoint (they are trees listed in our own record), so
  // --keep-unreachable is what keeps every object: without it repack -a would drop them all.
  constexpr std::size_t kMaxPacks = 64;
  std::error_code error;
  std::size_t packs = 0;
  for (fs::directory_iterator it(m_place.git_dir / "objects" / "pack", error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".pack") ++packs;
  }
  if (packs <= kMaxPacks) return;
  if (auto merged = m_git.output(m_place, {"repack", "-a", "-d", "-q", "--keep-unreachable", "--no-write-bitmap-index"}, "cannot merge the checkpoint packs"); !merged) {
    spdlog::warn("checkpoints: {}", merged.error().message);  // the store stays readable with many packs
  }
}

CheckpointResult<std::set<std::string>> WorkTreeStore::ignored_directories() {
  // Ignored files one by one, and a directory ignored as a whole as "<path>/" (one that holds a file the index
  // has is listed file by file instead: it stays watched, as what it holds stays kept).
  auto listed = m_git.output(m_place, {"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"},
                             "cannot list the working tree's ignored directories");
  if (!listed) return listed.error();
  std::set<std::string> directories;
  for (const auto path : split(*listed, '\0')) {
    if (path.size() > 1 && path.back() == '/') directories.emplace(path.substr(0, path.size() - 1));
  }
  return directories;
}

std::optional<WorkTreeStore::IndexStamp> WorkTreeStore::index_stamp() const {
  struct stat st {};
  if (::stat(m_place.index_file.c_str(), &st) != 0) return std::nullopt;
  return IndexStamp{static_cast<std::uint64_t>(st.st_ino), static_cast<std::int64_t>(st.st_size),
                    st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec,
                    st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec};
}

std::optional<std::string> WorkTreeStore::listing_without_git(const std::set<std::string>& paths) const {
  const auto indexed = indexed_among(m_place.index_file, paths);
  if (!indexed) return std::nullopt;
  std::string records;
  for (const auto& path : paths) {
    if (indexed->count(path) != 0) {
      records.append("C ").append(path).push_back('\0');
      continue;
    }
    struct stat st {};
    if (::lstat((m_place.work_tree / path).c_str(), &st) != 0) continue;  // made and removed again
    if (S_ISDIR(st.st_mode)) return std::nullopt;
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;  // git lists no other kind of new file
    if (!surely_not_ignored(m_place.work_tree, m_exclude, path)) return std::nullopt;
    records.append("? ").append(path).push_back('\0');
  }
  return records;
}

CheckpointResult<FullSnapshot> WorkTreeStore::snapshot_once() {
  // What changed since the index was last updated: files git does not have yet ("?", not ignored) and files
  // whose content, type or presence differs from the index ("C"), found by comparing stat data first.
  //
  // Which files git is asked about: after a snapshot whose index is still as it left it, and a watch that saw
  // every change since, only the paths the watch saw change and those that snapshot skipped (each is reported
  // again, as a listing of the whole tree would); git's own rules (ignores, nested repositories, stat data) then
  // judge each. Otherwise the whole tree, with the watch started again first: a change made while git reads the
  // tree is the next snapshot's.
  constexpr std::size_t kMaxNamedPaths = 2000;
  std::vector<std::string> listing{"ls-files", "-z", "-t", "--others", "--modified", "--exclude-standard"};
  const auto previous = std::exchange(m_last, std::nullopt);
  bool whole_tree = true;
  std::set<std::string> seen_paths;
  if (previous && index_stamp() == m_last_index) {
    auto seen = m_watch.changes();
    if (seen.complete && seen.paths.empty()) {
      if (m_options.after_listing) m_options.after_listing(false);
      m_last = previous;
      return *previous;  // nothing changed: the same checkpoint
    }
    if (seen.complete && seen.paths.size() + previous->skipped.size() <= kMaxNamedPaths) {
      whole_tree = false;
      listing.emplace_back("--");
      for (const auto& path : seen.paths) listing.push_back(":(literal)" + path);
      for (const auto& path : previous->skipped) listing.push_back(":(literal)" + path);
      seen_paths = std::move(seen.paths);
    }
  }
  // The paths seen, recorded from the last snapshot's tree without git's index when it can be: two light gits
  // (hash-object for the changed files, mktree for the directories above them) instead of two that each read, or
  // read and rewrite, the index of every file.
  if (!whole_tree && previous->skipped.empty() && !m_options.always_through_index && hold_tree(previous->id)) {
    auto built = snapshot_from_tree(seen_paths);
    if (!built) return built.error();
    if (*built) {
      if (m_options.after_listing) m_options.after_listing(false);
      m_last = std::move(**built);
      return *m_last;
    }
  }
  if (!m_index_behind.empty()) {
    if (auto caught = catch_up_index(); !caught) return caught.error();
    if (!whole_tree) m_last_index = index_stamp();
  }
  if (whole_tree && m_watchable) {
    auto ignored = ignored_directories();
    if (!ignored) return ignored.error();
    if (!m_watch.start(*ignored)) {
      m_watchable = false;
      spdlog::info("checkpoints: {} cannot be watched (inotify unavailable, or past its limits); each of its "
                   "snapshots reads the whole tree", m_place.work_tree.string());
    }
  }
  if (m_options.after_listing) m_options.after_listing(whole_tree);
  // The paths seen, judged without git when they can be (a skipped file of the last snapshot, a nested
  // repository among them, is always git's to judge again).
  std::optional<std::string> listed;
  if (!whole_tree && previous->skipped.empty()) listed = listing_without_git(seen_paths);
  if (!listed) {
    auto asked = m_git.output(m_place, listing, "cannot list the working tree's changes");
    if (!asked) return asked.error();
    listed = std::move(*asked);
  }
  FullSnapshot snapshot;
  std::string update;        // paths for update-index --add --remove --replace: new, changed or gone
  std::string force_remove;  // paths whose file is still there but is no longer kept (it grew past the limit)
  std::size_t entries = index_entries(m_place.index_file);
  std::vector<std::string_view> new_files;
  std::string last;
  for (const auto record : split(*listed, '\0')) {
    if (record.size() < 3 || record[1] != ' ') continue;
    const bool tracked = record[0] != '?';
    const auto path = record.substr(2);
    if (path == last) continue;  // a path both modified and deleted is listed twice
    last = std::string(path);
    if (path.back() == '/') {  // a repository nested in the tree: its own files are its own
      add_skip(snapshot.skipped, std::string(path));
      continue;
    }
    struct stat st {};
    const bool present = ::lstat((m_place.work_tree / std::string(path)).c_str(), &st) == 0;
    const bool keepable = present && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode));
    if (present && !keepable && !S_ISDIR(st.st_mode)) {  // a fifo, a socket, a device
      add_skip(snapshot.skipped, std::string(path));
      if (tracked) force_remove.append(path).push_back('\0');
      continue;
    }
    if (keepable && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > m_options.limits.max_file_bytes) {
      add_skip(snapshot.skipped, std::string(path));
      if (tracked) force_remove.append(path).push_back('\0');
      continue;
    }
    if (!tracked) {
      new_files.push_back(path);
      continue;
    }
    if (!keepable && entries > 0) --entries;  // gone (or now a directory): update-index removes it
    update.append(path).push_back('\0');
  }
  for (const auto path : new_files) {
    if (entries >= m_options.limits.max_files) {
      add_skip(snapshot.skipped, std::string(path));
      continue;
    }
    ++entries;
    update.append(path).push_back('\0');
  }
  if (m_options.before_index_update) m_options.before_index_update();
  if (!whole_tree && update.empty() && force_remove.empty()) {
    // The paths seen changing are as the index has them (a file touched, or made and removed): the same tree.
    snapshot.id = previous->id;
    std::sort(snapshot.skipped.begin(), snapshot.skipped.end());
    if (snapshot.skipped != previous->skipped) record_skipped(snapshot.id, snapshot.skipped);
    m_last = snapshot;
    return snapshot;
  }
  if (!update.empty()) {
    // Many blobs go straight into one pack per snapshot (git's bulk check-in, used for blobs over
    // core.bigFileThreshold) instead of a file each: a first checkpoint of 10,000 files writes one pack, not
    // 10,000 files, in a tenth of the time and a thirtieth of the disk. Only here: for diffs git reads files over
    // that threshold as binary. A few blobs (a turn's changes) are written as files of their own: a pack would
    // cost its index and two fsyncs each time, and its count would soon make consolidate_packs repack the store.
    constexpr std::size_t kPackFrom = 64;
    const auto paths = static_cast<std::size_t>(std::count(update.begin(), update.end(), '\0'));
    std::vector<std::string> args{"update-index", "-z", "--add", "--remove", "--replace", "--stdin"};
    if (paths >= kPackFrom) args.insert(args.begin(), {"-c", "core.bigFileThreshold=1"});
    auto updated = m_git.output(m_place, args, "cannot record the working tree", update);
    if (!updated) return updated.error();
  }
  if (!force_remove.empty()) {
    auto removed = m_git.output(m_place, {"update-index", "-z", "--force-remove", "--stdin"},
                                "cannot record the working tree", force_remove);
    if (!removed) return removed.error();
  }
  auto tree = m_git.output(m_place, {"write-tree"}, "cannot write the checkpoint");
  if (!tree) return tree.error();
  snapshot.id = trimmed(std::move(*tree));
  if (!is_checkpoint_id(snapshot.id)) return store_unavailable("git wrote no checkpoint id");
  std::sort(snapshot.skipped.begin(), snapshot.skipped.end());
  record_skipped(snapshot.id, snapshot.skipped);
  if (m_watch.active()) {
    m_last = snapshot;
    m_last_index = index_stamp();
    // Held now, for the next snapshot to build on (it is used only after a snapshot that skipped nothing): the
    // index write-tree has just written, with its cache of tree ids; no git runs for it, and a directory is read
    // from it only when a snapshot needs it.
    if (snapshot.skipped.empty() && !m_options.always_through_index) hold_tree(snapshot.id, /*index_holds_it=*/true);
  }
  return snapshot;
}

bool WorkTreeStore::hold_tree(const std::string& id, bool index_holds_it) {
  if (m_tree && m_tree->root_id() == id) return true;
  m_tree.reset();
  if (index_holds_it) {
    if (auto indexed = tree_of_index(m_place.index_file); indexed && indexed->root_id == id) {
      m_tree.emplace();
      m_tree->load(std::move(*indexed));
      return true;
    }
  }
  auto listed = m_git.output(m_place, {"ls-tree", "-r", "-t", "-z", "--full-tree", id}, "cannot read a checkpoint");
  if (!listed) {
    spdlog::info("checkpoints: {}; the next snapshot of {} goes through the index", listed.error().message,
                 m_place.work_tree.string());
    return false;
  }
  CheckpointTree tree;
  if (!tree.load(*listed, id)) return false;
  m_tree = std::move(tree);
  return true;
}

CheckpointResult<void> WorkTreeStore::catch_up_index() {
  std::error_code error;
  if (!fs::exists(m_place.index_file, error)) {  // no index: the next listing hashes every file anyway
    m_index_behind.clear();
    return {};
  }
  // "<mode> <id>\t<path>" sets an entry (without stat data: git compares the file's content the next time it
  // looks); mode 0 removes one.
  std::string entries;
  for (const auto& [path, entry] : m_index_behind) {
    char head[64];
    if (entry)
      std::snprintf(head, sizeof head, "%06o %s\t", static_cast<unsigned>(entry->mode), entry->id.c_str());
    else
      std::snprintf(head, sizeof head, "000000 %s\t", std::string(40, '0').c_str());
    entries.append(head).append(path).push_back('\0');
  }
  auto updated = m_git.output(m_place, {"update-index", "-z", "--index-info"}, "cannot record the working tree", entries);
  if (!updated) return updated.error();
  m_index_behind.clear();
  return {};
}

CheckpointResult<std::optional<FullSnapshot>> WorkTreeStore::snapshot_from_tree(const std::set<std::string>& paths) {
  const std::optional<FullSnapshot> through_index;
  FullSnapshot snapshot;
  CheckpointTree::Changes changes;
  // Judged as the index's way judges them (see below): the files the tree has first, then the new files in path
  // order, each counted against the limit on the number of files.
  struct Hashed {
    std::string path;
    std::uint32_t mode;
    std::string target;  // a link's, which is its content
    bool too_large = false;
  };
  std::vector<Hashed> hashed;
  std::vector<Hashed> new_files;
  std::string unsure;  // new files an ignore pattern may reach, for git to judge
  std::size_t entries = m_tree->files();
  for (const auto& path : paths) {
    const auto kind = m_tree->kind_of(path);
    if (kind != CheckpointTree::Kind::File && kind != CheckpointTree::Kind::Absent) return through_index;
    const bool tracked = kind == CheckpointTree::Kind::File;
    struct stat st {};
    if (::lstat((m_place.work_tree / path).c_str(), &st) != 0) {
      if (tracked) {
        changes[path] = std::nullopt;
        if (entries > 0) --entries;
      }
      continue;  // gone, or made and removed again
    }
    if (S_ISDIR(st.st_mode)) return through_index;
    const bool keepable = S_ISREG(st.st_mode) || S_ISLNK(st.st_mode);
    if (!tracked && !keepable) continue;  // git lists no other kind of new file
    const bool too_large =
        S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > m_options.limits.max_file_bytes;
    if (tracked && (!keepable || too_large)) {
      add_skip(snapshot.skipped, path);
      changes[path] = std::nullopt;  // still counted, as the index's way counts it
      continue;
    }
    Hashed file{path, S_ISLNK(st.st_mode) ? 0120000u : (st.st_mode & S_IXUSR) ? 0100755u : 0100644u, {}, too_large};
    if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<std::size_t>(st.st_size) + 1, '\0');
      const ssize_t length = ::readlink((m_place.work_tree / path).c_str(), target.data(), target.size());
      if (length < 0 || static_cast<std::size_t>(length) >= target.size()) return through_index;  // changed meanwhile
      target.resize(static_cast<std::size_t>(length));
      file.target = std::move(target);
    }
    // check-ignore reads each name as a pathspec (":memory:" would be magic): "./" makes it the file it names.
    if (!tracked && !surely_not_ignored(m_place.work_tree, m_exclude, path)) unsure.append("./").append(path).push_back('\0');
    (tracked ? hashed : new_files).push_back(std::move(file));
  }
  // A new file a pattern may reach: git's own matching, without its index (the file is new to the checkpoint,
  // whatever an index behind still has). It prints the ignored ones; exit 1 when there are none.
  std::set<std::string, std::less<>> ignored;
  if (!unsure.empty()) {
    auto judged = m_git.run(m_place, {"check-ignore", "-z", "--stdin", "--no-index"}, unsure);
    if (!judged) return judged.error();
    if (judged->exit_code != 0 && judged->exit_code != 1) return through_index;
    for (const auto path : split(judged->out, '\0')) {
      if (path.empty()) continue;
      if (path.size() <= 2 || path.substr(0, 2) != "./") return through_index;  // not a name it was given
      ignored.emplace(path.substr(2));
    }
  }
  for (auto& file : new_files) {
    if (ignored.count(file.path) != 0) continue;
    if (file.too_large || entries >= m_options.limits.max_files) {
      add_skip(snapshot.skipped, file.path);
      continue;
    }
    ++entries;
    hashed.push_back(std::move(file));
  }

  if (!hashed.empty()) {
    // A link's content is its target, which hash-object reads from a file of the store's (it would follow the
    // link itself).
    std::string input;
    std::vector<fs::path> targets;
    for (const auto& file : hashed) {
      if (file.mode != 0120000) {
        input.append(path_line(file.path)).push_back('\n');
        continue;
      }
      targets.push_back(m_directory / ("link-target-" + std::to_string(targets.size())));
      if (!write_atomically(targets.back(), file.target)) return store_unavailable("cannot write " + targets.back().string());
      input.append(path_line(targets.back().string())).push_back('\n');
    }
    auto ids = m_git.output(m_place, {"hash-object", "-w", "--no-filters", "--stdin-paths"},
                            "cannot record the working tree", input);
    std::error_code error;
    for (const auto& target : targets) fs::remove(target, error);
    if (!ids) {
      // A file removed since it was looked at (hash-object stops at it): the index's way takes that in its stride.
      spdlog::debug("checkpoints: {}; the snapshot of {} goes through the index", ids.error().message,
                    m_place.work_tree.string());
      return through_index;
    }
    const auto lines = split(*ids, '\n');
    if (lines.size() < hashed.size()) return store_unavailable("git hashed fewer files than it was given");
    for (std::size_t i = 0; i < hashed.size(); ++i) {
      if (!is_checkpoint_id(lines[i])) return store_unavailable("git gave no object id for " + hashed[i].path);
      CheckpointTree::Entry entry{hashed[i].mode, std::string(lines[i])};
      const auto* kept = m_tree->file(hashed[i].path);
      if (kept == nullptr || !(*kept == entry)) changes[hashed[i].path] = std::move(entry);
    }
  }
  if (m_options.before_index_update) m_options.before_index_update();
  auto root = m_tree->apply(m_git, m_place, changes);
  if (!root) return root.error();
  if (!*root) return through_index;
  snapshot.id = std::move(**root);
  std::sort(snapshot.skipped.begin(), snapshot.skipped.end());
  record_skipped(snapshot.id, snapshot.skipped);
  for (auto& [path, entry] : changes) m_index_behind[path] = std::move(entry);
  return std::optional<FullSnapshot>(std::move(snapshot));
}

std::vector<std::string> WorkTreeStore::skipped_of(const std::string& id) const {
  std::vector<std::string> skipped;
  if (const auto text = read_file(m_directory / "skipped" / id)) {
    for (const auto path : split(*text, '\0'))
      if (!path.empty()) skipped.emplace_back(path);
  }
  return skipped;
}

void WorkTreeStore::record_skipped(const std::string& id, const std::vector<std::string>& skipped) const {
  // A checkpoint is a tree id, and turns that start from the same tree may have left out different files (a
  // skipped file deleted since leaves the same tree): the list keeps what any of them left out, so a restore to
  // that tree leaves each alone.
  if (skipped.empty()) return;
  const auto path = m_directory / "skipped" / id;
  auto known = skipped_of(id);
  std::set<std::string> all(known.begin(), known.end());
  const auto before = all.size();
  all.insert(skipped.begin(), skipped.end());
  if (all.size() == before) return;  // nothing new
  std::string text;
  for (const auto& file : all) text.append(file).push_back('\0');
  if (!write_atomically(path, text)) spdlog::warn("checkpoints: cannot write {}", path.string());
}

CheckpointResult<void> WorkTreeStore::require_trees(const std::vector<std::string>& ids) {
  std::string asked;
  for (const auto& id : ids) {
    if (!is_checkpoint_id(id))
      return CheckpointError{CheckpointError::Code::UnknownCheckpoint, "'" + id.substr(0, 100) + "' is not a checkpoint id"};
    asked.append(id).push_back('\n');
  }
  // One git for every id: "<id> <type> <size>" for each, or "<id> missing".
  auto types = m_git.output(m_place, {"cat-file", "--batch-check"}, "cannot read the checkpoint store", asked);
  if (!types) return types.error();
  const auto lines = split(*types, '\n');
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string expected = ids[i] + " tree ";
    if (i >= lines.size() || lines[i].substr(0, expected.size()) != expected)
      return CheckpointError{CheckpointError::Code::UnknownCheckpoint,
                             "no checkpoint " + ids[i] + " for " + m_place.work_tree.string()};
  }
  return {};
}

CheckpointResult<std::vector<WorkTreeStore::RawChange>> WorkTreeStore::raw_changes(const std::string& from,
                                                                                   const std::string& to) {
  auto raw = m_git.output(m_place, {"diff-tree", "-r", "-z", "--no-renames", from, to}, "cannot compare checkpoints");
  if (!raw) return raw.error();
  std::vector<RawChange> changes;
  const auto parts = split(*raw, '\0');
  for (std::size_t i = 0; i + 1 < parts.size(); i += 2) {
    // ":<old mode> <new mode> <old id> <new id> <status>", then the path
    const auto fields = split(parts[i].substr(parts[i].empty() ? 0 : 1), ' ');
    if (fields.size() < 5 || fields[4].empty()) return store_unavailable("cannot read git's comparison of checkpoints");
    RawChange change;
    change.old_mode = static_cast<std::uint32_t>(std::stoul(std::string(fields[0]), nullptr, 8));
    change.new_mode = static_cast<std::uint32_t>(std::stoul(std::string(fields[1]), nullptr, 8));
    change.new_id = std::string(fields[3]);
    change.status = fields[4].front();
    change.path = std::string(parts[i + 1]);
    changes.push_back(std::move(change));
  }
  return changes;
}

CheckpointResult<std::vector<protocol::FileChange>> WorkTreeStore::file_changes(
    const std::vector<RawChange>& raw, const std::string& from, const std::string& to,
    const std::set<std::string>& leave_out) {
  if (raw.empty()) return std::vector<protocol::FileChange>{};
  auto patch = m_git.output(m_place, {"diff-tree", "-r", "-p", "--no-renames", "--no-color", from, to},
                            "cannot compare checkpoints");
  if (!patch) return patch.error();
  PatchFiles patch_files(*patch);
  std::vector<protocol::FileChange> files;
  for (const auto& change : raw) {
    auto file = patch_files.next(change.path, change.status);  // taken even when left out: the sections go in order
    if (leave_out.count(change.path) != 0) continue;
    if (change.old_mode == 0160000 || change.new_mode == 0160000) continue;  // nested repositories are not kept
    files.push_back(std::move(file));
  }
  if (patch_files.left() != 0)
    spdlog::warn("checkpoints: {} patch sections for {} changes between {} and {}", patch_files.sections(), raw.size(),
                 from, to);
  return files;
}

CheckpointResult<TreeChanges> WorkTreeStore::diff(const std::string& from, const std::optional<std::string>& to) {
  if (auto known = to ? require_trees({from, *to}) : require_trees({from}); !known) return known.error();
  std::string to_id;
  std::vector<std::string> skipped = skipped_of(from);
  if (to) {
    to_id = *to;
    for (auto& path : skipped_of(to_id)) skipped.push_back(std::move(path));
  } else {
    auto now = snapshot();
    if (!now) return now.error();
    to_id = now->id;
    for (auto& path : now->skipped) skipped.push_back(std::move(path));
  }
  std::set<std::string> leave_out(skipped.begin(), skipped.end());
  auto raw = raw_changes(from, to_id);
  if (!raw) return raw.error();
  auto files = file_changes(*raw, from, to_id, leave_out);
  if (!files) return files.error();
  TreeChanges changes;
  changes.files = std::move(*files);
  changes.skipped.assign(leave_out.begin(), leave_out.end());
  return changes;
}

CheckpointResult<Restored> WorkTreeStore::restore(const std::string& to) {
  if (auto known = require_trees({to}); !known) return known.error();
  auto before = snapshot();
  if (!before) return before.error();
  auto changes = raw_changes(before->id, to);
  if (!changes) return changes.error();
  // Every path is reached from this directory without following a link (TreePath).
  const process::UniqueFd tree(::open(m_place.work_tree.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!tree)
    return CheckpointError{CheckpointError::Code::WorkTreeUnreadable,
                           "the working directory " + m_place.work_tree.string() + " cannot be opened: " + std::strerror(errno)};

  Restored restored;
  restored.before_id = before->id;
  // What either end left out is not the checkpoints' to change: a file skipped now stays as it is, and one the
  // target skipped (too large, or too many files then) is not deleted for being absent from it.
  std::set<std::string> leave_out(before->skipped.begin(), before->skipped.end());
  for (auto& path : skipped_of(to)) leave_out.insert(std::move(path));
  std::vector<const RawChange*> deletions;
  std::vector<const RawChange*> writes;
  for (const auto& change : *changes) {
    if (!safe_relative(change.path)) {
      spdlog::warn("checkpoints: a checkpoint of {} names the path '{}', which is not restored",
                   m_place.work_tree.string(), change.path);
      leave_out.insert(change.path);
      continue;
    }
    if (leave_out.count(change.path) != 0) continue;
    if (change.status == 'D') {
      if (change.old_mode != 0160000) deletions.push_back(&change);
      continue;
    }
    if (change.new_mode == 0160000) continue;
    writes.push_back(&change);
  }

  // Deletions first, so that a directory the checkpoint has as a file (or the reverse) is out of the way.
  std::string first_failure;
  std::size_t failures = 0;
  std::size_t changed = 0;  // files removed or written back so far
  const auto failed = [&](const std::string& path, const std::string& reason) {
    if (failures++ == 0) first_failure = path + ": " + reason;
    leave_out.insert(path);
  };
  // A directory on the way that is a link now (an ignored or skipped one) may lead anywhere, out of the tree too:
  // what lies beyond it is not the tree's, and is left alone.
  const auto beyond_link = [&](const std::string& path) {
    spdlog::info("checkpoints: {} in {} lies beyond a symbolic link, and is not restored", path, m_place.work_tree.string());
    leave_out.insert(path);
  };
  for (const auto* change : deletions) {
    TreePath place(tree.get(), change->path, /*create=*/false);
    if (place.reach() == TreePath::Reach::Missing) continue;
    if (place.reach() == TreePath::Reach::Link) {
      beyond_link(change->path);
      continue;
    }
    if (place.reach() == TreePath::Reach::Failed) {
      failed(change->path, place.reason());
      continue;
    }
    if (::unlinkat(place.parent(), place.name().c_str(), 0) != 0) {
      if (errno != ENOENT) failed(change->path, std::strerror(errno));
      continue;
    }
    ++changed;
    place.remove_empty_directories();
  }
  // A path the checkpoint has that exists now though the tree's checkpoint lacks it is ignored, or was skipped:
  // it is the user's, and stays.
  std::vector<const RawChange*> to_write;
  for (const auto* change : writes) {
    TreePath place(tree.get(), change->path, /*create=*/false);
    if (place.reach() == TreePath::Reach::Link) {
      beyond_link(change->path);
      continue;
    }
    struct stat st {};
    if (change->status == 'A' && place.reach() == TreePath::Reach::Opened &&
        ::fstatat(place.parent(), place.name().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      leave_out.insert(change->path);
      continue;
    }
    to_write.push_back(change);
  }
  // The journal names the temporary files before any exists: a crash from here on leaves each file either as it
  // was or as restored, and the next start removes the temporary files (open()).
  std::string journal = before->id;
  journal.push_back('\0');
  for (const auto* change : to_write) journal.append(temporary_for(m_place.work_tree / change->path).string()).push_back('\0');
  const auto journal_path = m_directory / "restore.journal";
  if (!to_write.empty() && !write_atomically(journal_path, journal))
    return incomplete_or_unavailable(changed, "cannot write the restore journal in " + m_directory.string(), before->id);

  if (!to_write.empty()) {
    std::string ids;
    for (const auto* change : to_write) ids.append(change->new_id).push_back('\n');
    std::size_t written = 0;
    BlobStream stream([&](std::size_t index, std::string_view content, bool missing) {
      if (index >= to_write.size()) return;
      const auto* change = to_write[index];
      if (missing) {
        failed(change->path, "the checkpoint store lacks its content");
        return;
      }
      TreePath place(tree.get(), change->path, /*create=*/true);
      if (place.reach() == TreePath::Reach::Link) return beyond_link(change->path);
      if (place.reach() != TreePath::Reach::Opened) return failed(change->path, place.reason());
      if (auto error = write_entry(place, change->new_mode, content)) {
        failed(change->path, *error);
        return;
      }
      ++written;
      ++changed;
      if (m_options.after_restored_file) m_options.after_restored_file(written);
    });
    bool parsed = true;
    auto read = m_git.run(m_place, {"cat-file", "--batch"}, ids, [&](std::string_view chunk) {
      parsed = stream.feed(chunk);
      return parsed;
    });
    if (!read || read->exit_code != 0 || !parsed || stream.objects_seen() != to_write.size()) {
      // Every file written so far is whole; the rest are as they were. The tree before is checkpointed.
      std::error_code error;
      fs::remove(journal_path, error);
      return incomplete_or_unavailable(changed, "cannot read the checkpoint's files from the store", before->id);
    }
  }
  std::error_code error;
  fs::remove(journal_path, error);

  auto files = file_changes(*changes, before->id, to, leave_out);
  if (!files) return incomplete_or_unavailable(changed, files.error().message, before->id);
  restored.files = std::move(*files);
  for (const auto& path : leave_out) restored.skipped.push_back(path);
  if (failures > 0)
    return CheckpointError{CheckpointError::Code::RestoreIncomplete,
                           std::to_string(failures) + " file(s) could not be restored, the first " + first_failure +
                               "; the others were; the tree before the restore is checkpoint " + before->id,
                           before->id};
  return restored;
}

}  // namespace switchboard::checkpoint
