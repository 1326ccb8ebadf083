#include "acp/AcpPrompt.h"
#include "acp/JsonMembers.h"

#include <atomic>
#include <fstream>

#include <boost/beast/core/detail/base64.hpp>

namespace switchboard::acp {
namespace acp_prompt_detail {


int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string extension_for(const std::string& mime_type) {
  if (mime_type == "image/png") return ".png";
  if (mime_type == "image/jpeg") return ".jpg";
  if (mime_type == "image/gif") return ".gif";
  if (mime_type == "image/webp") return ".webp";
  if (mime_type == "application/pdf") return ".pdf";
  return ".bin";
}

// Writes base64 `data` to a new file under `dir`; the path, or "" when it is not base64 or cannot be written.
std::string spill(const std::string& data, const std::string& mime_type, const std::filesystem::path& dir) {
  namespace base64 = boost::beast::detail::base64;
  std::string bytes(base64::decoded_size(data.size()), '\0');
  const auto [written, read] = base64::decode(bytes.data(), data.data(), data.size());
  // The decoder stops at the padding: everything before it must have been read.
  const auto unpadded = data.find_last_not_of('=') + 1;
  if (data.empty() || read < unpadded) return "";
  bytes.resize(written);
  static std::atomic<unsigned> counter{0};
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  const auto path = dir / ("attachment-" + std::to_string(++counter) + extension_for(mime_type));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return out ? path.string() : std::string();
}

void append(std::string& text, const std::string& piece) {
  if (!text.empty() && text.back() != '\n') text += "\n\n";
  text += piece;
}

}  // namespace acp_prompt_detail

using namespace acp_prompt_detail;

std::string path_of_file_uri(const std::string& uri) {
  constexpr std::string_view kScheme = "file://";
  if (uri.rfind(kScheme, 0) != 0) return "";
  std::string rest = uri.substr(kScheme.size());
  // file://host/path: only the local host (empty or localhost) names a path here.
  if (rest.rfind("localhost/", 0) == 0) rest = rest.substr(9);
  if (rest.empty() || rest.front() != '/') return "";
  std::string path;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && hex_value(rest[i + 1]) >= 0 && hex_value(rest[i + 2]) >= 0) {
      path += static_cast<char>(hex_value(rest[i + 1]) * 16 + hex_value(rest[i + 2]));
      i += 2;
    } else {
      path += rest[i];
    }
  }
  return path;
}

std::variant<PromptForSend, std::string> prompt_for_send(const Json& blocks, const std::filesystem::path& spill_dir) {
  if (!blocks.is_array()) return std::string("prompt must be an array of content blocks");
  PromptForSend prompt;
  const auto attach = [&](const std::string& path, const std::string& mime_type) {
    Json attachment{{"path", path}};
    if (!mime_type.empty()) attachment["mimeType"] = mime_type;
    prompt.attachments.push_back(std::move(attachment));
  };
  for (const auto& block : blocks) {
    const auto type = string_member(block, "type");
    if (type == "text") {
      append(prompt.text, string_member(block, "text"));
    } else if (type == "resource_link") {
      const auto uri = string_member(block, "uri");
      const auto path = path_of_file_uri(uri);
      if (!path.empty()) {
        attach(path, string_member(block, "mimeType"));
      } else {
        append(prompt.text, "[" + string_member(block, "name") + "](" + uri + ")");
      }
    } else if (type == "resource") {
      const auto& resource = block.contains("resource") ? block["resource"] : Json::object();
      const auto uri = string_member(resource, "uri");
      if (resource.contains("text") && resource["text"].is_string()) {
        append(prompt.text, "Content of " + uri + ":\n```\n" + resource["text"].get<std::string>() + "\n```");
      } else if (resource.contains("blob") && resource["blob"].is_string()) {
        const auto mime_type = string_member(resource, "mimeType");
        const auto path = spill(resource["blob"].get<std::string>(), mime_type, spill_dir);
        if (path.empty()) return "the embedded resource " + uri + " is not base64 or could not be stored";
        attach(path, mime_type);
        append(prompt.text, "(" + uri + " is attached as " + path + ")");
      } else {
        return "an embedded resource needs text or blob";
      }
    } else if (type == "image" || type == "audio") {
      const auto mime_type = string_member(block, "mimeType");
      const auto path = spill(string_member(block, "data"), mime_type, spill_dir);
      if (path.empty()) return "the " + type + " block's data is not base64 or could not be stored";
      attach(path, mime_type);
    } else {
      return "unknown content block type '" + type + "'";
    }
  }
  return prompt;
}

}  // namespace switchboard::acp
