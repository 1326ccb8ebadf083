#include "daemon/Logging.h"

#include <memory>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon/LoggingSinks.h"

namespace switchboard::daemon {

std::optional<std::string> configure_logging(const std::string& level_name, const std::string& file) {
  const auto level = spdlog::level::from_str(level_name);
  if (level == spdlog::level::off && level_name != "off") return "unknown log level: " + level_name;
  std::vector<spdlog::sink_ptr> sinks;
  // Neither sink ever waits for its output: logging happens on the reactor thread (LoggingSinks.h).
  sinks.push_back(std::make_shared<NonBlockingStderrSink>(2));
  if (!file.empty()) {
    try {
      sinks.push_back(std::make_shared<BackgroundFileSink>(file));
    } catch (const spdlog::spdlog_ex& error) {
      return std::string("cannot open log file: ") + error.what();
    }
  }
  auto logger = std::make_shared<spdlog::logger>("switchboard", sinks.begin(), sinks.end());
  logger->set_level(level);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  return std::nullopt;
}

}  // namespace switchboard::daemon
