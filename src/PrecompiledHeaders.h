// The third-party and standard headers that most of the project's translation units include, precompiled once
// per build configuration (CMake: SWITCHBOARD_PCH) and reused by every target. Only headers that are heavy and
// widely used belong here: every translation unit pays for loading the precompiled image.
// Code must still include what it uses; this file is never included by name.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
