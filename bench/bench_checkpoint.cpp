// bench_checkpoint: what the daemon's file checkpoints cost on a 10,000-file working tree (issue 35).
//
// A fresh tree of 10,000 small files in 100 directories (and a .gitignore'd build directory), a fresh store:
// the first checkpoint (every file hashed and stored) and the disk the store then takes; then rounds in which a
// few files change (two edited, one created, one deleted, as a turn of an agent would) and a checkpoint is taken:
// the median and the 90th percentile of those, against the target of 50 ms. Each such round is followed by one
// that also makes a directory, which makes the store read the whole tree; then one after nothing changed.
// A second store on the same tree takes every snapshot through git's index (`always_through_index`, the way
// before snapshots were built from the last tree in memory), alternating first and second with the store under
// test, so that both ways are measured on the same changes under the same load.
// Meanwhile the reactor runs a 1 ms timer, and the longest it was late is printed: the checkpoint runs on the
// store's own thread, not the reactor.
// Last, a diff of one round's changes against the tree as it is.
//
// Usage: bench_checkpoint [files [rounds [directory]]]   (default 10000 files, 30 rounds, a fresh directory
// under /tmp, removed afterwards). Build it in a release tree.

#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "switchboard/checkpoint/CheckpointStore.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace switchboard;

constexpr double kTargetMs = 50.0;

// CPU time (user + system) of the child processes reaped so far: the git commands the store ran.
double children_cpu_ms() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

// CPU time (user + system) of this process: the store's thread, and the reactor's timer.
double own_cpu_ms() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void write(const fs::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// Disk blocks in use under `dir` (what `du` counts), in bytes, and the number of files.
std::pair<std::uintmax_t, std::size_t> disk_use(const fs::path& dir) {
  std::uintmax_t bytes = 0;
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) == 0) bytes += static_cast<std::uintmax_t>(st.st_blocks) * 512;
    if (entry.is_regular_file()) ++files;
  }
  return {bytes, files};
}

// Runs the io_context until `done`, with a 1 ms timer ticking meanwhile; returns the longest lateness seen.
class ReactorWatch {
 public:
  explicit ReactorWatch(boost::asio::io_context& io) : m_io(io), m_timer(io) {}

  template <class Start>
  double run(Start start) {
    bool done = false;
    m_done = &done;
    m_worst_ms = 0;
    start([&done] { done = true; });
    arm();
    while (!done) m_io.run_one();
    m_timer.cancel();
    m_io.run();
    m_io.restart();
    return m_worst_ms;
  }

 private:
  void arm() {
    const auto due = Clock::now() + std::chrono::milliseconds(1);
    m_timer.expires_at(due);
    m_timer.async_wait([this, due](const boost::system::error_code& error) {
      if (error) return;
      m_worst_ms = std::max(m_worst_ms, std::chrono::duration<double, std::milli>(Clock::now() - due).count());
      if (!*m_done) arm();
    });
  }

  boost::asio::io_context& m_io;
  boost::asio::steady_timer m_timer;
  bool* m_done = nullptr;
  double m_worst_ms = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const int files = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 30;
  const bool own_directory = argc <= 3;
  fs::path base = own_directory ? fs::temp_directory_path() / ("bench-checkpoint-" + std::to_string(::getpid())) : fs::path(argv[3]);
  const auto tree = base / "tree";
  const auto data = base / "data";
  fs::create_directories(tree);
  fs::create_directories(data);

  const int directories = std::max(1, files / 100);
  for (int d = 0; d < directories; ++d) {
    fs::create_directories(tree / ("dir" + std::to_string(d)));
    for (int f = 0; f < files / directories; ++f) {
      write(tree / ("dir" + std::to_string(d)) / ("file" + std::to_string(f) + ".txt"),
            "line one of file " + std::to_string(f) + " in directory " + std::to_string(d) +
                "\nsome more text, so that a file is about the size of a small source file\n" + std::string(120, 'x') + "\n");
    }
  }
  write(tree / ".gitignore", "build/\n");
  fs::create_directories(tree / "build");
  for (int f = 0; f < 200; ++f) write(tree / "build" / ("out" + std::to_string(f) + ".o"), std::string(4096, 'o'));
  const auto [tree_bytes, tree_files] = disk_use(tree);

  boost::asio::io_context io{1};
  checkpoint::CheckpointOptions options;
  options.root = data / "checkpoints";
  checkpoint::CheckpointStore store(io, options);
  checkpoint::CheckpointOptions index_options;
  index_options.root = data / "checkpoints-through-index";
  index_options.always_through_index = true;
  checkpoint::CheckpointStore through_index(io, index_options);
  ReactorWatch watch(io);

  std::optional<checkpoint::CheckpointResult<checkpoint::Snapshot>> taken;
  const auto snapshot = [&](checkpoint::CheckpointStore& which) {
    const auto start = Clock::now();
    const double late = watch.run([&](auto done) {
      which.snapshot(tree, [&, done](auto result) {
        taken.emplace(std::move(result));
        done();
      });
    });
    const double ms = ms_since(start);
    if (!*taken) {
      std::fprintf(stderr, "bench_checkpoint: %s\n", taken->error().message.c_str());
      std::exit(1);
    }
    return std::pair{ms, late};
  };

  std::printf("tree: %zu files (%d kept, 200 ignored), %.1f MB on disk\n", tree_files, files, tree_bytes / 1e6);
  const double first_cpu_before = children_cpu_ms();
  const double first_own_before = own_cpu_ms();
  const auto [first_ms, first_late] = snapshot(store);
  const double first_cpu = children_cpu_ms() - first_cpu_before;
  const double first_own = own_cpu_ms() - first_own_before;
  const auto first_id = (*taken)->id;
  const auto [store_bytes, store_files] = disk_use(options.root);
  std::printf("first checkpoint: %.0f ms (git's CPU %.0f ms, the store's own %.0f ms); store %.1f MB on disk in %zu "
              "files; reactor late at most %.2f ms\n",
              first_ms, first_cpu, first_own, store_bytes / 1e6, store_files, first_late);
  const double index_first_cpu_before = children_cpu_ms();
  const double index_first_own_before = own_cpu_ms();
  const double index_first_ms = snapshot(through_index).first;
  std::printf("  the same through the index only (taken second): %.0f ms (git's CPU %.0f ms, the store's own %.0f ms)\n",
              index_first_ms, children_cpu_ms() - index_first_cpu_before, own_cpu_ms() - index_first_own_before);

  // Each round is a turn that changed 4 files (read through the tree's watch), then one that also made a
  // directory (the watch cannot follow that: the whole tree is read, as for the first snapshot after a start).
  struct Figures {
    std::vector<double> ms, git_cpu, own_cpu;
    void add(double wall, double git, double own) {
      ms.push_back(wall);
      git_cpu.push_back(git);
      own_cpu.push_back(own);
    }
    static double median(std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    }
    static double p90(std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() * 9 / 10];
    }
  };
  Figures few;
  Figures whole;
  Figures few_index;
  Figures whole_index;
  double worst_late = 0;
  const auto timed_one = [&](Figures& figures, checkpoint::CheckpointStore& which) {
    const double git_before = children_cpu_ms();
    const double own_before = own_cpu_ms();
    const auto [ms, late] = snapshot(which);
    figures.add(ms, children_cpu_ms() - git_before, own_cpu_ms() - own_before);
    worst_late = std::max(worst_late, late);
  };
  // Both stores, the one under test first in even rounds and second in odd ones.
  int round = 0;
  const auto timed = [&](Figures& figures, Figures& index_figures) {
    if (round % 2 == 0) timed_one(figures, store);
    timed_one(index_figures, through_index);
    if (round % 2 != 0) timed_one(figures, store);
  };
  for (; round < rounds; ++round) {
    const auto dir = tree / ("dir" + std::to_string(round % directories));
    write(dir / "file1.txt", "edited in round " + std::to_string(round) + "\n");
    write(dir / "file2.txt", "edited too, round " + std::to_string(round) + "\n");
    write(dir / ("new" + std::to_string(round) + ".txt"), "created in round " + std::to_string(round) + "\n");
    fs::remove(dir / ("file" + std::to_string(3 + round / directories) + ".txt"));
    timed(few, few_index);
    write(dir / "file1.txt", "edited again in round " + std::to_string(round) + "\n");
    fs::create_directories(dir / ("made" + std::to_string(round)));
    write(dir / ("made" + std::to_string(round)) / "inside.txt", "in a new directory\n");
    timed(whole, whole_index);
  }
  std::printf("checkpoint after 4 files changed (%d rounds): median %.1f ms, p90 %.1f ms, max %.1f ms (target <= %.0f ms)\n",
              rounds, Figures::median(few.ms), Figures::p90(few.ms), *std::max_element(few.ms.begin(), few.ms.end()),
              kTargetMs);
  std::printf("  CPU per such checkpoint, median: git's %.1f ms, the store's own %.1f ms\n", Figures::median(few.git_cpu),
              Figures::median(few.own_cpu));
  std::printf("checkpoint after a turn that made a directory (the whole tree read): median %.1f ms, p90 %.1f ms; "
              "git's CPU %.1f ms, the store's own %.1f ms\n",
              Figures::median(whole.ms), Figures::p90(whole.ms), Figures::median(whole.git_cpu),
              Figures::median(whole.own_cpu));
  std::printf("the same through the index only: after 4 files changed, median %.1f ms, p90 %.1f ms (git's CPU %.1f ms, "
              "the store's own %.1f ms); after a directory was made, median %.1f ms, p90 %.1f ms (git's CPU %.1f ms, the "
              "store's own %.1f ms)\n",
              Figures::median(few_index.ms), Figures::p90(few_index.ms), Figures::median(few_index.git_cpu),
              Figures::median(few_index.own_cpu), Figures::median(whole_index.ms), Figures::p90(whole_index.ms),
              Figures::median(whole_index.git_cpu), Figures::median(whole_index.own_cpu));
  std::printf("reactor late at most %.2f ms meanwhile\n", worst_late);
  const double unchanged_ms = snapshot(store).first;
  std::printf("checkpoint after nothing changed: %.1f ms\n", unchanged_ms);

  const auto start = Clock::now();
  std::optional<checkpoint::CheckpointResult<checkpoint::TreeChanges>> changes;
  watch.run([&](auto done) {
    store.diff(tree, first_id, std::nullopt, [&, done](auto result) {
      changes.emplace(std::move(result));
      done();
    });
  });
  if (*changes)
    std::printf("diff of the whole run against the tree (a checkpoint, then %zu file diffs): %.1f ms\n",
                (*changes)->files.size(), ms_since(start));
  const auto [final_bytes, final_files] = disk_use(options.root);
  std::printf("store after the run: %.1f MB on disk in %zu files\n", final_bytes / 1e6, final_files);

  if (own_directory) fs::remove_all(base);
  return 0;
}
