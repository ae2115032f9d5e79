#pragma once
// Fault injection, for tests: makes the k-th checked CUDA, NCCL, cuBLAS or cuFFT call fail
// without making it, as if the runtime had refused it. Every checked call passes through
// CUSH_FAULT_POINT (cush/error.hpp), so one counter sees them all, on every thread.
//
//   faults::Armed armed(k);          // the k-th checked call from here on fails (0: the next)
//   try { run(); } catch (const cush::Error& e) { ... }
//   const faults::Record r = armed.disarm();   // r.failed: the call that failed, if reached
//
// Walking k = 0, 1, ... until a run reaches no k-th call fails every call of that run once.
// With CUSH_FAULT_SITES naming a folder, each process also writes every site its checked calls
// reached to <folder>/sites-<pid>.txt at exit, one "file:line<TAB>call" per line: what the test
// suite reaches, to compare with what the fault tests failed (scripts/fault_sites.sh).

#include <compare>
#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace cush::detail::faults {

/// One checked call in the source.
struct Site {
  std::string file;  ///< as __FILE__ spells it
  int line = 0;
  std::string call;  ///< the call as written
  auto operator<=>(const Site&) const = default;
  /// "file:line<TAB>call", with the file relative to the source tree where it lies in it.
  [[nodiscard]] std::string str() const;
};

/// What the checked calls did while armed.
struct Record {
  std::size_t calls = 0;        ///< checked calls counted (the failed one included)
  std::optional<Site> failed;   ///< the call made to fail, if the run reached it
  /// Every site counted, with the number of its first call (what to arm to fail that site the
  /// first time a run reaches it, in a process that has not reached it before).
  std::map<Site, std::size_t> sites;
};

/// Counts every checked call from now on and fails the one numbered `fail_at` (0: the next);
/// std::nullopt counts without failing. Throws std::logic_error if already armed.
void arm(std::optional<std::size_t> fail_at);
/// Stops counting; what was counted since arm().
Record disarm();

/// arm() for a scope; disarms when it ends if disarm() was not called.
class Armed {
 public:
  explicit Armed(std::optional<std::size_t> fail_at) { arm(fail_at); }
  ~Armed() {
    if (armed_) (void)faults::disarm();
  }
  Armed(const Armed&) = delete;
  Armed& operator=(const Armed&) = delete;
  Record disarm() {
    armed_ = false;
    return faults::disarm();
  }

 private:
  bool armed_ = true;
};

}  // namespace cush::detail::faults
