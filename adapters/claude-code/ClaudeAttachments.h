#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters::claude {

// How the files a user attaches to a prompt reach Claude. Decision: images the model can look at (PNG, JPEG, GIF,
// WebP, recognized by their first bytes, whatever the name or mimeType says) go inline as base64 image blocks,
// because the model cannot open a binary file with its tools; every other file is named by its path, because the
// agent reads files itself and inlining them would spend the context on files it may not need.

struct PreparedAttachment {
  std::string path;
  std::optional<std::string> media_type;  // set for an inlined image
  std::string base64_data;                // the image, when media_type is set
  std::optional<std::string> note;        // why an image-looking file is referenced instead (too big, unreadable)
};

// The API's limit for one image is 5 MB of image data.
inline constexpr std::size_t kMaxInlineImageBytes = 5 * 1024 * 1024;

// Reads what needs reading: blocking file I/O, bounded by `max_image_bytes` per file. Run it off the reactor
// thread (or accept the cost for a few small images). Never fails: a file that cannot be read is referenced by path.
std::vector<PreparedAttachment> prepare_attachments(const std::vector<protocol::Attachment>& attachments,
                                                    std::size_t max_image_bytes = kMaxInlineImageBytes);

// The media type of an image the model accepts, from the file's first bytes; none for anything else.
std::optional<std::string> sniff_image_type(std::string_view head);

std::string base64_encode(std::string_view bytes);

}  // namespace switchboard::adapters::claude
