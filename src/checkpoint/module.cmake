# The daemon's own file checkpoints: a git object store and index per working tree, run through git's plumbing
# on a thread of its own (docs/checkpoints.md).
switchboard_module(checkpoint
  SOURCES BlobStream.cpp CheckpointStore.cpp CheckpointTree.cpp GitProcess.cpp IgnoredPaths.cpp IndexEntries.cpp PatchFiles.cpp TreePath.cpp TreeWatch.cpp WorkTreeStore.cpp
  PUBLIC switchboard_protocol
  PRIVATE switchboard_process)
