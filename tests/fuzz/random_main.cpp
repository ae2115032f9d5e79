// Drives a harness without libFuzzer: replays the saved inputs named on the command line (files,
// or folders of files, hidden ones left out: the crashers kept as regression cases), then feeds it
// seeded random inputs
// until --runs inputs or --seconds have passed, whichever comes first.
//
//   fuzz_<name> [--seed S] [--runs N] [--seconds T] [--max-len L] [path ...]
//
// Random inputs are mostly short (their length is drawn on a log scale up to --max-len, 4096 by
// default), since a harness reads what it needs from the front. Prints one line of counts. A
// broken invariant aborts with the harness's message (fuzz.hpp); the input that broke it is then
// written to ./crash-<name> (keep it in regressions/<name>/).

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz.hpp"

namespace {

// The input being run, for the abort handler.
const std::uint8_t* current = nullptr;
std::size_t current_size = 0;

extern "C" void save_input(int) {
  const int fd = ::open("crash-" FUZZ_NAME, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (current_size > 0) (void)!::write(fd, current, current_size);
    ::close(fd);
    static const char note[] = "fuzz " FUZZ_NAME ": the input is in ./crash-" FUZZ_NAME "\n";
    (void)!::write(2, note, sizeof note - 1);
  }
  std::signal(SIGABRT, SIG_DFL);
  std::abort();
}

std::vector<std::uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "fuzz %s: %s\nusage: fuzz_%s [--seed S] [--runs N] [--seconds T] [--max-len L] [path ...]\n",
               FUZZ_NAME, why, FUZZ_NAME);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 1, runs = UINT64_MAX;
  double seconds = 10.0;
  std::size_t max_len = 4096;
  std::vector<std::filesystem::path> saved;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&] {
      if (i + 1 >= argc) usage((a + " needs a value").c_str());
      return std::string(argv[++i]);
    };
    if (a == "--seed") seed = std::stoull(value());
    else if (a == "--runs") runs = std::stoull(value());
    else if (a == "--seconds") seconds = std::stod(value());
    else if (a == "--max-len") max_len = std::stoull(value());
    else if (a.rfind("--", 0) == 0) usage(("unknown option " + a).c_str());
    else saved.emplace_back(a);
  }

  std::size_t replayed = 0;
  for (const auto& p : saved) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());  // not .keep
      std::sort(files.begin(), files.end());
    } else if (std::filesystem::exists(p)) {
      files.push_back(p);
    } else {
      usage(("no file or folder " + p.string()).c_str());
    }
    for (const auto& f : files) {
      const std::vector<std::uint8_t> bytes = read_file(f);
      std::fprintf(stderr, "fuzz %s: replaying %s\n", FUZZ_NAME, f.string().c_str());
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++replayed;
    }
  }

  std::signal(SIGABRT, save_input);
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> input;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  std::uint64_t done = 0;
  int log_max = 0;
  while ((std::size_t{1} << log_max) < max_len) ++log_max;
  for (; done < runs; ++done) {
    if ((done & 255) == 0 && elapsed() >= seconds) break;
    const std::size_t cap = std::min(max_len, std::size_t{1} << (rng() % (log_max + 1)));
    input.resize(rng() % (cap + 1));
    for (auto& b : input) b = static_cast<std::uint8_t>(rng());
    current = input.data();
    current_size = input.size();
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::printf("fuzz %s: %zu saved inputs, %llu random inputs (seed %llu) in %.1f s: no broken invariant\n", FUZZ_NAME,
              replayed, static_cast<unsigned long long>(done), static_cast<unsigned long long>(seed), elapsed());
  return 0;
}
