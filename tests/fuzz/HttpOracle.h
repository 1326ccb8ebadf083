// The checks fuzz_http applies to what the server wrote back (the rules are listed at the top of fuzz_http.cpp).
// check_output traps when a rule is broken.
//
// Oracle code: compiled without coverage hooks, so that parsing the output again here neither costs
// instrumented time nor adds coverage features that say nothing about the daemon (tests/fuzz/CMakeLists.txt).

#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::fuzz {

// What the input holds that the security rules depend on.
struct InputFacts {
  bool has_host = false;   // an allowed Host value occurs somewhere in the input (any case)
  bool has_token = false;  // the token occurs somewhere in the input
};

class HttpOracle {
 public:
  // The server's policy as the harness configured it. Also checks, once, the fixed text the checks rely on.
  HttpOracle(std::vector<std::string> allowed_hosts, std::string token, std::string cors_origin, std::string identity);

  InputFacts facts_of(std::string_view input) const;

  // `out`: everything the server wrote on one connection; `last_seq`: the newest event the hub has published.
  void check_output(std::string_view out, const InputFacts& facts, std::uint64_t last_seq) const;

 private:
  std::vector<std::string> m_lowered_hosts;
  std::string m_token;
  std::string m_cors_origin;
  std::string m_identity;
};

}  // namespace switchboard::fuzz
