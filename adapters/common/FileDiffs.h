#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters {

// Building our FileDiffs (schema: tool.started.diffs) from the shapes agents describe file edits in. Which
// agent tool has which shape is the adapter's knowledge; these only turn a shape into FileDiffs, so that every
// client shows a diff from the same field.

// An edit that replaces `old_text` with `new_text` in `path` (a passage, or the whole file).
protocol::FileDiff replacement(std::string path, std::string old_text, std::string new_text);

// A whole file written: what was there before is not known (or there was nothing).
protocol::FileDiff whole_file(std::string path, std::string content);

// The hunks of a unified diff (`git diff`, `diff -u`, or the hunk lines of an apply_patch body: " " context,
// "-" removed, "+" added, "@@" between hunks), one FileDiff per hunk whose old text is its context and removed
// lines and whose new text its context and added lines. Header lines before the first "@@" (Index:, ---, +++,
// diff, ===) are not part of any hunk; other lines before it are a first hunk that left its "@@" out (apply_patch
// allows that for a file's first chunk), so text without any "@@" is one hunk. Lines that are none of these (the
// "\ No newline at end of file" marker, "index …") are skipped.
std::vector<protocol::FileDiff> hunks(const std::string& path, std::string_view unified);

// The changes of a whole apply_patch envelope (read as common/ApplyPatch.h says): an added file whole, an updated
// one hunk by hunk under its original path. A deleted file gives none: the envelope does not say what was in it,
// and a diff from "" would say it was empty.
std::vector<protocol::FileDiff> patch_diffs(std::string_view patch);

}  // namespace switchboard::adapters
