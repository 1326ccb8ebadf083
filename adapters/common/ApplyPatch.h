#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::adapters {

// The apply_patch envelope Codex's and OpenCode's models write ("*** Begin Patch", then per file "*** Add File:
// <path>" with its lines prefixed "+", "*** Update File: <path>" (maybe "*** Move to: <path>") with its hunks, or
// "*** Delete File: <path>", then "*** End Patch"), read into one entry per file. Each adapter shapes these its own
// way (a tool input, FileDiffs); the reading of the text is done here only, so they agree on every patch.
//
// Reading rules: lines end at "\n", and a "\r" before it is dropped (a patch written with CRLF reads like one
// written with LF); a path is the header's text with the spaces and tabs around it trimmed; a header that names
// no path starts no entry, and the lines under it are skipped; lines outside any file section and other "*** "
// markers ("*** End of File") are skipped. Paths are as written: relative ones are the adapter's to resolve.

enum class PatchAction { Add, Update, Delete };

struct PatchedFile {
  PatchAction action = PatchAction::Update;
  std::string path;
  std::optional<std::string> move_to;  // "*** Move to:" of an update
  // Add: the new file's text (its "+" lines without the "+", each ending in "\n"). Update: the section's lines as
  // written, each ending in "\n" (hunk marks, context, removals, additions). Delete: empty.
  std::string body;
};

std::vector<PatchedFile> read_apply_patch(std::string_view patch);

}  // namespace switchboard::adapters
