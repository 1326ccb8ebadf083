// The checks fuzz_stdio applies to what the dispatcher answered (the rules are listed at the top of
// fuzz_stdio.cpp). Each traps when a rule is broken.
//
// Oracle code: compiled without coverage hooks, so that parsing the request and responses again here neither
// costs instrumented time nor adds coverage features that say nothing about the daemon (tests/fuzz/CMakeLists.txt).

#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace switchboard::fuzz {

// Once, before the first run: the fixed text the checks rely on is what they assume (see DocumentStandIn.h).
void check_stdio_oracle_assumptions();

// `responses`: everything the dispatcher sent for the one message `line`.
void check_stdio_answer(std::string_view line, const std::vector<std::string>& responses);

// `response`: what the transport sends for a line longer than the framer's cap.
void check_overlong_answer(const std::string& response);

}  // namespace switchboard::fuzz
