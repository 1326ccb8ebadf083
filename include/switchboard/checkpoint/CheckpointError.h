#pragma once

#include <string>
#include <utility>

#include <boost/system/result.hpp>

namespace switchboard::checkpoint {

// An expected failure of the checkpoint store, as a value. The message is lower-case, says what was being done
// and is safe to show a user (paths relative to the working tree, git's own words for what it refused).
struct CheckpointError {
  enum class Code {
    StoreUnavailable,     // the store could not be created, read or written, or `git` is missing or failed
    UnknownCheckpoint,    // no checkpoint of that id in this working tree's store
    WorkTreeUnreadable,   // the working directory is missing or not a directory
    RestoreIncomplete,    // the tree is partly restored: some files could not be written back (the message names the
                          // first), or the restore stopped part way; before_id restores the tree as it was
  };

  Code code = Code::StoreUnavailable;
  std::string message;
  // A restore that failed after its first step: the checkpoint of the tree as it was before it, which restores
  // the tree as it was (with RestoreIncomplete the tree is partly restored; otherwise nothing changed).
  std::string before_id{};
};

// result<T, CheckpointError>: check it, then use `*r` or `r.error()`.
inline CheckpointError store_unavailable(std::string message) {
  return CheckpointError{CheckpointError::Code::StoreUnavailable, std::move(message)};
}

template <class T>
using CheckpointResult = boost::system::result<T, CheckpointError>;

}  // namespace switchboard::checkpoint
