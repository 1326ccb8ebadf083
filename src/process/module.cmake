# Child processes: the spawn, their groups, signals, output, the orphans the daemon adopts.
switchboard_module(process
  SOURCES
    ChildProcess.cpp
    Environment.cpp
    ExecutableLookup.cpp
    ExitStatus.cpp
    FatalSignalCleanup.cpp
    GroupMembers.cpp
    LogRateLimiter.cpp
    OrphanReaper.cpp
    ProcFs.cpp
    ProcessError.cpp
    ProcessGroupRegistry.cpp
    Spawn.cpp
    StderrForwarder.cpp
    StdinWriter.cpp
    TailBuffer.cpp
    TwoStageSignals.cpp
  PRIVATE switchboard_transport switchboard_support)
