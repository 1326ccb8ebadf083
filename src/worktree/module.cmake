# A session's own git worktree: create, review against the base, merge, remove (docs/worktrees.md), through the
# checkpoint module's git runner.
switchboard_module(worktree
  SOURCES WorktreeGit.cpp
  PUBLIC switchboard_protocol
  PRIVATE switchboard_checkpoint switchboard_process)
