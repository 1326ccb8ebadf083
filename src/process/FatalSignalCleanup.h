#pragma once

namespace switchboard::process {

// Makes a dying daemon take its agents with it: on a crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS)
// and at exit() it calls ProcessGroupRegistry::the().kill_all_now().
//
// The crash handler SIGKILLs the registered groups, reinstalls the handler that was there before (the
// default, or a sanitizer's, so crash reports are unchanged) and lets the signal take its course again. It
// allocates nothing and takes no locks. Call once, early in main(), from the main thread; idempotent.
//
// What this cannot cover: SIGKILL of the daemon and _exit() (no handler runs). The first is what the death signal
// (SpawnSpec::dies_with_daemon, Spawn.h) is for; code that calls _exit() deliberately (the "second Ctrl-C" path) calls kill_all_now()
// itself first.
void install_fatal_signal_cleanup();

}  // namespace switchboard::process
