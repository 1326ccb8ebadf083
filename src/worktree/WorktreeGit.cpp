#include "worktree/WorktreeGit.h"

#include <cstdlib>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include <spdlog/spdlog.h>

#include "checkpoint/GitProcess.h"
#include "checkpoint/PatchFiles.h"
#include "switchboard/process/ExecutableLookup.h"

namespace switchboard::worktree {

namespace fs = std::filesystem;
using checkpoint::GitPlace;

namespace {

// What every git command gets on top of the fixed environment: no hook of the repository's runs, nor an
// fsmonitor daemon it names, nor a signing program, whatever its configuration says.
std::vector<std::string> safe(std::vector<std::string> args) {
  std::vector<std::string> all{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                               "-c", "commit.gpgSign=false",     "-c", "tag.gpgSign=false"};
  all.insert(all.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  return all;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t at = 0; at <= text.size(); ++at) {
    if (at == text.size() || text[at] == separator) {
      parts.push_back(text.substr(start, at - start));
      start = at + 1;
    }
  }
  return parts;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string first_line(const std::string& text) { return trimmed(text.substr(0, text.find('\n'))); }

std::string joined(const std::vector<std::string>& names, std::size_t most = 10) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) text += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > most) text += " and " + std::to_string(names.size() - most) + " more";
  return text;
}

// The git directory a working tree's `.git` names: the directory itself, or the one a linked worktree's `.git`
// file points to ("gitdir: <path>", relative to the working tree when it is not absolute).
std::optional<fs::path> git_dir_of(const fs::path& tree) {
  const auto dot = tree / ".git";
  std::error_code error;
  const auto status = fs::symlink_status(dot, error);
  fs::path target;
  if (fs::is_directory(status)) {
    target = dot;
  } else {
    if (!fs::is_regular_file(status)) return std::nullopt;
    auto text = read_text(dot);
    if (!text || text->rfind("gitdir: ", 0) != 0) return std::nullopt;
    target = trimmed(text->substr(8));
    if (target.is_relative()) target = tree / target;
  }
  // As git does: a directory without HEAD is no repository (a stray `.git` directory), and the search goes on.
  if (!fs::is_regular_file(target / "HEAD", error)) return std::nullopt;
  return target.lexically_normal();
}

GitPlace place_of(const fs::path& git_dir, const fs::path& tree) { return GitPlace{git_dir, git_dir / "index", tree}; }

// The repository a directory is in: the checkout holding it (the main working tree, or a linked worktree), the
// directory's path inside that checkout, and the repository's main working tree.
struct Repository {
  GitPlace checkout;
  fs::path relative;
  GitPlace main;
};

WorktreeResult<Repository> find_repository(const fs::path& cwd) {
  std::error_code error;
  const auto start = fs::weakly_canonical(cwd, error);
  if (error || !fs::is_directory(start))
    return WorktreeError{WorktreeError::Code::NotARepository, cwd.string() + " is not a directory"};
  for (auto at = start;; at = at.parent_path()) {
    if (auto git_dir = git_dir_of(at)) {
      fs::path common = *git_dir;
      if (auto named = read_text(*git_dir / "commondir")) {
        fs::path target = trimmed(*named);
        common = (target.is_relative() ? *git_dir / target : target).lexically_normal();
      }
      if (common.filename() != ".git")
        return WorktreeError{WorktreeError::Code::NotARepository,
                             cwd.string() + " is in a repository whose main working tree cannot be found"};
      const auto main_tree = common.parent_path();
      return Repository{place_of(*git_dir, at), start.lexically_relative(at), place_of(common, main_tree)};
    }
    if (at == at.root_path() || at.parent_path() == at) break;
  }
  return WorktreeError{WorktreeError::Code::NotARepository, cwd.string() + " is not inside a git repository"};
}

// A name the caller gave, refused when git would read it as an option.
bool option_like(const std::string& name) { return name.empty() || name.front() == '-'; }

class Git {
 public:
  explicit Git(const checkpoint::GitProcess& git) : m_git(git) {}

  // git's exit code and output, or a failure to run git at all.
  WorktreeResult<checkpoint::GitOutput> run(const GitPlace& place, std::vector<std::string> args) const {
    auto ran = m_git.run(place, safe(std::move(args)));
    if (!ran) return worktree_failure(ran.error().message);
    return std::move(*ran);
  }
  // The output of a command that must succeed; otherwise a failure with `what` and git's first line of stderr.
  WorktreeResult<std::string> output(const GitPlace& place, std::vector<std::string> args, std::string_view what) const {
    auto ran = run(place, std::move(args));
    if (!ran) return ran.error();
    if (ran->exit_code != 0) {
      std::string reason = first_line(ran->err);
      if (reason.empty()) reason = "git exited with " + std::to_string(ran->exit_code);
      return worktree_failure(std::string(what) + ": " + reason);
    }
    return std::move(ran->out);
  }
  bool succeeds(const GitPlace& place, std::vector<std::string> args) const {
    auto ran = run(place, std::move(args));
    return ran && ran->exit_code == 0;
  }
  bool branch_exists(const GitPlace& place, const std::string& branch) const {
    return succeeds(place, {"show-ref", "--verify", "--quiet", "refs/heads/" + branch});
  }
  WorktreeResult<std::string> commit_of(const GitPlace& place, const std::string& revision) const {
    auto id = output(place, {"rev-parse", "--verify", "--quiet", revision + "^{commit}"}, "cannot find " + revision);
    if (!id) return id.error();
    return trimmed(*id);
  }
  // The base as a revision: its branch when it is one (refs/heads/, so a tag of the same name is not taken).
  std::string base_revision(const GitPlace& place, const std::string& base) const {
    return branch_exists(place, base) ? "refs/heads/" + base : base;
  }
  // user.name and user.email for a commit the daemon makes, when the repository's own configuration has none
  // (the user's global configuration is never read).
  std::vector<std::string> identity(const GitPlace& place) const {
    std::vector<std::string> args;
    if (!succeeds(place, {"config", "--get", "user.name"})) args.insert(args.end(), {"-c", "user.name=Switchboard"});
    if (!succeeds(place, {"config", "--get", "user.email"}))
      args.insert(args.end(), {"-c", "user.email=switchboard@localhost"});
    return args;
  }

 private:
  const checkpoint::GitProcess& m_git;
};

// What changed between two trees or commits, per file, with the unified diff of each.
WorktreeResult<std::vector<protocol::FileChange>> file_changes(const Git& git, const GitPlace& place,
                                                               const std::string& from, const std::string& to) {
  auto raw = git.output(place, {"diff-tree", "-r", "-z", "--no-renames", from, to}, "cannot compare");
  if (!raw) return raw.error();
  struct Raw {
    char status;
    std::string path;
  };
  std::vector<Raw> changes;
  const auto parts = split(*raw, '\0');
  for (std::size_t i = 0; i + 1 < parts.size(); i += 2) {
    // ":<old mode> <new mode> <old id> <new id> <status>", then the path
    const auto fields = split(parts[i], ' ');
    if (fields.size() < 5 || fields[4].empty()) return worktree_failure("cannot read git's comparison");
    changes.push_back({fields[4].front(), std::string(parts[i + 1])});
  }
  std::vector<protocol::FileChange> files;
  if (changes.empty()) return files;
  auto patch = git.output(place,
                          {"diff-tree", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv",
                           from, to},
                          "cannot compare");
  if (!patch) return patch.error();
  checkpoint::PatchFiles patch_files(*patch);
  for (auto& change : changes) files.push_back(patch_files.next(std::move(change.path), change.status));
  return files;
}

// The paths `git status --porcelain -z` lists (each entry "XY path").
std::vector<std::string> status_paths(const std::string& status) {
  std::vector<std::string> paths;
  for (const auto entry : split(status, '\0'))
    if (entry.size() > 3) paths.emplace_back(entry.substr(3));
  return paths;
}

WorktreeResult<GitPlace> worktree_place(const WorktreePlace& place) {
  auto git_dir = git_dir_of(place.path);
  if (!git_dir) return worktree_failure("the worktree " + place.path.string() + " is gone");
  return place_of(*git_dir, place.path);
}

GitPlace main_place(const WorktreePlace& place) { return place_of(place.repository / ".git", place.repository); }

// Where the marks of worktrees not yet settled are kept, under the root: one empty file per worktree directory,
// of the same name (WorktreeGit::settle, remove_leftovers).
constexpr const char* kPendingMarks = ".creating";

fs::path pending_mark(const fs::path& root, const fs::path& worktree) {
  return root / kPendingMarks / worktree.filename();
}

// What a pending mark records, so that the start-up clean-up can take back the branch a killed create made: the
// branch, the commit it was made at, and the repository's main working tree. Written before the branch is made.
struct PendingCreate {
  std::string branch;
  std::string base_commit;
  fs::path repository;
};

std::string mark_text(const PendingCreate& pending) {
  // One field a line; the path last, as the rest of the file (a branch name or commit id has no newline).
  return "branch " + pending.branch + "\nbase " + pending.base_commit + "\nrepository " + pending.repository.string() + "\n";
}

std::optional<PendingCreate> read_mark(const fs::path& mark) {
  auto text = read_text(mark);
  if (!text) return std::nullopt;
  PendingCreate pending;
  std::string_view rest = *text;
  const auto field = [&](std::string_view name, bool last) -> std::optional<std::string> {
    if (rest.substr(0, name.size() + 1) != std::string(name) + " ") return std::nullopt;
    rest.remove_prefix(name.size() + 1);
    const auto end = last ? rest.size() - (rest.ends_with('\n') ? 1 : 0) : rest.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    std::string value(rest.substr(0, end));
    rest.remove_prefix(std::min(rest.size(), end + 1));
    return value;
  };
  auto branch = field("branch", false);
  auto base = field("base", false);
  auto repository = field("repository", true);
  if (!branch || !base || !repository || branch->empty() || base->empty() || repository->empty()) return std::nullopt;
  return PendingCreate{*branch, *base, *repository};
}

// Takes back what a failed create made: the directory, git's entry for it, the new branch, its pending mark.
void undo_create(const Git& git, const GitPlace& main, const fs::path& path, const std::string& branch,
                 const fs::path& mark) {
  std::error_code ignored;
  fs::remove_all(path, ignored);
  git.succeeds(main, {"worktree", "prune"});
  if (git.branch_exists(main, branch)) git.succeeds(main, {"branch", "-D", "--", branch});
  fs::remove(mark, ignored);
}

// The branch a killed create made, deleted only while nothing was done on it: it still points at the commit it was
// made at (a compare-and-delete of the ref, so a commit made meanwhile keeps it) and no worktree has it checked
// out. Otherwise it stays, and the log says so.
void remove_unused_branch(const Git& git, const PendingCreate& pending) {
  const auto main = place_of(pending.repository / ".git", pending.repository);
  const auto ref = "refs/heads/" + pending.branch;
  auto at = git.run(main, {"rev-parse", "--verify", "--quiet", ref});
  if (!at || at->exit_code != 0) return;  // never made, or gone already
  if (trimmed(at->out) != pending.base_commit) {
    spdlog::warn("worktrees: kept the branch {} in {}, left by a create the daemon did not finish: it has commits "
                 "since {}",
                 pending.branch, pending.repository.string(), pending.base_commit);
    return;
  }
  auto listed = git.run(main, {"worktree", "list", "--porcelain"});
  if (!listed || listed->exit_code != 0) return;
  for (const auto entry : split(listed->out, '\n')) {  // a branch name has no newline
    if (entry == "branch " + ref) {
      spdlog::warn("worktrees: kept the branch {} in {}, left by a create the daemon did not finish: a worktree "
                   "has it checked out",
                   pending.branch, pending.repository.string());
      return;
    }
  }
  if (git.succeeds(main, {"update-ref", "-d", ref, pending.base_commit}))
    spdlog::info("worktrees: deleted the branch {} in {}, left unused by a create the daemon did not finish",
                 pending.branch, pending.repository.string());
}

// The merge of the branch into the base as a new commit (the base's and, unless squashed, the branch's child),
// computed in the object store only: no checkout is touched, whatever the outcome.
WorktreeResult<std::string> merge_commit(const Git& git, const GitPlace& main, const WorktreePlace& place,
                                         const std::string& base_commit, const std::string& branch_commit,
                                         bool squash, const std::string& message) {
  auto merged = git.run(main, {"merge-tree", "--write-tree", "-z", "--name-only", base_commit, branch_commit});
  if (!merged) return merged.error();
  const auto parts = split(merged->out, '\0');
  if (merged->exit_code == 1) {
    std::set<std::string> unique;
    std::vector<std::string> files;
    for (std::size_t i = 1; i < parts.size() && !parts[i].empty(); ++i)
      if (unique.insert(std::string(parts[i])).second) files.emplace_back(parts[i]);
    return WorktreeError{WorktreeError::Code::MergeConflict,
                         place.branch + " does not merge cleanly into " + place.base + ": conflicts in " + joined(files),
                         files};
  }
  if (merged->exit_code != 0 || parts.empty() || parts[0].empty())
    return worktree_failure("cannot merge " + place.branch + ": " + first_line(merged->err));
  auto args = git.identity(main);
  args.insert(args.end(), {"commit-tree", std::string(parts[0]), "-p", base_commit});
  if (!squash) args.insert(args.end(), {"-p", branch_commit});
  args.insert(args.end(), {"-m", message});
  auto commit = git.output(main, args, "cannot make the merge commit");
  if (!commit) return commit.error();
  return trimmed(*commit);
}

}  // namespace

WorktreeGit::WorktreeGit(fs::path root, std::string search_path) : m_root(std::move(root)) {
  if (search_path.empty()) {
    const char* path = std::getenv("PATH");
    search_path = path != nullptr && *path != '\0' ? path : process::default_search_path();
  }
  auto executable = process::find_executable("git", search_path, {});
  if (executable) {
    m_git = std::make_unique<checkpoint::GitProcess>(*executable, search_path);
  } else {
    m_missing_git = "worktrees need git, which was not found (" + executable.error().message + ")";
  }
}

WorktreeGit::~WorktreeGit() = default;

std::string branch_from_title(const std::string& title) {
  std::string slug;
  for (const char c : title) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) && u < 0x80) {
      slug += static_cast<char>(std::tolower(u));
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
    if (slug.size() >= 48) break;
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return "switchboard/" + (slug.empty() ? std::string("session") : slug);
}

WorktreeResult<Created> WorktreeGit::create(const CreateRequest& request) const {
  if (!m_git) return worktree_failure(m_missing_git);
  const Git git(*m_git);
  auto repository = find_repository(request.cwd);
  if (!repository) return repository.error();
  const auto& main = repository->main;

  std::string base = request.base;
  if (base.empty()) {
    auto head = git.run(repository->checkout, {"symbolic-ref", "--quiet", "--short", "HEAD"});
    if (!head) return head.error();
    if (head->exit_code == 0) {
      base = trimmed(head->out);
    } else {
      auto commit = git.commit_of(repository->checkout, "HEAD");
      if (!commit) return worktree_failure("the repository has no commit to start a branch from");
      base = *commit;
    }
  } else if (option_like(base)) {
    return worktree_failure("no branch or commit named " + base);
  }
  auto base_commit = git.commit_of(main, git.base_revision(main, base));
  if (!base_commit) return worktree_failure("no branch or commit named " + base);
  if (!git.branch_exists(main, base)) base = *base_commit;  // a commit (or a tag): the branch merges into nothing

  std::string branch = request.branch;
  if (!branch.empty()) {
    if (option_like(branch) || !git.succeeds(main, {"check-ref-format", "--branch", branch}))
      return worktree_failure(branch + " is not a valid branch name");
    if (git.branch_exists(main, branch))
      return WorktreeError{WorktreeError::Code::BranchExists, "the branch " + branch + " already exists"};
  } else {
    const auto derived = branch_from_title(request.title);
    branch = derived;
    for (int n = 2; git.branch_exists(main, branch); ++n) {
      if (n > 1000) return worktree_failure("no free branch name like " + derived);
      branch = derived + "-" + std::to_string(n);
    }
  }

  // A worktree whose directory went away (a crash while creating one, a directory deleted by hand) leaves an
  // entry in the repository; prune drops those before a new one is added.
  git.succeeds(main, {"worktree", "prune"});
  std::error_code error;
  fs::create_directories(m_root, error);
  if (error) return worktree_failure("cannot create " + m_root.string() + ": " + error.message());
  std::string name = branch;
  std::replace(name.begin(), name.end(), '/', '-');
  fs::path path = m_root / name;
  for (int n = 2; fs::exists(fs::symlink_status(path, error)); ++n) path = m_root / (name + "-" + std::to_string(n));
  // Marked before anything is made, so that a daemon killed from here until the session is stored leaves a
  // directory the next start knows it may remove (remove_leftovers).
  const auto mark = pending_mark(m_root, path);
  fs::create_directories(mark.parent_path(), error);
  bool written = false;
  if (!error) {
    // With the branch about to be made and its commit: a branch the next start finds still there, unchanged, is
    // taken back with the directory (remove_leftovers).
    std::ofstream out(mark, std::ios::binary | std::ios::trunc);
    out << mark_text(PendingCreate{branch, *base_commit, main.work_tree});
    out.flush();
    written = static_cast<bool>(out);
  }
  if (!written) {
    fs::remove(mark, error);
    return worktree_failure("cannot write " + mark.string() + (error ? ": " + error.message() : std::string()));
  }

  // --no-checkout, then the checkout with the new worktree's own index: `worktree add` would otherwise check out
  // through the GIT_INDEX_FILE it inherits, the main checkout's.
  if (auto added = git.output(main, {"worktree", "add", "--no-checkout", "-b", branch, path.string(), *base_commit},
                              "cannot add a worktree");
      !added) {
    undo_create(git, main, path, branch, mark);
    return added.error();
  }
  auto place = git_dir_of(path);
  if (!place) {
    undo_create(git, main, path, branch, mark);
    return worktree_failure("git made no worktree at " + path.string());
  }
  if (auto checked_out = git.output(place_of(*place, path), {"read-tree", "-u", "--reset", "HEAD"},
                                    "cannot check out the worktree");
      !checked_out) {
    undo_create(git, main, path, branch, mark);
    return checked_out.error();
  }
  auto cwd = (path / repository->relative).lexically_normal();
  if (!cwd.has_filename()) cwd = cwd.parent_path();  // the worktree's top: no trailing '/'
  fs::create_directories(cwd, error);  // a directory git does not track (empty, or ignored) is not checked out
  return Created{WorktreePlace{path, branch, base, main.work_tree}, cwd};
}

WorktreeResult<std::vector<std::string>> WorktreeGit::uncommitted(const WorktreePlace& place) const {
  if (!m_git) return worktree_failure(m_missing_git);
  const Git git(*m_git);
  auto tree = worktree_place(place);
  if (!tree) return tree.error();
  auto status = git.output(*tree, {"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"},
                           "cannot read the worktree's status");
  if (!status) return status.error();
  return status_paths(*status);
}

WorktreeResult<std::vector<protocol::FileChange>> WorktreeGit::diff(const WorktreePlace& place) const {
  if (!m_git) return worktree_failure(m_missing_git);
  const Git git(*m_git);
  auto tree = worktree_place(place);
  if (!tree) return tree.error();
  auto fork = git.output(*tree, {"merge-base", git.base_revision(*tree, place.base), "HEAD"},
                         "cannot find where the branch started");
  if (!fork) return fork.error();
  // The worktree as a tree, through an index of our own: the agent's index (what it staged) stays as it is.
  GitPlace review = *tree;
  review.index_file = tree->git_dir / "switchboard-review.index";
  std::error_code ignored;
  fs::remove(review.index_file, ignored);
  auto written = git.output(review, {"read-tree", "HEAD"}, "cannot read the branch");
  if (written) written = git.output(review, {"add", "-A"}, "cannot read the worktree");
  if (written) written = git.output(review, {"write-tree"}, "cannot read the worktree");
  fs::remove(review.index_file, ignored);
  if (!written) return written.error();
  return file_changes(git, *tree, trimmed(*fork), trimmed(*written));
}

WorktreeResult<Merged> WorktreeGit::merge(const WorktreePlace& place, bool squash, const std::string& message) const {
  if (!m_git) return worktree_failure(m_missing_git);
  const Git git(*m_git);
  const auto main = main_place(place);
  if (!git.branch_exists(main, place.base))
    return worktree_failure("the base " + place.base + " is not a branch: there is nothing to merge into");
  auto tree = worktree_place(place);
  if (!tree) return tree.error();

  auto head = git.run(main, {"symbolic-ref", "--quiet", "--short", "HEAD"});
  if (!head) return head.error();
  if (head->exit_code != 0 || trimmed(head->out) != place.base)
    return WorktreeError{WorktreeError::Code::CheckoutNotClean,
                         "the main checkout is not on " + place.base + (head->exit_code == 0 ? " but on " + trimmed(head->out) : std::string())};
  auto dirty = git.output(main, {"status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames"},
                          "cannot read the main checkout's status");
  if (!dirty) return dirty.error();
  if (auto changed = status_paths(*dirty); !changed.empty())
    return WorktreeError{WorktreeError::Code::CheckoutNotClean,
                         "the main checkout has uncommitted changes: " + joined(changed), changed};

  // What the agent left uncommitted is part of what the session did: it becomes a commit on the branch first.
  auto pending = uncommitted(place);
  if (!pending) return pending.error();
  if (!pending->empty()) {
    auto added = git.output(*tree, {"add", "-A"}, "cannot commit the worktree's changes");
    if (!added) return added.error();
    auto args = git.identity(*tree);
    args.insert(args.end(), {"commit", "--quiet", "--no-verify", "-m", message});
    if (auto committed = git.output(*tree, args, "cannot commit the worktree's changes"); !committed)
      return committed.error();
  }

  auto base_commit = git.commit_of(main, "refs/heads/" + place.base);
  if (!base_commit) return base_commit.error();
  auto branch_commit = git.commit_of(main, "refs/heads/" + place.branch);
  if (!branch_commit) return branch_commit.error();
  auto fork = git.output(main, {"merge-base", *base_commit, *branch_commit}, "cannot find where the branch started");
  if (!fork) return fork.error();
  if (trimmed(*fork) == *branch_commit) return Merged{*base_commit, {}};  // nothing the base does not have
  std::string new_commit;
  if (!squash && trimmed(*fork) == *base_commit) {
    new_commit = *branch_commit;  // the base has not moved: it fast-forwards to the branch
  } else {
    auto made = merge_commit(git, main, place, *base_commit, *branch_commit, squash, message);
    if (!made) return made.error();
    new_commit = std::move(*made);
  }


  // The user's checkout follows only by a fast-forward, which git refuses (changing nothing) if it would
  // overwrite a file someone changed or created since the checks above.
  auto forwarded = git.run(main, {"merge", "--ff-only", "--quiet", "--no-verify", new_commit});
  if (!forwarded) return forwarded.error();
  if (forwarded->exit_code != 0)
    return WorktreeError{WorktreeError::Code::CheckoutNotClean,
                         "the main checkout could not take the merge: " + first_line(forwarded->err)};
  auto files = file_changes(git, main, *base_commit, new_commit);
  if (!files) return files.error();
  return Merged{new_commit, std::move(*files)};
}

WorktreeResult<bool> WorktreeGit::remove(const WorktreePlace& place, bool delete_branch, bool force) const {
  if (!m_git) return worktree_failure(m_missing_git);
  const Git git(*m_git);
  const auto main = main_place(place);
  std::error_code error;
  fs::remove(pending_mark(m_root, place.path), error);  // a worktree removed is no leftover to find at startup
  error.clear();
  if (git_dir_of(place.path)) {
    if (!force) {
      auto pending = uncommitted(place);
      if (!pending) return pending.error();
      if (!pending->empty())
        return WorktreeError{WorktreeError::Code::UncommittedWork,
                             "the worktree has uncommitted changes: " + joined(*pending), *pending};
    }
    // The directory first, then git's entry for it (prune drops the entries of directories that are gone), so
    // that a crash in between leaves what the next prune cleans up.
    fs::remove_all(place.path, error);
    if (error) return worktree_failure("cannot remove " + place.path.string() + ": " + error.message());
  }
  if (auto pruned = git.output(main, {"worktree", "prune"}, "cannot prune the worktree"); !pruned)
    return pruned.error();
  if (!delete_branch || !git.branch_exists(main, place.branch)) return false;
  if (auto deleted = git.output(main, {"branch", "-D", "--", place.branch}, "cannot delete the branch"); !deleted)
    return deleted.error();
  return true;
}

void WorktreeGit::settle(const WorktreePlace& place) const {
  std::error_code ignored;
  fs::remove(pending_mark(m_root, place.path), ignored);
}

std::vector<fs::path> WorktreeGit::remove_leftovers(const std::vector<fs::path>& owned) const {
  std::vector<fs::path> removed;
  const auto marks = m_root / kPendingMarks;
  std::error_code error;
  if (!fs::is_directory(marks, error)) return removed;
  // Compared as the file system resolves them: a stored path may spell the data directory differently.
  std::set<fs::path> kept;
  for (const auto& path : owned) kept.insert(fs::weakly_canonical(path, error));
  std::vector<fs::path> names;
  for (fs::directory_iterator it(marks, error), end; !error && it != end; it.increment(error))
    names.push_back(it->path().filename());
  for (const auto& name : names) {
    const auto path = m_root / name;
    if (!kept.contains(fs::weakly_canonical(path, error))) {
      const auto pending = read_mark(marks / name);
      // The repository it belongs to, from the `.git` file `git worktree add` wrote, if it got that far, else
      // from the mark.
      std::optional<GitPlace> main;
      if (pending) main = place_of(pending->repository / ".git", pending->repository);
      if (auto git_dir = git_dir_of(path)) {
        if (auto named = read_text(*git_dir / "commondir")) {
          fs::path common = trimmed(*named);
          common = (common.is_relative() ? *git_dir / common : common).lexically_normal();
          if (!common.has_filename()) common = common.parent_path();  // "../.." normalizes to ".git/"
          if (common.filename() == ".git") main = place_of(common, common.parent_path());
        }
      }
      error.clear();
      const auto count = fs::remove_all(path, error);
      if (error) continue;  // its mark stays: tried again at the next start
      if (main && m_git) Git(*m_git).succeeds(*main, {"worktree", "prune"});
      if (pending && m_git) remove_unused_branch(Git(*m_git), *pending);
      if (count > 0) removed.push_back(path);  // a mark whose directory never came is no leftover to report
    }
    fs::remove(marks / name, error);
  }
  return removed;
}

}  // namespace switchboard::worktree
