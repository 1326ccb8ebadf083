#pragma once

#include <filesystem>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

namespace switchboard::acp {

// An ACP prompt (an array of ContentBlocks) as what session.send takes: the text and the attachments. Nothing
// the editor sent is dropped:
// - text blocks are the prompt's text, in order;
// - a resource_link to a file (file:// URI) is an attachment by path; any other link is named in the text;
// - an embedded text resource is put in the text, fenced and labelled with its URI;
// - an image or an embedded binary resource is written to a file under `spill_dir` and attached by path (the
//   agents read attachments from disk).
struct PromptForSend {
  std::string text;
  nlohmann::json attachments = nlohmann::json::array();  // of Attachment ({path, mimeType?})
};

// The prompt, or why it cannot be read (a message for an InvalidParams error).
std::variant<PromptForSend, std::string> prompt_for_send(const nlohmann::json& blocks, const std::filesystem::path& spill_dir);

// The path of a file:// URI (percent-decoded), or "" for any other URI.
std::string path_of_file_uri(const std::string& uri);

}  // namespace switchboard::acp
