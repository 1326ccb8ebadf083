#pragma once

#include <functional>
#include <string_view>

namespace switchboard {

// A bug is a broken invariant of ours, as opposed to an expected failure (bad input, a missing file), which is a
// value. report_bug() logs at critical level and then calls the installed bug handler: by default it aborts in
// debug and sanitizer builds (so tests and fuzzers catch it) and returns in release builds (the caller then
// degrades, e.g. answers -32603). Tests that exercise a defensive path install a recording handler.
void report_bug(std::string_view what, const char* file, int line);

using BugHandler = std::function<void(std::string_view what)>;
// Installs `handler` and returns the previous one. An empty handler restores the default.
BugHandler set_bug_handler(BugHandler handler);

}  // namespace switchboard

#define SWITCHBOARD_ASSERT(condition, why)                                   \
  do {                                                                       \
    if (!(condition)) ::switchboard::report_bug((why), __FILE__, __LINE__);  \
  } while (false)
