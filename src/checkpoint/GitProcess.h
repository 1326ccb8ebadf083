#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/checkpoint/CheckpointError.h"

namespace switchboard::checkpoint {

// Where a git command works: the store's repository and index, and the user's working tree.
struct GitPlace {
  std::filesystem::path git_dir;
  std::filesystem::path index_file;
  std::filesystem::path work_tree;
};

struct GitOutput {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;     // stdout, unless a sink took it
  std::string err;     // the first 64 KiB of stderr
};

// Runs `git` to completion on the calling thread (the store's own thread, never the reactor), with an
// environment made from nothing: the place's GIT_DIR, GIT_INDEX_FILE and GIT_WORK_TREE, no system or global
// configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null), no system attributes, no terminal prompt, the
// C locale, and the daemon's PATH. None of the daemon's own variables reaches git, nor any GIT_* of the user's
// (an alternate object directory or a config parameter would change what git reads or writes).
//
// The child gets a process group of its own, registered like every agent's (ProcessGroupRegistry), so the
// daemon's reaper leaves its exit status alone and a daemon shutdown kills it; it dies with the thread that
// started it (the parent-death signal), so a killed daemon leaves no git running on its store.
class GitProcess {
 public:
  using Sink = std::function<bool(std::string_view chunk)>;  // false: stop reading, kill git
  // For a conversation: gets each chunk of stdout, may append to `more` what to write next, and sets `finished`
  // once it will write nothing else (then stdin is closed when all is written). false: stop reading, kill git.
  using Reply = std::function<bool(std::string_view chunk, std::string& more, bool& finished)>;

  GitProcess(std::filesystem::path executable, std::string search_path);

  // A failure to run git at all is StoreUnavailable; git's exit code is the caller's to judge.
  CheckpointResult<GitOutput> run(const GitPlace& place, const std::vector<std::string>& args,
                                  std::string_view input = {}, const Sink& sink = {}) const;
  // A conversation with a git that answers each part of its input as it reads it (`mktree --batch`): `input` is
  // written first, then what `reply` asks for after each answer. stdin stays open until `reply` has finished.
  CheckpointResult<GitOutput> converse(const GitPlace& place, const std::vector<std::string>& args, std::string input,
                                       const Reply& reply) const;
  // The same as run, and a non-zero exit is StoreUnavailable with `what` and git's first line of stderr.
  CheckpointResult<std::string> output(const GitPlace& place, const std::vector<std::string>& args,
                                       std::string_view what, std::string_view input = {}) const;
  // From now on run() starts no git (StoreUnavailable): the daemon is stopping, and is about to kill every
  // process group it started; a git started after that kill would outlive it. Any thread may call it.
  void refuse_new() { m_refusing.store(true, std::memory_order_relaxed); }

 private:
  CheckpointResult<GitOutput> exchange(const GitPlace& place, const std::vector<std::string>& args,
                                       std::string input, bool input_finished, const Reply& reply) const;

  std::filesystem::path m_executable;
  std::string m_search_path;
  std::atomic<bool> m_refusing{false};
};

}  // namespace switchboard::checkpoint
