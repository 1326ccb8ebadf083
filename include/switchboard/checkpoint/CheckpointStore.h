#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "switchboard/checkpoint/CheckpointError.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::checkpoint {

// What a checkpoint leaves out, and how much it reports of that.
struct CheckpointLimits {
  std::uint64_t max_file_bytes = 8 * 1024 * 1024;  // a larger file is skipped
  std::size_t max_files = 50'000;                  // files past this count (new ones, in path order) are skipped
  std::size_t max_reported_skips = 1000;           // names listed in `skipped`; the total is counted beyond it
};

struct CheckpointOptions {
  // The store's root (<data>/checkpoints): one store per working tree below it.
  std::filesystem::path root;
  // Never checkpointed, when a working tree holds them (a session in the home directory holds the data
  // directory): the root itself always, and what the daemon adds (its data directory).
  std::vector<std::filesystem::path> excluded;
  // `git`, looked up on this search path (empty: the daemon's PATH) when the store is constructed.
  std::string git_program = "git";
  std::string search_path;
  CheckpointLimits limits;
  // Tests only: called on the store's thread after each file a restore wrote back (with how many so far), and
  // before the index of a snapshot is updated, so a test can kill the process at those points.
  std::function<void(std::size_t files_written)> after_restored_file;
  std::function<void()> before_index_update;
  // Tests only: told at each snapshot whether it read the whole tree (true) or asked git only about the paths the
  // tree's watch saw change (false; nothing at all when it saw none).
  std::function<void(bool whole_tree)> after_listing;
  // Benchmarks only: every snapshot goes through git's index, as if the last tree were never held in memory
  // (bench_checkpoint compares both ways on the same changes).
  bool always_through_index = false;
};

// A checkpoint just taken: its id, and what it left out.
struct Snapshot {
  std::string id;
  std::vector<std::string> skipped;  // relative paths with '/', at most max_reported_skips of them
  std::size_t skipped_total = 0;
};

struct TreeChanges {
  std::vector<protocol::FileChange> files;  // in path order
  std::vector<std::string> skipped;         // what either end left out; never listed as a change
};

struct Restored {
  std::string before_id;  // the checkpoint of the tree just before the restore: restoring it undoes this one
  std::vector<protocol::FileChange> files;  // what the restore changed in the working tree
  std::vector<std::string> skipped;  // files left as they were: over the limits, ignored, or in the way
};

// The daemon's own file checkpoints (docs/checkpoints.md). A checkpoint is the state of every file of a working
// tree that `.gitignore` does not exclude, kept in a git object store of the daemon's (one per working tree,
// under `root`) with its own GIT_DIR and index: the user's repository, its index, refs, hooks and config are
// never opened for writing, and no user or system git configuration is read.
//
// Every operation runs `git` plumbing on the store's own thread, so none blocks the reactor; operations run one
// at a time, in the order they were asked for. Completions run on the io_context thread, always (destroying the
// store first drops them).
class CheckpointStore {
 public:
  template <class T>
  using Then = std::function<void(CheckpointResult<T>)>;

  CheckpointStore(boost::asio::io_context& io, CheckpointOptions options);
  ~CheckpointStore();
  CheckpointStore(const CheckpointStore&) = delete;
  CheckpointStore& operator=(const CheckpointStore&) = delete;

  // Records the working tree `cwd` (an absolute directory).
  void snapshot(std::filesystem::path cwd, Then<Snapshot> done);
  // What changed from checkpoint `from` to checkpoint `to`, or to the working tree as it is now (which takes a
  // checkpoint of it first). Unified diffs per file, binary files flagged without a diff.
  void diff(std::filesystem::path cwd, std::string from, std::optional<std::string> to, Then<TreeChanges> done);
  // Makes the working tree equal to checkpoint `to`: files written back (each through a temporary file renamed
  // over it), files created since removed; ignored and skipped files are left alone. The tree is checkpointed
  // first, and that checkpoint's id is returned, so the restore can be undone.
  void restore(std::filesystem::path cwd, std::string to, Then<Restored> done);

  // A small append-only log of lines per key (the engine's record of the checkpoint each turn of a session
  // started from), in <root>/logs/<key>.log, so it outlives the daemon. Keys are ids ([A-Za-z0-9_-]); lines hold
  // no '\n'. Written on the store's thread, in order with the operations; a line cut short by a crash is ignored.
  void append_log(std::string key, std::string line);
  void read_log(std::string key, Then<std::vector<std::string>> done);
  void remove_log(std::string key);

  // Daemon shutdown: operations not started yet are dropped (their completions never run), so the io_context can
  // run out of work; the one running finishes (its git is killed with every child of the daemon).
  void stop();

  // Where the store of `cwd` lives (for docs and tests).
  std::filesystem::path store_directory(const std::filesystem::path& cwd) const;

 private:
  class Worker;
  std::shared_ptr<Worker> m_worker;
};

}  // namespace switchboard::checkpoint
