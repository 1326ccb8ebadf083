#pragma once

#include "e2e/AgentWorld.h"

// The real agents' profiles, for the tests that run more than one agent (in one daemon, or a scenario that needs a
// second agent beside the one it tests). Each is defined with its agent's own tests, in that file's namespace.

namespace claude_code_e2e_tests {
const switchboard::testing::e2e::AgentProfile& claude();
}  // namespace claude_code_e2e_tests

namespace codex_e2e_tests {
const switchboard::testing::e2e::AgentProfile& codex();
// Codex with a model of its catalog, to which it offers apply_patch (its file tool).
const switchboard::testing::e2e::AgentProfile& codex_with_apply_patch();
}  // namespace codex_e2e_tests

namespace opencode_e2e_tests {
const switchboard::testing::e2e::AgentProfile& opencode();
}  // namespace opencode_e2e_tests

namespace pi_e2e_tests {
const switchboard::testing::e2e::AgentProfile& pi();
}  // namespace pi_e2e_tests
