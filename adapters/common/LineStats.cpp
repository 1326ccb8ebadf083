#include "common/LineStats.h"

#include <spdlog/spdlog.h>

#include "common/NativeJson.h"

namespace switchboard::adapters {
namespace {

constexpr std::uint64_t kLoudMalformedLines = 20;

spdlog::level::level_enum level_for(std::uint64_t malformed_so_far) {
  return malformed_so_far <= kLoudMalformedLines ? spdlog::level::warn : spdlog::level::debug;
}

}  // namespace

void LineLog::not_json(std::string_view line) {
  ++m_stats.lines;
  ++m_stats.malformed;
  spdlog::log(level_for(m_stats.malformed), "{}: skipped a stdout line that is not JSON: {:.200}", m_prefix, line);
}

void LineLog::malformed(std::string_view why, const nlohmann::json& message) {
  ++m_stats.malformed;
  spdlog::log(level_for(m_stats.malformed), "{}: skipped a malformed line ({}): {:.200}", m_prefix, why, native::dump(message));
}

void LineLog::unknown(std::string_view what) {
  ++m_stats.unknown;
  spdlog::debug("{}: ignored {}", m_prefix, what);
}

}  // namespace switchboard::adapters
