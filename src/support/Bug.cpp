#include "switchboard/support/Bug.h"

#include <cstdlib>
#include <utility>

#include <spdlog/spdlog.h>

namespace switchboard {
namespace {

BugHandler& installed_handler() {
  static BugHandler handler;
  return handler;
}

}  // namespace

void report_bug(std::string_view what, const char* file, int line) {
  spdlog::critical("bug: {} ({}:{})", what, file, line);
  if (const auto& handler = installed_handler()) {
    handler(what);
    return;
  }
#ifndef NDEBUG
  spdlog::default_logger()->flush();
  std::abort();
#endif
}

BugHandler set_bug_handler(BugHandler handler) { return std::exchange(installed_handler(), std::move(handler)); }

}  // namespace switchboard
