#include "run/PromptSource.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace switchboard::run {
namespace {

// A prompt is text for a model: far below this; a bigger input is a mistake (a binary piped in by accident).
constexpr std::size_t kMaxPromptBytes = 16 * 1024 * 1024;

using Outcome = std::variant<std::string, std::string>;

Outcome text(std::string value) { return Outcome(std::in_place_index<0>, std::move(value)); }
Outcome failure(std::string why) { return Outcome(std::in_place_index<1>, std::move(why)); }

Outcome read_all(int fd) {
  std::string out;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return failure(std::string("cannot read the prompt from standard input: ") + std::strerror(errno));
    }
    out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > kMaxPromptBytes) return failure("the prompt on standard input is over 16 MiB");
  }
  return text(std::move(out));
}

}  // namespace

std::variant<std::string, std::string> read_prompt(const PromptSource& source, int stdin_fd) {
  if (source.argument && source.file) return failure("give the prompt as an argument or with --prompt-file, not both");
  Outcome prompt = failure("no prompt: give it as an argument, `-` to read standard input, or --prompt-file FILE");
  if (source.file) {
    std::ifstream in(*source.file, std::ios::binary);
    if (!in) return failure("cannot read --prompt-file " + *source.file + ": " + std::strerror(errno));
    std::ostringstream all;
    all << in.rdbuf();
    prompt = text(all.str());
  } else if (source.argument && *source.argument == "-") {
    prompt = read_all(stdin_fd);
  } else if (source.argument) {
    prompt = text(*source.argument);
  }
  if (prompt.index() == 0 && std::get<0>(prompt).find_first_not_of(" \t\r\n") == std::string::npos) {
    return failure("the prompt is empty");
  }
  return prompt;
}

}  // namespace switchboard::run
