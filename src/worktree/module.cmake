# A session's own git worktree: create, review against the base, merge, remove (docs/worktrees.md), through the
# checkpoint module's git runner; the repository's set-up command run in a new one (a supervised child process).
switchboard_module(worktree
  SOURCES SetupCommands.cpp SetupRun.cpp WorktreeGit.cpp
  PUBLIC switchboard_protocol
  PRIVATE switchboard_checkpoint switchboard_process)
