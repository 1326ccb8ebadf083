#pragma once

namespace switchboard::adapters::replay {

// `switchboard __replay-claude --recording FILE [--slowdown N] [Claude Code's own flags]`: a stand-in for the
// Claude Code CLI that the replay agent starts instead of it (ReplayAgent.h). It speaks the CLI's duplex
// stream-json on stdin/stdout and answers each prompt with the next turn of the recording (round and round),
// at the recorded pace times N, so the real Claude Code adapter and translator turn it into our events. It
// waits for the answer to each recorded permission request, and honours an interrupt; the answers themselves
// change nothing (the recording goes on as recorded), and nothing is run: tools' output is the recorded one.
// `--version` prints the recorded CLI's version. Blocking I/O throughout: it is a process of its own.
inline constexpr const char* kReplayClaudeCommand = "__replay-claude";

// The registry's entry point for it (BuiltinAgents.cpp): argv[1] is kReplayClaudeCommand.
int run_replay_claude(int argc, char** argv);

}  // namespace switchboard::adapters::replay
