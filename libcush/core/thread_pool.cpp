#include "core/thread_pool.hpp"

#include <algorithm>
#include <cstring>

namespace cush::detail {

ThreadPool::ThreadPool(unsigned workers) {
  threads_.reserve(workers);
  for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

ThreadPool& ThreadPool::shared() {
  static ThreadPool pool([] {
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    return std::min(32U, cores) - 1;
  }());
  return pool;
}

bool ThreadPool::claim(Job& job, std::size_t& index) noexcept {
  if (job.next >= job.tasks) return false;
  index = job.next++;
  return true;
}

void ThreadPool::finish(Job& job, std::exception_ptr error) {
  std::lock_guard lock(mutex_);
  if (error && !job.error) job.error = std::move(error);
  if (++job.done == job.tasks) finished_.notify_all();
}

void ThreadPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stop_ and nothing left
    Job& job = *jobs_.front();
    std::size_t index = 0;
    if (!claim(job, index)) {
      jobs_.pop_front();  // fully handed out; its owner waits for completion
      continue;
    }
    lock.unlock();
    std::exception_ptr error;
    try {
      (*job.task)(index);
    } catch (...) {
      error = std::current_exception();
    }
    finish(job, std::move(error));
    lock.lock();
  }
}

void ThreadPool::run(std::size_t tasks, const std::function<void(std::size_t)>& task) {
  if (tasks == 0) return;
  Job job;
  job.task = &task;
  job.tasks = tasks;
  if (tasks > 1 && !threads_.empty()) {
    std::lock_guard lock(mutex_);
    jobs_.push_back(&job);
  }
  wake_.notify_all();
  // The caller works too, so a pool busy with other jobs cannot stall this one.
  for (;;) {
    std::size_t index = 0;
    {
      std::lock_guard lock(mutex_);
      if (!claim(job, index)) break;
    }
    std::exception_ptr error;
    try {
      task(index);
    } catch (...) {
      error = std::current_exception();
    }
    finish(job, std::move(error));
  }
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [&] { return job.done == job.tasks; });
  // Workers only touch a job while it is queued or while they hold one of its tasks.
  const auto it = std::find(jobs_.begin(), jobs_.end(), &job);
  if (it != jobs_.end()) jobs_.erase(it);
  if (job.error) std::rethrow_exception(job.error);
}

void parallel_memcpy(void* dst, const void* src, std::size_t bytes, unsigned threads) {
  constexpr std::size_t min_piece = std::size_t{1} << 20;
  constexpr std::size_t align = 4096;
  const std::size_t max_tasks = std::max<std::size_t>(1, bytes / min_piece);
  const std::size_t tasks = std::min<std::size_t>(std::max(1U, threads), max_tasks);
  if (tasks == 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  // Ceiling division first: rounding bytes / tasks down and then up to the alignment can leave
  // up to tasks - 1 bytes at the end uncopied.
  const std::size_t piece = ((bytes + tasks - 1) / tasks + align - 1) / align * align;
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  ThreadPool::shared().run(tasks, [=](std::size_t i) {
    const std::size_t begin = i * piece;
    if (begin >= bytes) return;
    std::memcpy(d + begin, s + begin, std::min(piece, bytes - begin));
  });
}

}  // namespace cush::detail
