#include "support/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace cush_test {

namespace {

std::string name_of(const std::string& entry) { return entry.substr(0, entry.find('=')); }

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ChildProcess::ChildProcess(const std::string& test, const std::vector<std::string>& extra_env, std::string log)
    : log_(std::move(log)) {
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const std::string& x : extra_env) replaced = replaced || name_of(x) == name_of(entry);
    if (!replaced) env_text.push_back(entry);
  }
  env_text.insert(env_text.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string arg0 = exe, arg1 = "--gtest_filter=" + test;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int spawned = posix_spawn(&pid_, exe.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    pid_ = -1;
    ending_ = "could not be started (posix_spawn: error " + std::to_string(spawned) + ")";
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
}

bool ChildProcess::reaped() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == 0) return false;
  pid_ = -1;
  if (WIFEXITED(status)) {
    ending_ = "exited with " + std::to_string(WEXITSTATUS(status));
    passed_ = WEXITSTATUS(status) == 0;
  } else {
    ending_ = "died of signal " + std::to_string(WTERMSIG(status));
  }
  return true;
}

bool ChildProcess::wait(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!reaped()) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
      ending_ = "was killed after " + std::to_string(limit.count() / 1000) + " s";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ending_.rfind("could not", 0) != 0;
}

bool ChildProcess::wait_for_output(const std::string& text, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (output().find(text) != std::string::npos) return true;
    if (reaped()) return output().find(text) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string ChildProcess::output() const { return read_file(log_); }

}  // namespace cush_test
