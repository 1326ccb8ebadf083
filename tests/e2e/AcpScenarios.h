#pragma once

#include "e2e/AgentWorld.h"

// `switchboard acp` with the real agent CLIs against the mock providers, the editor being the official ACP SDK's
// client (tests/acp/acp_editor.mjs, run with node; the SDK is installed by scripts/install-acp-sdk). Written once
// for every agent, like the conformance scenarios; every message the agent side sent is validated against the
// ACP JSON Schema shipped in the SDK.

namespace switchboard::testing::e2e {

// A prompt whose answer streams as agent_message_chunk updates and resolves with stopReason end_turn.
void scenario_acp_streamed_prompt(const AgentProfile& profile);

// The models the agent offers reach the editor as the `model` config option once the agent has started; the
// editor picks another, and the next prompt's model request names it.
void scenario_acp_model_chosen_by_the_editor(const AgentProfile& profile);

// A tool call asks the editor (session/request_permission); allowed, the tool runs and its update completes.
void scenario_acp_permission_allowed(const AgentProfile& profile);

// The same, rejected by the editor: the tool does not run.
void scenario_acp_permission_rejected(const AgentProfile& profile);

// session/cancel while the answer streams: the prompt resolves with stopReason cancelled.
void scenario_acp_cancel_mid_turn(const AgentProfile& profile);

// A second `switchboard acp` (a new daemon on the same data directory) lists the session, loads it (the
// history is replayed as updates) and its next prompt continues the conversation.
void scenario_acp_load_after_restart(const AgentProfile& profile);

// A prompt with a file link, an embedded text resource and an image: the agent's model request has all three
// (the link's path, the resource's text, the image's bytes).
void scenario_acp_prompt_with_resources(const AgentProfile& profile);

// Two prompts sent at once: the second queues behind the first and each resolves at its own turn's end;
// session/close answers; a second process resumes the session (no replay) and prompts it again.
void scenario_acp_queued_prompts_close_and_resume(const AgentProfile& profile);

// Attached to a running `serve`: an SSE client sees the editor's session live, answers its permission first,
// and the request is withdrawn from the editor ($/cancel_request).
void scenario_acp_attached_permission_answered_elsewhere(const AgentProfile& profile);

// A turn sent over HTTP waits on a permission; an editor that loads the session then is asked it too, answers,
// and the tool runs.
void scenario_acp_load_asks_an_open_permission(const AgentProfile& profile);

// The agent's controls reach the editor in ACP's own updates: a plan (`plan_reply` makes it, then the model
// answers the tool's output), usage_update with the window's size, available_commands_update, and the agent's
// reasoning effort as a thought_level config option, which the editor changes, and the next model request
// carries (`reasoning_effort`, as chat completions name it). The editor's MCP server (stdio) reaches the agent,
// which starts it. Every message validates against the ACP schema.
void scenario_acp_controls(const AgentProfile& profile, const Json& plan_reply);

}  // namespace switchboard::testing::e2e
