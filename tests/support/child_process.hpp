#pragma once
// Runs tests of the running test executable in processes of their own: to fail calls made once
// per process (fresh_process_faults.hpp), to run several users of the same GPUs at once, or to
// show that a scenario hangs without a fix (the child is killed when its time is up).

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace cush_test {

/// One child: this executable started with `--gtest_filter=<test>`, the parent's environment plus
/// `extra_env` ("NAME=value"; a name given replaces the parent's), stdout and stderr to `log`.
class ChildProcess {
 public:
  ChildProcess(const std::string& test, const std::vector<std::string>& extra_env, std::string log);
  ~ChildProcess();  // kills the child if it still runs
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Waits until the child exits or `limit` has passed; then kills it if it still runs. True if
  /// it exited by itself within the limit.
  bool wait(std::chrono::milliseconds limit);
  /// Waits until the child's output holds `text` (true), or it exits or `limit` passes (false).
  bool wait_for_output(const std::string& text, std::chrono::milliseconds limit);
  /// How it ended, in words: "exited with 0", "died of signal 6", "was killed after 10 s", or why
  /// it could not be started.
  [[nodiscard]] const std::string& ending() const noexcept { return ending_; }
  [[nodiscard]] bool passed() const noexcept { return passed_; }
  /// Its output (after wait()).
  [[nodiscard]] std::string output() const;

 private:
  bool reaped();  // true once the child has ended (its ending_ set) or never started
  pid_t pid_ = -1;
  std::string log_;
  std::string ending_ = "has not ended";
  bool passed_ = false;
};

/// The text of the file at `path` (empty if it cannot be read).
std::string read_file(const std::string& path);

}  // namespace cush_test
