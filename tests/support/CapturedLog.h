#pragma once

#include <memory>
#include <string>
#include <vector>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

namespace switchboard::testing {

// Routes the default logger into memory for the test and restores it afterwards. Each line is formatted with
// `pattern` ("%v": the bare message; "%l %v" puts the level first) and has no end-of-line.
class CapturedLog {
 public:
  explicit CapturedLog(const std::string& pattern = "%v") : m_previous(spdlog::default_logger()) {
    m_sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000);
    m_sink->set_formatter(std::make_unique<spdlog::pattern_formatter>(pattern, spdlog::pattern_time_type::local, ""));
    auto logger = std::make_shared<spdlog::logger>("captured", m_sink);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(m_previous); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  std::vector<std::string> lines() const { return m_sink->last_formatted(); }

 private:
  std::shared_ptr<spdlog::logger> m_previous;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> m_sink;
};

}  // namespace switchboard::testing
