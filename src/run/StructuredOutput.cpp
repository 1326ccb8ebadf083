#include "run/StructuredOutput.h"

#include "run/TextOutput.h"
#include "switchboard/json/JsonWriter.h"

namespace switchboard::run {

std::string encode_result(const protocol::RunResult& result) {
  std::string out;
  {
    json::JsonWriter writer(out);
    protocol::encode(writer, result);
  }
  return out;
}

void JsonOutput::on_result(const protocol::RunResult& result) { m_streams.out->write(encode_result(result), "\n", {}); }

void NdjsonOutput::on_event(std::string_view envelope_text, const nlohmann::json&) {
  m_streams.out->write(envelope_text, "\n", {});
}

void NdjsonOutput::on_result(const protocol::RunResult& result) {
  m_streams.out->write(R"({"type":"run.result","data":)", encode_result(result), "}\n");
}

std::unique_ptr<RunOutput> make_output(boost::asio::io_context& io, OutputFormat format, OutputStreams streams) {
  switch (format) {
    case OutputFormat::Json: return std::make_unique<JsonOutput>(std::move(streams));
    case OutputFormat::Ndjson: return std::make_unique<NdjsonOutput>(std::move(streams));
    case OutputFormat::Text: break;
  }
  return std::make_unique<TextOutput>(io, std::move(streams));
}

bool shows_streamed_text(OutputFormat format, bool err_is_terminal) {
  switch (format) {
    case OutputFormat::Json: return false;
    case OutputFormat::Ndjson: return true;
    case OutputFormat::Text: break;
  }
  return err_is_terminal;
}

}  // namespace switchboard::run
