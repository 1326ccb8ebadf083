// How the fuzz harnesses and their oracles report a violated rule: a trap, which libFuzzer records as a crash
// with the input that caused it.

#pragma once

namespace switchboard::fuzz {

[[noreturn]] inline void fail() { __builtin_trap(); }

}  // namespace switchboard::fuzz

#define FUZZ_CHECK(condition)                         \
  do {                                                \
    if (!(condition)) ::switchboard::fuzz::fail();    \
  } while (false)
