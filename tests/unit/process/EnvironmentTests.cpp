#include <catch2/catch.hpp>

#include <stdlib.h>

#include <string>
#include <vector>

#include "switchboard/process/Environment.h"

namespace environment_tests {

using switchboard::process::Environment;

TEST_CASE("environment: entries are parsed and the first definition wins", "[process]") {
  const char* entries[] = {"A=1", "B=", "C=x=y", "A=2", "NOEQUALS", "=hidden", nullptr};
  const auto environment = Environment::from_entries(entries);
  CHECK(environment.entries() == std::vector<std::string>{"A=1", "B=", "C=x=y"});
  CHECK(environment.get("C") == "x=y");
  CHECK(environment.get("B") == "");
  CHECK_FALSE(environment.get("NOEQUALS"));
}

TEST_CASE("environment: set and unset and unset_prefix and retain_if", "[process]") {
  auto environment = Environment::empty()
                         .set("PATH", "/bin")
                         .set("AWS_SECRET", "s")
                         .set("AWS_REGION", "r")
                         .set("HOME", "/root")
                         .set("HOME", "/home/me");
  environment.unset_prefix("AWS_").unset("MISSING");
  CHECK(environment.entries() == std::vector<std::string>{"HOME=/home/me", "PATH=/bin"});
  environment.retain_if([](std::string_view name) { return name == "PATH"; });
  CHECK(environment.entries() == std::vector<std::string>{"PATH=/bin"});
  CHECK(environment.contains("PATH"));
  CHECK(environment.size() == 1);
}

TEST_CASE("environment: the daemon's copy never carries SWITCHBOARD_ variables", "[process]") {
  ::setenv("SWITCHBOARD_TOKEN", "secret", 1);
  ::setenv("SWITCHBOARD_LOG_LEVEL", "debug", 1);
  ::setenv("SWITCHBOARDX", "kept: the prefix includes the underscore", 1);
  const auto environment = Environment::from_daemon();
  ::unsetenv("SWITCHBOARD_TOKEN");
  ::unsetenv("SWITCHBOARD_LOG_LEVEL");
  ::unsetenv("SWITCHBOARDX");
  CHECK_FALSE(environment.contains("SWITCHBOARD_TOKEN"));
  CHECK_FALSE(environment.contains("SWITCHBOARD_LOG_LEVEL"));
  CHECK(environment.contains("SWITCHBOARDX"));
  for (const auto& entry : environment.entries()) CHECK(entry.find("secret") == std::string::npos);
}

TEST_CASE("environment: invalid names and values are reported without the value", "[process]") {
  CHECK_FALSE(Environment::empty().set("GOOD", "value").validate());
  CHECK(Environment::empty().set("", "v").validate() == "environment variable with an empty name");
  CHECK(Environment::empty().set("A=B", "v").validate() == "environment variable name contains '=' or NUL: A=B");
  const auto nul_value = Environment::empty().set("KEY", std::string("se\0cret", 7)).validate();
  REQUIRE(nul_value);
  CHECK(*nul_value == "environment variable KEY has a NUL byte in its value");
}

}  // namespace environment_tests
