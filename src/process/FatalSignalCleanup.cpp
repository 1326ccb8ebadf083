#include "process/FatalSignalCleanup.h"

#include <signal.h>

#include <array>
#include <cstdlib>

#include "process/ProcessGroupRegistry.h"

namespace switchboard::process {

namespace {

constexpr std::array kFatalSignals = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS};

// Written once by install_fatal_signal_cleanup() before any handler can run; only read afterwards.
std::array<struct sigaction, NSIG> g_previous_actions{};
bool g_installed = false;

void kill_children_at_exit() { ProcessGroupRegistry::the().kill_all_now(); }

void on_fatal_signal(int signal, siginfo_t* info, void* /*context*/) {
  ProcessGroupRegistry::the().kill_all_now();
  ::sigaction(signal, &g_previous_actions[static_cast<std::size_t>(signal)], nullptr);
  // A fault (si_code > 0) re-executes the faulting instruction on return and reaches the previous handler.
  // A sent signal (abort(), kill: si_code <= 0) would not come back by itself: send it again. It stays blocked
  // until this handler returns, then the previous disposition handles it.
  if (info == nullptr || info->si_code <= 0) ::raise(signal);
}

}  // namespace

void install_fatal_signal_cleanup() {
  if (g_installed) return;
  g_installed = true;
  for (const int signal : kFatalSignals) {
    struct sigaction action {};
    action.sa_sigaction = on_fatal_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;  // SA_ONSTACK: a stack overflow still gets a stack if one is set up
    sigemptyset(&action.sa_mask);
    ::sigaction(signal, &action, &g_previous_actions[static_cast<std::size_t>(signal)]);
  }
  std::atexit(kill_children_at_exit);
}

}  // namespace switchboard::process
