#include <catch2/catch.hpp>

#include <memory>

#include "process/ProcessGroupRegistry.h"

namespace process_group_registry_tests {

using switchboard::process::ProcessGroupRegistry;

TEST_CASE("process group registry: add and remove and capacity", "[process]") {
  auto registry = std::make_unique<ProcessGroupRegistry>();
  CHECK(registry->size() == 0);
  CHECK_FALSE(registry->add(0));
  CHECK_FALSE(registry->add(1));  // never "every process" or init
  CHECK(registry->add(4242));
  CHECK(registry->contains(4242));
  registry->remove(4242);
  CHECK_FALSE(registry->contains(4242));
  registry->remove(4242);  // no-op
  for (std::size_t i = 0; i < ProcessGroupRegistry::kCapacity; ++i) CHECK(registry->add(100000 + static_cast<pid_t>(i)));
  CHECK(registry->size() == ProcessGroupRegistry::kCapacity);
  CHECK_FALSE(registry->add(99));
  registry->remove(100000);
  CHECK(registry->add(99));
}

TEST_CASE("process group registry: kill_all_now on an empty registry does nothing", "[process]") {
  ProcessGroupRegistry registry;
  CHECK(registry.kill_all_now() == 0);
}

}  // namespace process_group_registry_tests
