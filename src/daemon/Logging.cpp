#include "daemon/Logging.h"

#include <memory>
#include <vector>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace switchboard::daemon {

std::optional<std::string> configure_logging(const std::string& level_name, const std::string& file) {
  const auto level = spdlog::level::from_str(level_name);
  if (level == spdlog::level::off && level_name != "off") return "unknown log level: " + level_name;
  std::vector<spdlog::sink_ptr> sinks;
  sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>(spdlog::color_mode::automatic));
  if (!file.empty()) {
    try {
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(file));
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
