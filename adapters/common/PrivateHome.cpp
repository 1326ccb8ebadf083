#include "common/PrivateHome.h"

#include <fstream>
#include <system_error>

namespace switchboard::adapters {
namespace private_home_detail {

std::string normalized(const std::filesystem::path& path) {
  std::error_code error;
  const auto canonical = std::filesystem::weakly_canonical(path, error);
  auto text = (error ? path.lexically_normal() : canonical).string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

std::string first_line(std::string_view text) { return std::string(text.substr(0, text.find('\n'))); }

// Whether switchboard may take `dir` as its own: a mark it left, nothing in it yet, or a config.toml it wrote.
bool ours(const PrivateHome& home, std::string_view config) {
  std::error_code error;
  if (std::filesystem::exists(home.dir / home.marker_file, error)) return true;
  if (!std::filesystem::exists(home.dir, error) || std::filesystem::is_empty(home.dir, error)) return true;
  std::ifstream in(home.dir / "config.toml");
  std::string written;
  return in && std::getline(in, written) && written == first_line(config);
}

}  // namespace private_home_detail

bool same_place(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code error;
  if (std::filesystem::equivalent(a, b, error)) return true;  // a bind mount or another route to one directory
  return private_home_detail::normalized(a) == private_home_detail::normalized(b);
}

std::optional<std::string> write_private_home(const PrivateHome& home, std::string_view config,
                                              const std::optional<std::string>& user_home,
                                              const std::optional<std::string>& inherited_home) {
  const std::filesystem::path& dir = home.dir;
  if (dir.empty()) return "no private " + home.variable + " configured";
  if (user_home && !user_home->empty() && same_place(dir, std::filesystem::path(*user_home) / home.user_dir)) {
    return "refusing to use the user's own " + home.agent + " home " + dir.string();
  }
  if (inherited_home && !inherited_home->empty() && same_place(dir, *inherited_home)) {
    return "refusing to use the daemon's " + home.variable + " " + dir.string();
  }
  if (!private_home_detail::ours(home, config)) return "refusing to use " + dir.string() + ", which holds files switchboard did not write";
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return "cannot create " + dir.string() + ": " + error.message();
  const auto marker = dir / home.marker_file;
  if (!std::filesystem::exists(marker, error)) {
    std::ofstream mark(marker, std::ios::trunc);
    mark << "This " << home.variable << " belongs to switchboard: it rewrites config.toml at every start of " << home.agent << ".\n";
    if (!mark.flush()) return "cannot write " + marker.string();
  }
  const auto path = dir / "config.toml";
  const auto temporary = dir / "config.toml.switchboard-tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << config;
    if (!out.flush()) return "cannot write " + temporary.string();
  }
  std::filesystem::rename(temporary, path, error);
  if (error) return "cannot write " + path.string() + ": " + error.message();
  return std::nullopt;
}

}  // namespace switchboard::adapters
