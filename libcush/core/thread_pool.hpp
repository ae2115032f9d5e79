#pragma once
// A small fork-join pool for host-side work that must run on many cores at once: copies into
// staging buffers and page-locking of large ranges.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cush::detail {

class ThreadPool {
 public:
  explicit ThreadPool(unsigned workers);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  [[nodiscard]] unsigned workers() const noexcept { return static_cast<unsigned>(threads_.size()); }
  /// Runs task(i) for every i in [0, tasks) on the workers and the calling thread, and returns
  /// when all are done. Rethrows the first exception a task threw. Safe to call from several
  /// threads at once (jobs are served in order).
  void run(std::size_t tasks, const std::function<void(std::size_t)>& task);

  /// The process-wide pool (min(32, cores) - 1 workers), created on first use.
  static ThreadPool& shared();

 private:
  struct Job {
    const std::function<void(std::size_t)>* task = nullptr;
    std::size_t tasks = 0;
    std::size_t next = 0;  // next index to hand out (under mutex_)
    std::size_t done = 0;  // finished tasks (under mutex_)
    std::exception_ptr error;
  };
  void work();
  // Claims an index of `job` under the lock; false when none is left.
  static bool claim(Job& job, std::size_t& index) noexcept;
  void finish(Job& job, std::exception_ptr error);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::deque<Job*> jobs_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

/// memcpy spread over up to `threads` threads of the shared pool.
void parallel_memcpy(void* dst, const void* src, std::size_t bytes, unsigned threads);

}  // namespace cush::detail
