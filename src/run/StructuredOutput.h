#pragma once

#include "run/RunOutput.h"

namespace switchboard::run {

// --output json: nothing until the end, then the result object on one line.
class JsonOutput final : public RunOutput {
 public:
  explicit JsonOutput(OutputStreams streams) : m_streams(std::move(streams)) {}
  void on_event(std::string_view, const nlohmann::json&) override {}
  void on_note(std::string_view) override {}
  void on_result(const protocol::RunResult& result) override;

 private:
  OutputStreams m_streams;
};

// --output ndjson: every event of the run's session exactly as stdio and SSE carry it (the event envelope,
// seq and all), then exactly one `{"type":"run.result","data":…}` line (schema: RunResultLine).
class NdjsonOutput final : public RunOutput {
 public:
  explicit NdjsonOutput(OutputStreams streams) : m_streams(std::move(streams)) {}
  void on_event(std::string_view envelope_text, const nlohmann::json& envelope) override;
  void on_note(std::string_view) override {}
  void on_result(const protocol::RunResult& result) override;

 private:
  OutputStreams m_streams;
};

}  // namespace switchboard::run
