#pragma once

#include <chrono>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/TextFile.h"

namespace switchboard::testing {

// What `switchboard serve` writes into its data directory once it listens (daemon.json: url, port, token),
// waited for: a test that started the daemon finds its port here. Fails the test when none appears in 10 s.
inline nlohmann::json wait_for_runtime_file(const std::filesystem::path& data_dir) {
  for (int i = 0; i < 1000; ++i) {
    auto runtime = nlohmann::json::parse(read_text_file(data_dir / "daemon.json"), nullptr, false);
    if (runtime.is_object() && runtime.contains("port")) return runtime;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("no daemon.json with a port in " << data_dir);
  return {};
}

}  // namespace switchboard::testing
