#pragma once

#include "e2e/AgentWorld.h"

// `switchboard run` with the real agent CLIs against the mock providers, written once for every agent (as the
// conformance scenarios are): called from each agent's E2E test file with its profile.

namespace switchboard::testing::e2e {

// A run that calls a tool (asked, and allowed by --on-ask allow) and prints the final text on stdout.
void scenario_run_calls_tool_and_prints_final_text(const AgentProfile& profile);

// A run attached to a running `serve`: an SSE client sees its events (the same bytes and seqs as the run's
// ndjson) and answers its permission (--on-ask delegate).
void scenario_run_attached_to_serve_delegates_its_permission(const AgentProfile& profile);

}  // namespace switchboard::testing::e2e
