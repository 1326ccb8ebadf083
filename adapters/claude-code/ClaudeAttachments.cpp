#include "claude-code/ClaudeAttachments.h"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace switchboard::adapters::claude {
namespace {

PreparedAttachment by_path(const std::string& path, std::optional<std::string> note = std::nullopt) {
  PreparedAttachment prepared;
  prepared.path = path;
  prepared.note = std::move(note);
  return prepared;
}

}  // namespace

std::optional<std::string> sniff_image_type(std::string_view head) {
  if (head.starts_with("\x89PNG\r\n\x1a\n")) return "image/png";
  if (head.starts_with("\xff\xd8\xff")) return "image/jpeg";
  if (head.starts_with("GIF87a") || head.starts_with("GIF89a")) return "image/gif";
  if (head.size() >= 12 && head.starts_with("RIFF") && head.substr(8, 4) == "WEBP") return "image/webp";
  return std::nullopt;
}

std::string base64_encode(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto a = static_cast<unsigned char>(bytes[i]);
    const auto b = static_cast<unsigned char>(bytes[i + 1]);
    const auto c = static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[a >> 2];
    out += kAlphabet[((a & 0x03) << 4) | (b >> 4)];
    out += kAlphabet[((b & 0x0f) << 2) | (c >> 6)];
    out += kAlphabet[c & 0x3f];
  }
  if (i + 1 == bytes.size()) {
    const auto a = static_cast<unsigned char>(bytes[i]);
    out += kAlphabet[a >> 2];
    out += kAlphabet[(a & 0x03) << 4];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const auto a = static_cast<unsigned char>(bytes[i]);
    const auto b = static_cast<unsigned char>(bytes[i + 1]);
    out += kAlphabet[a >> 2];
    out += kAlphabet[((a & 0x03) << 4) | (b >> 4)];
    out += kAlphabet[(b & 0x0f) << 2];
    out += '=';
  }
  return out;
}

std::vector<PreparedAttachment> prepare_attachments(const std::vector<protocol::Attachment>& attachments,
                                                    std::size_t max_image_bytes) {
  std::vector<PreparedAttachment> prepared;
  prepared.reserve(attachments.size());
  for (const auto& attachment : attachments) {
    std::ifstream file(attachment.path, std::ios::binary);
    if (!file) {
      prepared.push_back(by_path(attachment.path));  // the agent may still find it (or say it cannot)
      continue;
    }
    std::string head(12, '\0');
    file.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(file.gcount()));
    auto media_type = sniff_image_type(head);
    if (!media_type) {
      prepared.push_back(by_path(attachment.path));
      continue;
    }
    std::error_code error;
    const auto size = std::filesystem::file_size(attachment.path, error);
    if (error || size > max_image_bytes) {
      prepared.push_back(by_path(attachment.path, error ? "the image could not be read" : "the image is too large to inline"));
      continue;
    }
    std::string bytes(static_cast<std::size_t>(size), '\0');
    file.seekg(0);
    file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (static_cast<std::size_t>(file.gcount()) != bytes.size()) {
      prepared.push_back(by_path(attachment.path, "the image could not be read"));
      continue;
    }
    PreparedAttachment image;
    image.path = attachment.path;
    image.media_type = std::move(media_type);
    image.base64_data = base64_encode(bytes);
    prepared.push_back(std::move(image));
  }
  return prepared;
}

}  // namespace switchboard::adapters::claude
