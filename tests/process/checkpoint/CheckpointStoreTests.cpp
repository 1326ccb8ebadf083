// The daemon's file checkpoints (src/checkpoint): snapshots, diffs and restores of a working tree through a git
// store of the daemon's own, in a git repository and in a plain directory; the user's repository untouched;
// .gitignore and the limits honoured; a process killed in the middle of a snapshot or a restore loses no file.

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "checkpoint/CheckpointTree.h"
#include "checkpoint/GitProcess.h"
#include "checkpoint/IgnoredPaths.h"
#include "checkpoint/IndexEntries.h"
#include "checkpoint/TreeWatch.h"
#include "support/TempDir.h"
#include "switchboard/checkpoint/CheckpointStore.h"

namespace checkpoint_store_tests {

namespace fs = std::filesystem;
using switchboard::checkpoint::CheckpointError;
using switchboard::checkpoint::CheckpointOptions;
using switchboard::checkpoint::CheckpointResult;
using switchboard::checkpoint::CheckpointStore;
using switchboard::checkpoint::Restored;
using switchboard::checkpoint::Snapshot;
using switchboard::checkpoint::TreeChanges;
using switchboard::protocol::FileChange;
using switchboard::protocol::FileChangeStatus;
using switchboard::testing::TempDir;

void write(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs a shell command in `dir`, as an agent's shell tool would.
void shell(const fs::path& dir, const std::string& command) {
  const std::string line = "cd '" + dir.string() + "' && " + command;
  REQUIRE(std::system(line.c_str()) == 0);
}

std::string shell_output(const fs::path& dir, const std::string& command) {
  const std::string line = "cd '" + dir.string() + "' && " + command;
  std::string out;
  if (FILE* pipe = ::popen(line.c_str(), "r")) {
    char buffer[4096];
    while (const auto got = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, got);
    ::pclose(pipe);
  }
  return out;
}

// Every file under `dir` with its bytes (a repository's .git: index, refs, HEAD, config, hooks, objects).
std::map<std::string, std::string> all_files(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files[fs::relative(entry.path(), dir).string()] = read(entry.path());
  }
  return files;
}

// The user's repository as git sees it, read without letting git refresh the index (GIT_OPTIONAL_LOCKS=0).
struct RepositoryState {
  std::string status;
  std::map<std::string, std::string> git_dir;
  bool operator==(const RepositoryState&) const = default;
};

RepositoryState repository_state(const fs::path& tree) {
  RepositoryState state;
  state.git_dir = all_files(tree / ".git");
  state.status = shell_output(tree, "GIT_OPTIONAL_LOCKS=0 git status --porcelain --untracked-files=all");
  return state;
}

template <class T, class Start>
CheckpointResult<T> await(boost::asio::io_context& io, Start start) {
  std::optional<CheckpointResult<T>> result;
  start([&](CheckpointResult<T> r) { result.emplace(std::move(r)); });
  io.run();
  io.restart();
  REQUIRE(result.has_value());
  return std::move(*result);
}

struct Fixture {
  TempDir data{"checkpoint-data"};
  TempDir tree_dir{"checkpoint-tree"};
  boost::asio::io_context io;
  std::optional<CheckpointStore> store;

  explicit Fixture(const std::function<void(CheckpointOptions&)>& adjust = {}) { open(adjust); }

  void open(const std::function<void(CheckpointOptions&)>& adjust = {}) {
    store.reset();
    CheckpointOptions options;
    options.root = data.path() / "checkpoints";
    if (adjust) adjust(options);
    store.emplace(io, options);
  }
  const fs::path& tree() const { return tree_dir.path(); }

  Snapshot snapshot() {
    auto r = await<Snapshot>(io, [&](auto done) { store->snapshot(tree(), done); });
    if (!r) FAIL(r.error().message);
    return *r;
  }
  TreeChanges diff(const std::string& from, std::optional<std::string> to = std::nullopt) {
    auto r = await<TreeChanges>(io, [&](auto done) { store->diff(tree(), from, to, done); });
    if (!r) FAIL(r.error().message);
    return *r;
  }
  CheckpointResult<Restored> try_restore(const std::string& to) {
    return await<Restored>(io, [&](auto done) { store->restore(tree(), to, done); });
  }
  Restored restore(const std::string& to) {
    auto r = try_restore(to);
    if (!r) FAIL(r.error().message);
    return *r;
  }
};

const FileChange* find(const std::vector<FileChange>& files, const std::string& path) {
  const auto at = std::find_if(files.begin(), files.end(), [&](const FileChange& f) { return f.path == path; });
  return at == files.end() ? nullptr : &*at;
}

std::vector<std::string> paths(const std::vector<FileChange>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.path);
  return out;
}

// The round trip every working tree gets: a shell changes, creates and deletes files; the diff shows exactly
// that; a restore undoes it; restoring the checkpoint the restore took undoes the restore.
// `same_tree` runs twice, once at the start and once after the restore, when the tree is the same again.
void round_trip(Fixture& f, const std::function<void()>& same_tree = [] {}) {
  write(f.tree() / "keep.txt", "unchanged\n");
  write(f.tree() / "edit.txt", "one\ntwo\n");
  write(f.tree() / "gone.txt", "to be deleted\n");
  write(f.tree() / "deep/dir/file.txt", "nested\n");
  const auto start = f.snapshot();
  CHECK(start.skipped.empty());
  same_tree();

  shell(f.tree(), "printf 'one\\nTWO\\n' > edit.txt && rm gone.txt && mkdir -p made/here && echo fresh > made/here/new.txt");
  const auto after = f.snapshot();
  CHECK(after.id != start.id);

  const auto changes = f.diff(start.id, after.id);
  REQUIRE(paths(changes.files) == std::vector<std::string>{"edit.txt", "gone.txt", "made/here/new.txt"});
  CHECK(find(changes.files, "edit.txt")->status == FileChangeStatus::Modified);
  CHECK(find(changes.files, "edit.txt")->diff.find("-two\n+TWO\n") != std::string::npos);
  CHECK(find(changes.files, "edit.txt")->binary == false);
  CHECK(find(changes.files, "gone.txt")->status == FileChangeStatus::Deleted);
  CHECK(find(changes.files, "made/here/new.txt")->status == FileChangeStatus::Added);
  CHECK(find(changes.files, "made/here/new.txt")->diff.find("+fresh\n") != std::string::npos);
  // Against the tree as it is now: the same.
  CHECK(paths(f.diff(start.id).files) == paths(changes.files));

  const auto restored = f.restore(start.id);
  CHECK(restored.before_id == after.id);
  CHECK(paths(restored.files) == paths(changes.files));
  CHECK(read(f.tree() / "edit.txt") == "one\ntwo\n");
  CHECK(read(f.tree() / "gone.txt") == "to be deleted\n");
  CHECK(read(f.tree() / "keep.txt") == "unchanged\n");
  CHECK(read(f.tree() / "deep/dir/file.txt") == "nested\n");
  CHECK_FALSE(fs::exists(f.tree() / "made"));  // the file it created, and the directories it made for it
  CHECK(f.diff(start.id).files.empty());
  same_tree();

  // Undo the restore.
  const auto undone = f.restore(restored.before_id);
  CHECK(read(f.tree() / "edit.txt") == "one\nTWO\n");
  CHECK_FALSE(fs::exists(f.tree() / "gone.txt"));
  CHECK(read(f.tree() / "made/here/new.txt") == "fresh\n");
  CHECK(f.diff(after.id).files.empty());
  CHECK(paths(undone.files) == paths(changes.files));
}

TEST_CASE("checkpoints: a plain directory round trip: shell changes diffed, restored, and the restore undone",
          "[checkpoint]") {
  Fixture f;
  round_trip(f);
}

TEST_CASE("checkpoints: in a git repository, the user's .git and git status stay byte-identical", "[checkpoint]") {
  Fixture f;
  shell(f.tree(), "git init -q . && echo base > committed.txt && echo ignored-by-user > .gitignore.user && "
                  "git add committed.txt && git -c user.name=t -c user.email=t@example.com commit -q -m base && "
                  "echo staged > staged.txt && git add staged.txt && echo dirty >> committed.txt");
  const auto at_first = repository_state(f.tree());
  REQUIRE(at_first.git_dir.count("index") == 1);
  std::optional<RepositoryState> at_start;
  round_trip(f, [&] {
    const auto now = repository_state(f.tree());
    CHECK(now.git_dir == at_first.git_dir);
    if (!at_start) {
      at_start = now;
      CHECK(at_start->status.find("?? edit.txt") != std::string::npos);
    } else {
      CHECK(now.status == at_start->status);
    }
  });
  CHECK(repository_state(f.tree()).git_dir == at_first.git_dir);
  // The .git directory itself is never captured.
  const auto now = f.snapshot();
  write(f.tree() / ".git/description", "changed by the user\n");
  CHECK(f.diff(now.id).files.empty());
}

TEST_CASE("checkpoints: binary files are flagged, links and the executable bit come back", "[checkpoint]") {
  Fixture f;
  write(f.tree() / "blob.bin", std::string("bin\0ary\1\2", 9));
  write(f.tree() / "run.sh", "#!/bin/sh\necho hi\n");
  fs::permissions(f.tree() / "run.sh", fs::perms::owner_all | fs::perms::group_read);
  fs::create_symlink("run.sh", f.tree() / "link");
  const auto start = f.snapshot();

  write(f.tree() / "blob.bin", std::string("other\0bytes", 11));
  fs::remove(f.tree() / "run.sh");
  fs::remove(f.tree() / "link");
  write(f.tree() / "link", "now a file\n");
  const auto changes = f.diff(start.id);
  REQUIRE(find(changes.files, "blob.bin") != nullptr);
  CHECK(find(changes.files, "blob.bin")->binary == true);
  CHECK(find(changes.files, "blob.bin")->diff.empty());
  CHECK(find(changes.files, "link")->status == FileChangeStatus::Modified);

  f.restore(start.id);
  CHECK(read(f.tree() / "blob.bin") == std::string("bin\0ary\1\2", 9));
  CHECK(fs::is_symlink(f.tree() / "link"));
  CHECK(fs::read_symlink(f.tree() / "link") == "run.sh");
  CHECK((fs::status(f.tree() / "run.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
  CHECK(read(f.tree() / "run.sh") == "#!/bin/sh\necho hi\n");
}

TEST_CASE("checkpoints: .gitignore is honoured and ignored files are never touched by a restore", "[checkpoint]") {
  Fixture f;
  write(f.tree() / ".gitignore", "build/\n*.log\n");
  write(f.tree() / "src.txt", "source\n");
  write(f.tree() / "build/out.o", "object v1\n");
  const auto start = f.snapshot();

  write(f.tree() / "build/out.o", "object v2\n");
  write(f.tree() / "run.log", "log\n");
  write(f.tree() / "src.txt", "source changed\n");
  const auto changes = f.diff(start.id);
  CHECK(paths(changes.files) == std::vector<std::string>{"src.txt"});

  f.restore(start.id);
  CHECK(read(f.tree() / "src.txt") == "source\n");
  CHECK(read(f.tree() / "build/out.o") == "object v2\n");
  CHECK(read(f.tree() / "run.log") == "log\n");
}

TEST_CASE("checkpoints: files over the size or count limit are skipped, reported, and left alone", "[checkpoint]") {
  Fixture f([](CheckpointOptions& options) {
    options.limits.max_file_bytes = 100;
    options.limits.max_files = 3;
  });
  write(f.tree() / "a.txt", "a\n");
  write(f.tree() / "big.bin", std::string(200, 'x'));
  write(f.tree() / "b.txt", "b\n");
  write(f.tree() / "c.txt", "c\n");
  write(f.tree() / "d.txt", "d\n");
  const auto start = f.snapshot();
  // Three files fit, in path order; d.txt is one too many; big.bin is too large.
  CHECK(start.skipped == std::vector<std::string>{"big.bin", "d.txt"});
  CHECK(start.skipped_total == 2);

  write(f.tree() / "big.bin", std::string(300, 'y'));
  write(f.tree() / "a.txt", "a changed\n");
  const auto changes = f.diff(start.id);
  CHECK(paths(changes.files) == std::vector<std::string>{"a.txt"});
  CHECK(std::find(changes.skipped.begin(), changes.skipped.end(), "big.bin") != changes.skipped.end());

  // A kept file that grows past the limit leaves the checkpoint and is reported, not shown as deleted.
  write(f.tree() / "b.txt", std::string(150, 'b'));
  const auto grown = f.diff(start.id);
  CHECK(find(grown.files, "b.txt") == nullptr);
  CHECK(std::find(grown.skipped.begin(), grown.skipped.end(), "b.txt") != grown.skipped.end());

  const auto restored = f.restore(start.id);
  CHECK(read(f.tree() / "a.txt") == "a\n");
  CHECK(read(f.tree() / "big.bin") == std::string(300, 'y'));
  CHECK(read(f.tree() / "b.txt") == std::string(150, 'b'));
  CHECK(read(f.tree() / "d.txt") == "d\n");
  CHECK(std::find(restored.skipped.begin(), restored.skipped.end(), "b.txt") != restored.skipped.end());
}

// A checkpoint is a tree id, so two turns can start from the same one with different files left out (a skipped
// file deleted since leaves the same tree): a restore to it leaves alone what any of them skipped.
TEST_CASE("checkpoints: a later snapshot of the same tree keeps what an earlier one skipped", "[checkpoint]") {
  Fixture f([](CheckpointOptions& options) { options.limits.max_file_bytes = 100; });
  write(f.tree() / "a.txt", "a\n");
  write(f.tree() / "big.bin", std::string(200, 'x'));
  const auto first = f.snapshot();
  CHECK(first.skipped == std::vector<std::string>{"big.bin"});
  fs::remove(f.tree() / "big.bin");
  const auto second = f.snapshot();
  REQUIRE(second.id == first.id);
  CHECK(second.skipped.empty());
  write(f.tree() / "big.bin", "small now\n");
  f.restore(first.id);
  CHECK(read(f.tree() / "big.bin") == "small now\n");
}

TEST_CASE("checkpoints: a working tree that holds the data directory does not checkpoint it", "[checkpoint]") {
  Fixture f;
  f.open([&](CheckpointOptions& options) {
    options.root = f.tree() / "data/checkpoints";
    options.excluded = {f.tree() / "data"};
  });
  write(f.tree() / "data/switchboard.db", "database\n");
  write(f.tree() / "work.txt", "work\n");
  const auto start = f.snapshot();
  write(f.tree() / "work.txt", "work changed\n");
  write(f.tree() / "data/switchboard.db", "database changed\n");
  CHECK(paths(f.diff(start.id).files) == std::vector<std::string>{"work.txt"});
}

TEST_CASE("checkpoints: unknown checkpoints and missing directories are typed errors", "[checkpoint]") {
  Fixture f;
  write(f.tree() / "a.txt", "a\n");
  const auto start = f.snapshot();

  auto bad = f.try_restore("not-an-id; rm -rf /");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == CheckpointError::Code::UnknownCheckpoint);
  auto unknown = f.try_restore(std::string(40, 'a'));
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == CheckpointError::Code::UnknownCheckpoint);
  CHECK(read(f.tree() / "a.txt") == "a\n");

  auto missing = await<Snapshot>(f.io, [&](auto done) { f.store->snapshot(f.tree() / "nowhere", done); });
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == CheckpointError::Code::WorkTreeUnreadable);

  Fixture no_git([](CheckpointOptions& options) { options.git_program = "no-such-git-program"; });
  auto refused = await<Snapshot>(no_git.io, [&](auto done) { no_git.store->snapshot(no_git.tree(), done); });
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == CheckpointError::Code::StoreUnavailable);
  CHECK(start.id.size() == 40);
}

// Runs `operation` in a forked copy of this process whose store kills it (SIGKILL, as a crash would) at the test
// hook, and returns once it is dead.
void killed_in_child(Fixture& f, const std::function<void(CheckpointOptions&)>& hook,
                     const std::function<void(CheckpointStore&, boost::asio::io_context&)>& operation) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    boost::asio::io_context io;
    CheckpointOptions options;
    options.root = f.data.path() / "checkpoints";
    hook(options);
    CheckpointStore store(io, options);
    operation(store, io);
    io.run();
    ::_exit(3);  // the hook never fired
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("checkpoints: a kill -9 in the middle of a restore loses no file, and the next start recovers",
          "[checkpoint]") {
  Fixture f;
  for (int i = 0; i < 6; ++i) write(f.tree() / ("f" + std::to_string(i) + ".txt"), "old " + std::to_string(i) + "\n");
  const auto start = f.snapshot();
  for (int i = 0; i < 6; ++i) write(f.tree() / ("f" + std::to_string(i) + ".txt"), "new " + std::to_string(i) + "\n");
  write(f.tree() / "created.txt", "created\n");
  const auto later = f.snapshot();
  const auto store_dir = f.data.path() / "checkpoints";
  f.store.reset();  // the crashed daemon is the only one using the store

  killed_in_child(
      f, [](CheckpointOptions& options) { options.after_restored_file = [](std::size_t n) { if (n == 3) ::raise(SIGKILL); }; },
      [&](CheckpointStore& store, boost::asio::io_context&) { store.restore(f.tree(), start.id, [](auto) {}); });

  // Each file is whole: as it was, or as restored; no other content anywhere.
  int restored = 0;
  for (int i = 0; i < 6; ++i) {
    const auto content = read(f.tree() / ("f" + std::to_string(i) + ".txt"));
    const bool old_one = content == "old " + std::to_string(i) + "\n";
    CHECK((old_one || content == "new " + std::to_string(i) + "\n"));
    restored += old_one ? 1 : 0;
  }
  CHECK(restored == 3);
  bool journal_left = false;
  for (const auto& entry : fs::recursive_directory_iterator(store_dir))
    journal_left |= entry.path().filename() == "restore.journal";
  CHECK(journal_left);
  // As if the kill had come while the next file was being written: its temporary file is there, half written.
  write(f.tree() / ".f3.txt.switchboard-restore", "half");

  // The next start reads the store, cleans up, and the restore can be done again (or the tree brought back).
  f.open();
  const auto now = f.snapshot();
  for (const auto& entry : fs::directory_iterator(f.tree()))
    CHECK(entry.path().filename().string().find("switchboard-restore") == std::string::npos);
  for (const auto& entry : fs::recursive_directory_iterator(store_dir))
    CHECK(entry.path().filename() != "restore.journal");
  CHECK(now.id != later.id);
  f.restore(start.id);
  CHECK(f.diff(start.id).files.empty());
  f.restore(later.id);
  CHECK(f.diff(later.id).files.empty());
  CHECK(read(f.tree() / "created.txt") == "created\n");
}

TEST_CASE("checkpoints: a kill -9 in the middle of a snapshot leaves a store the next start can read",
          "[checkpoint]") {
  Fixture f;
  write(f.tree() / "a.txt", "a\n");
  const auto start = f.snapshot();
  write(f.tree() / "a.txt", "a changed\n");
  write(f.tree() / "b.txt", "b\n");
  const auto store_dir = f.store->store_directory(f.tree());
  f.store.reset();

  killed_in_child(
      f, [](CheckpointOptions& options) { options.before_index_update = [] { ::raise(SIGKILL); }; },
      [&](CheckpointStore& store, boost::asio::io_context&) { store.snapshot(f.tree(), [](auto) {}); });
  // As if git itself had been killed while writing the index: its lock is left behind.
  write(store_dir / "index.lock", "partial");

  f.open();
  const auto now = f.snapshot();
  CHECK(paths(f.diff(start.id, now.id).files) == std::vector<std::string>{"a.txt", "b.txt"});
  CHECK(read(f.tree() / "a.txt") == "a changed\n");

  // An index git cannot read is rebuilt: it is only a cache of the tree.
  write(store_dir / "index", "garbage that is not an index");
  const auto again = f.snapshot();
  CHECK(again.id == now.id);
  f.restore(start.id);
  CHECK(read(f.tree() / "a.txt") == "a\n");
  CHECK_FALSE(fs::exists(f.tree() / "b.txt"));
}


// A snapshot that stores many files adds a pack (one that stores a few writes them as files of their own); past
// 64 packs they are merged into one. No ref names a checkpoint, so a merge that kept only what refs reach would
// lose them all: the first checkpoint must still diff and restore after it.
TEST_CASE("checkpoints: many snapshots' packs are merged and every checkpoint stays readable", "[checkpoint]") {
  Fixture f;
  const auto pack_count = [&] {
    std::size_t packs = 0;
    for (const auto& store : fs::directory_iterator(f.data.path() / "checkpoints")) {
      if (!fs::is_directory(store.path() / "git" / "objects" / "pack")) continue;
      for (const auto& entry : fs::directory_iterator(store.path() / "git" / "objects" / "pack")) {
        if (entry.path().extension() == ".pack") ++packs;
      }
    }
    return packs;
  };
  const auto write_all = [&](int round) {
    for (int i = 0; i < 64; ++i) write(f.tree() / ("c" + std::to_string(i) + ".txt"), std::to_string(round) + "\n");
  };
  write_all(0);
  const auto first = f.snapshot();
  CHECK(pack_count() == 1);
  write(f.tree() / "c0.txt", "a few files\n");
  f.snapshot();
  CHECK(pack_count() == 1);
  for (int round = 1; round <= 66; ++round) {
    write_all(round);
    f.snapshot();
  }
  CHECK(pack_count() >= 1);
  CHECK(pack_count() <= 64);  // 67 snapshots of 64 files made 67 packs before the merge
  const auto changes = f.diff(first.id);
  REQUIRE(changes.files.size() == 64);
  CHECK(find(changes.files, "c5.txt")->diff.find("-0\n+66\n") != std::string::npos);
  f.restore(first.id);
  CHECK(read(f.tree() / "c5.txt") == "0\n");
  CHECK(read(f.tree() / "c0.txt") == "0\n");
}

// What a store reading the whole tree records for it: a store opened afresh on a data directory of its own (the
// first snapshot of a store always reads the whole tree), with the same limits.
Snapshot whole_reading(const fs::path& root, const fs::path& tree, const switchboard::checkpoint::CheckpointLimits& limits) {
  boost::asio::io_context io;
  CheckpointOptions options;
  options.root = root;
  options.limits = limits;
  CheckpointStore store(io, options);
  auto r = await<Snapshot>(io, [&](auto done) { store.snapshot(tree, done); });
  if (!r) FAIL(r.error().message);
  return *r;
}

// After a turn, a snapshot asks git only about the paths the tree's watch saw change; whatever changed, it records
// the same checkpoint (and the same skipped files) as a store that reads the whole tree. What the watch cannot
// follow (a directory made, a .gitignore edited) makes it read the whole tree.
TEST_CASE("checkpoints: a snapshot after a few changes reads only them and records what a whole reading does",
          "[checkpoint]") {
  std::vector<bool> listings;  // whole_tree, for each snapshot
  const auto limits = [] {
    switchboard::checkpoint::CheckpointLimits l;
    l.max_file_bytes = 1000;
    return l;
  }();
  Fixture f([&](CheckpointOptions& options) {
    options.limits = limits;
    options.after_listing = [&](bool whole_tree) { listings.push_back(whole_tree); };
  });
  TempDir oracle{"checkpoint-oracle"};
  const auto step = [&](const std::string& what, bool expect_whole) {
    INFO(what);
    listings.clear();
    const auto taken = f.snapshot();
    CHECK(listings == std::vector<bool>{expect_whole});
    const auto whole = whole_reading(oracle.path() / "checkpoints", f.tree(), limits);
    CHECK(taken.id == whole.id);
    CHECK(taken.skipped == whole.skipped);
    return taken;
  };
  write(f.tree() / ".gitignore", "*.log\n");
  write(f.tree() / "a.txt", "aaaa\n");
  write(f.tree() / "b.txt", "b\n");
  write(f.tree() / "sub/c.txt", "c\n");
  write(f.tree() / "keep.log", "log\n");
  write(f.tree() / "big.bin", std::string(2000, 'x'));
  fs::create_symlink("a.txt", f.tree() / "link");
  const auto first = step("the first snapshot", true);
  CHECK(first.skipped == std::vector<std::string>{"big.bin"});

  const auto unchanged = step("nothing changed", false);
  CHECK(unchanged.id == first.id);
  CHECK(unchanged.skipped == first.skipped);

  // The same size, at once: within the timestamp granularity of the snapshot just taken.
  write(f.tree() / "a.txt", "bbbb\n");
  const auto same_size = step("a change of the same size, in the same second", false);
  CHECK(paths(f.diff(unchanged.id, same_size.id).files) == std::vector<std::string>{"a.txt"});

  fs::remove(f.tree() / "b.txt");
  const auto deleted = step("a deletion", false);
  CHECK(paths(f.diff(same_size.id, deleted.id).files) == std::vector<std::string>{"b.txt"});

  fs::permissions(f.tree() / "sub/c.txt", fs::perms::owner_exec, fs::perm_options::add);
  const auto mode = step("a mode change", false);
  CHECK(paths(f.diff(deleted.id, mode.id).files) == std::vector<std::string>{"sub/c.txt"});

  fs::remove(f.tree() / "link");
  fs::create_symlink("sub/c.txt", f.tree() / "link");
  const auto relinked = step("a symbolic link pointed elsewhere", false);
  CHECK(paths(f.diff(mode.id, relinked.id).files) == std::vector<std::string>{"link"});

  write(f.tree() / "sub/new.txt", "new\n");
  write(f.tree() / "sub/new.log", "ignored\n");
  write(f.tree() / "big.bin", std::string(3000, 'y'));
  const auto created = step("a new file, a new ignored file, a skipped file still too large", false);
  CHECK(paths(f.diff(relinked.id, created.id).files) == std::vector<std::string>{"sub/new.txt"});
  CHECK(created.skipped == std::vector<std::string>{"big.bin"});

  write(f.tree() / "big.bin", "small now\n");
  const auto shrunk = step("a skipped file back under the limit", false);
  CHECK(shrunk.id != created.id);  // big.bin is in it (a diff leaves out what either end skipped)
  CHECK(shrunk.skipped.empty());

  // Nothing skipped now, and no pattern of the .gitignore reaches these: judged without asking git.
  write(f.tree() / "sub/more.txt", "more\n");
  write(f.tree() / "more.txt", "more\n");
  write(f.tree() / "sub/c.txt", "c edited\n");
  const auto judged = step("new files no ignore pattern reaches, and an edit", false);
  CHECK(paths(f.diff(shrunk.id, judged.id).files) == std::vector<std::string>{"more.txt", "sub/c.txt", "sub/more.txt"});

  write(f.tree() / "sub/huge.bin", std::string(2000, 'h'));
  const auto grown = step("a new file over the size limit", false);
  CHECK(grown.id == judged.id);
  CHECK(grown.skipped == std::vector<std::string>{"sub/huge.bin"});

  fs::remove(f.tree() / "a.txt");
  write(f.tree() / "a.txt/inner.txt", "a directory now\n");
  const auto replaced = step("a file replaced by a directory", true);
  CHECK(paths(f.diff(judged.id, replaced.id).files) == std::vector<std::string>{"a.txt", "a.txt/inner.txt"});

  write(f.tree() / ".gitignore", "");
  const auto unignored = step("a .gitignore edit that un-ignores files", true);
  CHECK(paths(f.diff(replaced.id, unignored.id).files) ==
        std::vector<std::string>{".gitignore", "keep.log", "sub/new.log"});

  write(f.tree() / "keep.log", "log changed\n");
  const auto after_edit = step("a file un-ignored since is watched", false);
  CHECK(paths(f.diff(unignored.id, after_edit.id).files) == std::vector<std::string>{"keep.log"});

  // A directory ignored now with files kept in it: they stay kept and watched; new files there are ignored.
  write(f.tree() / ".gitignore", "sub/\n");
  const auto ignored = step("a .gitignore edit that ignores a directory", true);
  CHECK(paths(f.diff(after_edit.id, ignored.id).files) == std::vector<std::string>{".gitignore"});
  write(f.tree() / "sub/c.txt", "c changed\n");
  write(f.tree() / "sub/later.txt", "ignored\n");
  const auto in_ignored = step("a kept file in an ignored directory", false);
  CHECK(paths(f.diff(ignored.id, in_ignored.id).files) == std::vector<std::string>{"sub/c.txt"});

  // The checkpoints read this way restore like any other. sub/later.txt was ignored, so it stays, and is no
  // longer ignored once the restore brings the first .gitignore back.
  f.restore(same_size.id);
  CHECK(read(f.tree() / "a.txt") == "bbbb\n");
  CHECK(read(f.tree() / "b.txt") == "b\n");
  CHECK(paths(f.diff(same_size.id).files) == std::vector<std::string>{"sub/later.txt"});
}

// After a snapshot that skipped nothing, the next one after a few changes is built from the last checkpoint's tree
// without git's index: the store's index file is not rewritten, and the tree is the one a store reading the whole
// tree records, both a store that has followed every step (its index evolving) and one made for that state alone.
TEST_CASE("checkpoints: a snapshot built without the index records what a whole reading does", "[checkpoint]") {
  std::vector<bool> listings;
  Fixture f([&](CheckpointOptions& options) {
    options.after_listing = [&](bool whole_tree) { listings.push_back(whole_tree); };
  });
  TempDir oracles{"checkpoint-oracles"};
  int fresh = 0;
  fs::path index;
  // `kind`: how the step is read: "tree" (built without the index), "whole" (the whole tree read).
  const auto step = [&](const std::string& what, const std::string& kind, bool fresh_store_agrees = true) {
    INFO(what);
    const auto index_before = read(index);
    listings.clear();
    const auto taken = f.snapshot();
    CHECK(listings == std::vector<bool>{kind == "whole"});
    if (kind == "tree") CHECK(read(index) == index_before);
    const auto followed = whole_reading(oracles.path() / "followed", f.tree(), {});
    CHECK(taken.id == followed.id);
    CHECK(taken.skipped == followed.skipped);
    const auto alone = whole_reading(oracles.path() / ("alone" + std::to_string(fresh++)), f.tree(), {});
    CHECK((taken.id == alone.id) == fresh_store_agrees);
    return taken;
  };
  write(f.tree() / ".gitignore", "*.log\n");
  write(f.tree() / "a.txt", "aaaa\n");
  write(f.tree() / "b.txt", "b\n");
  write(f.tree() / "sub/c.txt", "c\n");
  write(f.tree() / "sub/deep/d.txt", "d\n");
  write(f.tree() / "only/one.txt", "one\n");
  write(f.tree() / "sub/noise.log", "ignored\n");
  const auto first = step("the first snapshot", "whole");
  index = f.store->store_directory(f.tree()) / "index";
  REQUIRE(fs::exists(index));

  write(f.tree() / "a.txt", "bbbb\n");
  const auto same_size = step("a change of the same size, in the same second", "tree");
  CHECK(paths(f.diff(first.id, same_size.id).files) == std::vector<std::string>{"a.txt"});

  write(f.tree() / "sub/deep/d.txt", "d changed\n");
  write(f.tree() / "sub/deep/e.txt", "e\n");
  fs::remove(f.tree() / "b.txt");
  const auto deep = step("an edit and a new file two directories down, a deletion at the top", "tree");
  CHECK(paths(f.diff(same_size.id, deep.id).files) ==
        std::vector<std::string>{"b.txt", "sub/deep/d.txt", "sub/deep/e.txt"});

  fs::permissions(f.tree() / "sub/c.txt", fs::perms::owner_exec, fs::perm_options::add);
  const auto mode = step("the executable bit set", "tree");
  CHECK(paths(f.diff(deep.id, mode.id).files) == std::vector<std::string>{"sub/c.txt"});
  fs::permissions(f.tree() / "sub/c.txt", fs::perms::owner_exec, fs::perm_options::remove);
  const auto mode_back = step("the executable bit cleared", "tree");
  CHECK(mode_back.id == deep.id);

  fs::create_symlink("a.txt", f.tree() / "sub/link");
  const auto linked = step("a new symbolic link", "tree");
  fs::remove(f.tree() / "sub/link");
  fs::create_symlink("../b.txt", f.tree() / "sub/link");
  const auto relinked = step("the link pointed elsewhere (to nothing)", "tree");
  CHECK(paths(f.diff(linked.id, relinked.id).files) == std::vector<std::string>{"sub/link"});

  fs::remove(f.tree() / "only/one.txt");
  const auto emptied = step("the last file of a directory deleted", "tree");
  CHECK(paths(f.diff(relinked.id, emptied.id).files) == std::vector<std::string>{"only/one.txt"});

  write(f.tree() / "sub/noise.log", "ignored, changed\n");
  write(f.tree() / "sub/more.log", "ignored, new\n");
  const auto ignored = step("an ignored file changed and one made (git judges them, without its index)", "tree");
  CHECK(ignored.id == emptied.id);

  fs::remove(f.tree() / "a.txt");
  write(f.tree() / "a.txt/inner.txt", "a directory now\n");
  step("a file replaced by a directory", "whole");
  fs::remove_all(f.tree() / "a.txt");
  write(f.tree() / "a.txt", "a file again\n");
  step("the directory replaced by a file again", "whole");
  write(f.tree() / "a.txt", "a file, edited\n");
  step("then edited", "tree");

  write(f.tree() / "fresh/nested/new.txt", "new\n");
  const auto nested = step("a new nested directory", "whole");
  write(f.tree() / "fresh/nested/new.txt", "new, edited\n");
  write(f.tree() / "fresh/nested/other.log", "ignored\n");
  step("a file in it edited, an ignored one made beside it", "tree");

  // A file first kept by a snapshot built without the index, then ignored: it was kept, so it stays kept, as git
  // keeps a file its index has (a store made for this state alone has never kept it).
  write(f.tree() / "sub/late.txt", "late\n");
  step("a new file", "tree");
  write(f.tree() / ".gitignore", "*.log\nlate.txt\n");
  const auto ignoring = step("a .gitignore edit that ignores a kept file", "whole", /*fresh_store_agrees=*/false);
  CHECK(paths(f.diff(nested.id, ignoring.id).files) ==
        std::vector<std::string>{".gitignore", "fresh/nested/new.txt", "sub/late.txt"});
  write(f.tree() / ".gitignore", "");
  const auto unignored = step("a .gitignore edit that ignores nothing", "whole");
  CHECK(paths(f.diff(ignoring.id, unignored.id).files) ==
        std::vector<std::string>{".gitignore", "fresh/nested/other.log", "sub/more.log", "sub/noise.log"});

  // Names git reads a line at a time would take otherwise: a carriage return at the end (a CRLF script's
  // `echo x > out.txt`, beside out.txt), a newline, a leading quote, a backslash. Each keeps its own content.
  write(f.tree() / "out.txt", "plain\n");
  write(f.tree() / "out.txt\r", "from a CRLF script\n");
  write(f.tree() / "sub/two\nlines.txt", "two lines\n");
  write(f.tree() / "\"quoted.txt", "quoted\n");
  write(f.tree() / "back\\slash.txt", "backslash\n");
  const auto odd_names = step("new files with names git reads quoted", "tree");
  CHECK(paths(f.diff(unignored.id, odd_names.id).files) ==
        std::vector<std::string>{"\"quoted.txt", "back\\slash.txt", "out.txt", "out.txt\r", "sub/two\nlines.txt"});
  write(f.tree() / "out.txt\r", "from a CRLF script, edited\n");
  step("the name ending in a carriage return edited", "tree");
  // A name git's pathspecs would read as magic (':'): judged as the file it names.
  write(f.tree() / ".gitignore", ":memory:\n");
  const auto memory_ignored = step("a .gitignore that ignores ':memory:'", "whole");
  write(f.tree() / ":memory:", "an ignored database\n");
  CHECK(step("a new file ':memory:', ignored", "tree").id == memory_ignored.id);
  fs::remove(f.tree() / ":memory:");

  // The checkpoints built without the index restore like any other.
  f.restore(deep.id);
  CHECK(read(f.tree() / "a.txt") == "bbbb\n");
  CHECK(read(f.tree() / "only/one.txt") == "one\n");
  CHECK_FALSE(fs::exists(f.tree() / "b.txt"));
  CHECK_FALSE(fs::exists(f.tree() / "sub/link"));
  CHECK(f.diff(deep.id).files.empty());
}

// After a snapshot through the index, the tree the next one builds on is read from the index file (its entries and
// git's cache of tree ids), not from git: it lists what `git ls-tree -r -t` lists of that checkpoint.
TEST_CASE("checkpoints: the tree read from the store's index is the checkpoint's, as git lists it", "[checkpoint]") {
  Fixture f;
  write(f.tree() / "top.txt", "top\n");
  write(f.tree() / "a/one.txt", "one\n");
  write(f.tree() / "a/b/c/deep.txt", "deep\n");
  write(f.tree() / "a/b/run.sh", "#!/bin/sh\n");
  fs::permissions(f.tree() / "a/b/run.sh", fs::perms::owner_exec, fs::perm_options::add);
  write(f.tree() / "z/last.txt", "last\n");
  fs::create_symlink("../top.txt", f.tree() / "a/link");
  const auto taken = f.snapshot();
  const auto store = f.store->store_directory(f.tree());
  const auto indexed = switchboard::checkpoint::tree_of_index(store / "index");
  REQUIRE(indexed.has_value());
  CHECK(indexed->root_id == taken.id);
  const auto records = [](const std::string& listing) {
    std::set<std::string> set;
    for (std::size_t at = 0; at < listing.size();) {
      const auto end = listing.find('\0', at);
      set.insert(listing.substr(at, end - at));
      at = end == std::string::npos ? listing.size() : end + 1;
    }
    return set;
  };
  const auto listed = shell_output(f.tree(), "GIT_DIR='" + (store / "git").string() + "' git ls-tree -r -t -z --full-tree " + taken.id);
  CHECK(records(indexed->listing()) == records(listed));
  CHECK(records(listed).size() == 10);  // 6 files, and the directories a, a/b, a/b/c, z
}

// The tree held in memory, loaded from git's own listing and changed there (a file edited, one made executable,
// the last file of a directory deleted, a file two new directories down), is written by mktree as the tree
// `git write-tree` writes from an index holding the same files; a change it cannot apply changes nothing.
TEST_CASE("checkpoints: a tree changed in memory is the tree an index with the same files writes", "[checkpoint]") {
  using switchboard::checkpoint::CheckpointTree;
  TempDir dir{"checkpoint-tree-apply"};
  const auto work = dir.path() / "work";
  const auto git_dir = dir.path() / "git";
  const auto index = dir.path() / "index";
  write(work / "a.txt", "a\n");
  write(work / "d/b.txt", "b\n");
  write(work / "d/e/c.txt", "c\n");
  write(work / "only/x.txt", "x\n");
  fs::create_symlink("a.txt", work / "link");
  const std::string git = "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_DIR='" + git_dir.string() +
                          "' GIT_INDEX_FILE='" + index.string() + "' GIT_WORK_TREE='" + work.string() + "' git ";
  const auto trimmed = [](std::string text) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  };
  shell(dir.path(), "git init -q --bare '" + git_dir.string() + "' && " + git + "config core.bare false");
  shell(work, git + "add -A");
  const auto first = trimmed(shell_output(work, git + "write-tree"));
  CheckpointTree tree;
  REQUIRE(tree.load(shell_output(work, git + "ls-tree -r -t -z --full-tree " + first), first));
  CHECK(tree.files() == 5);
  CHECK(tree.kind_of("d/e") == CheckpointTree::Kind::Directory);
  CHECK(tree.kind_of("a.txt/inner") == CheckpointTree::Kind::Blocked);

  write(work / "d/e/c.txt", "c changed\n");
  fs::permissions(work / "a.txt", fs::perms::owner_exec, fs::perm_options::add);
  fs::remove_all(work / "only");
  write(work / "new/deep/n.txt", "n\n");
  const auto blob = [&](const std::string& path) { return trimmed(shell_output(work, git + "hash-object -w " + path)); };
  CheckpointTree::Changes changes;
  changes["d/e/c.txt"] = CheckpointTree::Entry{0100644, blob("d/e/c.txt")};
  changes["a.txt"] = CheckpointTree::Entry{0100755, blob("a.txt")};
  changes["only/x.txt"] = std::nullopt;
  changes["new/deep/n.txt"] = CheckpointTree::Entry{0100644, blob("new/deep/n.txt")};
  const switchboard::checkpoint::GitProcess git_process(trimmed(shell_output(work, "command -v git")), std::getenv("PATH"));
  const switchboard::checkpoint::GitPlace place{git_dir, index, work};
  const auto written = tree.apply(git_process, place, changes);
  REQUIRE(written.has_value());
  REQUIRE(written->has_value());
  shell(work, git + "add -A");
  const auto expected = trimmed(shell_output(work, git + "write-tree"));
  CHECK(**written == expected);
  CHECK(tree.root_id() == expected);
  CHECK(tree.files() == 5);
  CHECK(tree.kind_of("only/x.txt") == CheckpointTree::Kind::Absent);

  CheckpointTree::Changes under_a_file;
  under_a_file["a.txt/inner.txt"] = CheckpointTree::Entry{0100644, blob("d/b.txt")};
  const auto refused = tree.apply(git_process, place, under_a_file);
  REQUIRE(refused.has_value());
  CHECK_FALSE(refused->has_value());
  CHECK(tree.root_id() == expected);
}

// A directory the index cannot tell (a subdirectory of it missing from git's cache of tree ids): its files are not
// known to be absent, so a tracked file deleted there is not lost as a change of nothing; the tree declines to
// build even a snapshot that saw no change it could apply, and the index's way records it.
TEST_CASE("checkpoints: a directory the index cannot tell is never taken for an absent one", "[checkpoint]") {
  using switchboard::checkpoint::CheckpointTree;
  using switchboard::checkpoint::IndexTree;
  IndexTree index;
  const auto add = [&](const std::string& path, char fill) {
    IndexTree::File file;
    file.path_at = static_cast<std::uint32_t>(index.bytes.size());
    file.path_length = static_cast<std::uint32_t>(path.size());
    index.bytes.append(path).push_back('\0');
    file.id_at = static_cast<std::uint32_t>(index.bytes.size());
    index.bytes.append(20, fill);
    file.mode = 0100644;
    index.files.push_back(file);
  };
  add("a/b/y.txt", '\x01');  // in the index's order: by path
  add("a/x.txt", '\x02');
  add("top.txt", '\x03');
  index.directories["a"] = std::string(40, 'a');  // "a/b" is not in the cache
  index.root_id = std::string(40, 'e');
  CheckpointTree tree;
  tree.load(std::move(index));
  CHECK(tree.kind_of("top.txt") == CheckpointTree::Kind::File);
  CHECK(tree.kind_of("a/b/y.txt") == CheckpointTree::Kind::File);  // a/b's own files are in the index
  // a/x.txt is there, but reading "a" needs a/b's id: not known to be absent (say, deleted since).
  CHECK(tree.kind_of("a/x.txt") != CheckpointTree::Kind::Absent);
  CHECK(tree.kind_of("a/new.txt") != CheckpointTree::Kind::Absent);
  // And the tree builds nothing now, not even the same root for no change: the deletion would be lost.
  TempDir dir{"checkpoint-tree-unreadable"};
  const switchboard::checkpoint::GitProcess git_process("git", std::getenv("PATH"));
  const switchboard::checkpoint::GitPlace place{dir.path() / "git", dir.path() / "index", dir.path()};
  const auto nothing = tree.apply(git_process, place, {});
  REQUIRE(nothing.has_value());
  CHECK_FALSE(nothing->has_value());
}

// Snapshots built without the index leave it behind the last checkpoint; a process killed after them (here, in
// the middle of the next one) leaves an older index, which the next start reads like any: every file that differs
// from it is found, and the checkpoint is the one a store reading that tree afresh records.
TEST_CASE("checkpoints: a kill -9 after snapshots built without the index leaves an index the next start reads right",
          "[checkpoint]") {
  Fixture f;
  write(f.tree() / "a.txt", "a\n");
  write(f.tree() / "b.txt", "b\n");
  write(f.tree() / "sub/c.txt", "c\n");
  f.store.reset();
  int updates = 0;
  killed_in_child(
      f,
      [&](CheckpointOptions& options) {
        options.before_index_update = [&] {
          if (++updates == 3) ::raise(SIGKILL);
        };
      },
      [&](CheckpointStore& store, boost::asio::io_context&) {
        store.snapshot(f.tree(), [&](auto first) {
          if (!first) ::_exit(4);  // the parent sees no kill
          write(f.tree() / "a.txt", "A\n");  // the same size
          fs::remove(f.tree() / "b.txt");
          write(f.tree() / "sub/new.txt", "new\n");
          store.snapshot(f.tree(), [&](auto second) {
            if (!second) ::_exit(4);
            write(f.tree() / "sub/c.txt", "c changed\n");
            store.snapshot(f.tree(), [](auto) {});
          });
        });
      });
  f.open();
  const auto now = f.snapshot();
  TempDir oracle{"checkpoint-oracle"};
  CHECK(now.id == whole_reading(oracle.path() / "checkpoints", f.tree(), {}).id);
  write(f.tree() / "a.txt", "a\n");
  const auto edited = f.snapshot();
  CHECK(paths(f.diff(now.id, edited.id).files) == std::vector<std::string>{"a.txt"});
  f.restore(now.id);
  CHECK(read(f.tree() / "a.txt") == "A\n");
  CHECK(read(f.tree() / "sub/new.txt") == "new\n");
  CHECK_FALSE(fs::exists(f.tree() / "b.txt"));
}

// A repository nested in the tree is skipped, and reported again by every snapshot, the ones that read only the
// changed paths included; what changes inside it stays out.
TEST_CASE("checkpoints: a nested repository stays skipped when a snapshot reads only the changed paths",
          "[checkpoint]") {
  std::vector<bool> listings;
  Fixture f([&](CheckpointOptions& options) {
    options.after_listing = [&](bool whole_tree) { listings.push_back(whole_tree); };
  });
  TempDir oracle{"checkpoint-oracle"};
  write(f.tree() / "top.txt", "top\n");
  write(f.tree() / "vendor/lib/inner.txt", "inner\n");
  shell(f.tree() / "vendor/lib", "git init -q .");
  const auto first = f.snapshot();
  CHECK(first.skipped == std::vector<std::string>{"vendor/lib/"});
  write(f.tree() / "vendor/lib/inner.txt", "inner changed\n");
  write(f.tree() / "vendor/lib/more.txt", "more\n");
  write(f.tree() / "top.txt", "top changed\n");
  listings.clear();
  const auto after = f.snapshot();
  CHECK(listings == std::vector<bool>{false});
  CHECK(after.skipped == std::vector<std::string>{"vendor/lib/"});
  const auto whole = whole_reading(oracle.path() / "checkpoints", f.tree(), {});
  CHECK(after.id == whole.id);
  CHECK(after.skipped == whole.skipped);
  CHECK(paths(f.diff(first.id, after.id).files) == std::vector<std::string>{"top.txt"});
}

// inotify's instances are a per-user budget the user's editors share: the process watches a bounded number of
// trees, and a tree's watch stopped (its store gone) frees its place.
TEST_CASE("checkpoints: the number of trees watched at once is bounded", "[checkpoint]") {
  using switchboard::checkpoint::TreeWatch;
  TempDir tree{"checkpoint-watch"};
  write(tree.path() / "a/b.txt", "b\n");
  std::vector<std::unique_ptr<TreeWatch>> watches;
  for (std::size_t i = 0; i < TreeWatch::kMaxTrees; ++i) {
    watches.push_back(std::make_unique<TreeWatch>(tree.path()));
    REQUIRE(watches.back()->start({}));
  }
  TreeWatch one_too_many(tree.path());
  CHECK_FALSE(one_too_many.start({}));
  CHECK_FALSE(one_too_many.changes().complete);
  watches.pop_back();
  CHECK(one_too_many.start({}));
  write(tree.path() / "a/b.txt", "changed\n");
  const auto seen = one_too_many.changes();
  CHECK(seen.complete);
  CHECK(seen.paths == std::set<std::string>{"a/b.txt"});
}

// The store's index is what a snapshot that reads only the changed paths builds on: an index changed behind the
// store's back (lost, or unreadable) is never built on, and the next snapshot reads the whole tree.
TEST_CASE("checkpoints: an index changed behind the store makes the next snapshot read the whole tree",
          "[checkpoint]") {
  std::vector<bool> listings;
  Fixture f([&](CheckpointOptions& options) {
    options.after_listing = [&](bool whole_tree) { listings.push_back(whole_tree); };
  });
  write(f.tree() / "a.txt", "a\n");
  write(f.tree() / "b.txt", "b\n");
  const auto first = f.snapshot();
  const auto index = f.store->store_directory(f.tree()) / "index";
  fs::remove(index);
  write(f.tree() / "a.txt", "a changed\n");
  listings.clear();
  const auto after = f.snapshot();
  CHECK(listings == std::vector<bool>{true});
  CHECK(paths(f.diff(first.id, after.id).files) == std::vector<std::string>{"a.txt"});  // b.txt still there
}

// A new file is taken as kept without asking git only when no ignore pattern can reach it; every answer of "kept"
// is checked against git's own listing of the files it does not ignore.
TEST_CASE("checkpoints: a new file is judged kept without git only when no ignore pattern can reach it",
          "[checkpoint]") {
  TempDir tree{"checkpoint-ignores"};
  write(tree.path() / ".gitignore", "# comment\n*.log\nbuild/\n/out\ndoc/*.tmp\n!important.log\n");
  write(tree.path() / "sub/.gitignore", "local?.txt\n");
  write(tree.path() / "br/.gitignore", "[ab].c\n");
  write(tree.path() / "st/.gitignore", "**/gen\n");
  const std::string exclude = "/data/\n";
  write(tree.path() / ".git/info/exclude", exclude);
  const std::map<std::string, bool> expected = {
      {"src/main.c", true},      {"a.log", false},          {"important.log", false},  {"build/x.c", false},
      {"out", false},            {"sub/out", true},         {"doc/x.tmp", false},      {"doc/x.txt", true},
      {"doc/deep/x.tmp", true},  {"sub/local1.txt", false}, {"sub/local12.txt", true}, {"data/x", false},
      {"datax/y", true},         {"br/a.c", false},         {"br/z.c", false},         {"st/x.c", false},
  };
  for (const auto& [path, kept] : expected) write(tree.path() / path, "x\n");
  shell(tree.path(), "git init -q .");
  std::set<std::string> listed;
  const auto out = shell_output(tree.path(), "GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git ls-files -z --others --exclude-standard");
  for (std::size_t at = 0; at < out.size();) {
    const auto end = out.find('\0', at);
    listed.insert(out.substr(at, end - at));
    at = end == std::string::npos ? out.size() : end + 1;
  }
  for (const auto& [path, kept] : expected) {
    INFO(path);
    const bool judged = switchboard::checkpoint::surely_not_ignored(tree.path(), exclude, path);
    CHECK(judged == kept);
    if (judged) CHECK(listed.count(path) == 1);
  }
}

}  // namespace checkpoint_store_tests
