#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AgentWorld.h"

// The end-to-end scenarios every agent adapter must pass, written once against AgentProfile: each agent's test
// file (ClaudeCodeE2ETests.cpp, CodexE2ETests.cpp, ...) runs all of them with its profile. They drive the real CLI
// through the daemon over stdio (and HTTP/SSE where a second client matters) against the project's mock provider,
// validate every event against the schema, and check the turn invariants below on everything the client saw.

namespace switchboard::testing::e2e {

// The turn and request lifecycle the engine promises for every adapter, checked on a client's event stream:
// - a turn starts only while its session reports `running`;
// - an open permission request puts the session in `awaiting_input` until it is resolved, and is resolved once,
//   after any `permission.responding`;
// - a turn ends with `turn.stopped` followed by `idle` (or `stopped` when the agent died), and nothing of that
//   turn (no event carrying its turnId) comes after it;
// - a message or tool event carries the turnId of the turn running in its own session (never an empty one, never
//   another session's);
// - a message id names one message of its session: no other turn of the session uses it again;
// - plan.updated and usage.updated carry, if any turnId, the turn running in their session (they may come between
//   turns without one); commands.updated and mcp.status belong to no turn;
// - session.rewound comes while no turn runs, and its rewoundTurnIds start with its turnId and are ended turns of
//   its session, each rewound once.
// Returns one line per broken rule (empty when all hold).
std::vector<std::string> lifecycle_violations(const std::vector<nlohmann::json>& events);

// The model's replies for one turn in which the agent makes `changes` with its own file tools, one tool call per
// model request (each after the previous tool's output), and then answers `text`.
nlohmann::json file_changing_turn(const AgentProfile& profile, const std::vector<FileChange>& changes, const std::string& text);
// Sends a prompt and allows every permission request of its turn until the turn ends; the send's result (the test
// fails when the send has none).
nlohmann::json send_allowing_everything(DaemonClient& client, const std::string& session_id, const std::string& text);

// Text streamed in pieces reaches a stdio client and an SSE client as the same bytes, in order.
void scenario_streamed_turn(const AgentProfile& profile);
// The agent asks to run a shell command; the client allows it; the command runs and its output reaches the client.
void scenario_permission_allowed(const AgentProfile& profile);
// The client denies; the command does not run; a second client's late answer over HTTP gets -32002.
void scenario_permission_denied_and_late_answer(const AgentProfile& profile);
// A cancel while a permission request is open resolves it as cancelled for every client (stdio and SSE; a late
// answer gets -32002), ends the turn `cancelled`, runs nothing, and the session takes the next prompt.
void scenario_cancel_while_permission_open(const AgentProfile& profile);
// A cancel while a shell command runs ends the turn `cancelled`, the command's process is gone, and the session
// takes the next prompt.
void scenario_interrupt_mid_command(const AgentProfile& profile);
// A prompt sent while a turn runs is queued (every client sees turn.queued) and runs after it.
void scenario_queued_prompt(const AgentProfile& profile);
// After a daemon restart the session is cold; the next send resumes the agent's conversation (the mock sees the
// earlier exchange).
void scenario_restart_and_resume(const AgentProfile& profile);
// A client that quits as soon as a turn has ended (stdin closed at once) loses nothing: the daemon's stream ends
// with daemon.shutdown (the session's stopped before it), and after a restart the session resumes the agent's
// conversation (the mock sees the earlier exchange; no error).
void scenario_shutdown_right_after_turn(const AgentProfile& profile);
// The same with `switchboard serve` stopped by SIGTERM right after a turn an SSE client watched end.
void scenario_sigterm_right_after_turn(const AgentProfile& profile);
// The agent's own conversation deleted while the daemon was down: the next send still answers, in a fresh agent
// conversation seeded with the stored transcript (the mock sees the earlier prompt), and every client is told
// with agent.error code -32020 ConversationLost.
void scenario_conversation_gone(const AgentProfile& profile);
// The CLI killed mid-turn: the turn ends with an error, the session reports stopped, the daemon keeps serving,
// and the next send starts a fresh CLI that resumes the conversation.
void scenario_killed_cli(const AgentProfile& profile);
// A conversation in the CLI's own history is listed, read as normalized events, imported as a cold session of
// ours (once the session that made it is deleted), and resumed.
void scenario_history_import(const AgentProfile& profile);
// While a session of ours continues a conversation, session.import of it makes a session that continues a fork
// of it (the agent's own fork), or, for an agent that cannot fork, is refused with ConversationInUse. Either way
// both sessions answer afterwards, each in its own conversation, and each client sees each reply under the session
// that asked (no event outside that session's turn).
void scenario_import_live_conversation(const AgentProfile& profile);
// session.fork at the first of two turns: the fork's first model request holds that turn and not the second; the
// original goes on with its whole conversation and none of the fork's; forkedFrom names the source and the turn.
void scenario_fork_at_turn(const AgentProfile& profile);
// session.fork at the first of two turns after the agent's own conversation was deleted (the daemon was down):
// the fork still answers, in a fresh agent conversation seeded with the source's exchanges through the fork's turn
// (the mock sees the first prompt and answer, not the second), and the fork's clients are told with agent.error
// code -32020 ConversationLost.
void scenario_fork_of_lost_conversation(const AgentProfile& profile);
// session.rewind of the second of three turns drops it and the third from the next model request (the first
// stays); the rewound turn is no rewind point any more (UnknownTurn); after a daemon restart the session resumes
// the conversation as the rewind left it.
void scenario_rewind_past_turn(const AgentProfile& profile);
// Files changed by the agent's own file tools, then diffed and rewound from the daemon's checkpoints: a first turn
// writes a new file and edits an existing one, a second edits that one again. session.diff of each turn lists
// exactly the files it changed, with their unified diffs (and without a turn, the whole session's change); a files
// rewind of the second turn (conversation left alone, so it works for agents without capabilities.rewind) puts the
// tree back as the first turn left it, byte for byte, and announces session.rewound; a files rewind of the first
// removes the new file and restores the edited one.
void scenario_file_rewind_and_diff(const AgentProfile& profile);
// A CLI that is not there is reported by agents.list (installed false, a problem saying so) and refused by
// session.create with AgentNotInstalled, at once.
void scenario_missing_cli(const AgentProfile& profile);

// session.search over two agents' sessions in one daemon: a turn of each whose prompt, answer and shell tool's
// output carry words of their own; a search finds each word in its session's turn, at the seq of the event that
// said it (turn.started, message.completed, tool.completed); the agent and cwd filters find it with its own
// session's value and leave it out with the other's; once the first session is deleted its words are found no
// more, and the second's still are.
void scenario_search_two_agents(const AgentProfile& profile, const AgentProfile& other);

}  // namespace switchboard::testing::e2e
