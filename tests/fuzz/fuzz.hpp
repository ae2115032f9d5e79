#pragma once
// The fuzz harnesses (docs/reliability.md). Each fuzz_<planner>.cpp defines FUZZ_NAME and
// LLVMFuzzerTestOneInput: it decodes the input bytes into a planner's arguments with Bytes, runs
// the pure-host planner and checks the planner's own invariants with FUZZ_CHECK. A file builds
// two ways: with libFuzzer (scripts/fuzz.sh, clang), or with random_main.cpp, which feeds it
// seeded random inputs (the ctest entries host.fuzz.*) and replays saved ones.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>

#include "cush/error.hpp"

namespace cush_fuzz {

/// Reads an input's bytes as the values a harness needs. Never fails: once the bytes are used up
/// every value is the lowest allowed, so every input, even an empty one, is a valid case.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  /// An integer in [lo, hi], from as many bytes as the range needs.
  template <class T>
  T in(T lo, T hi) {
    static_assert(std::is_integral_v<T>);
    if (hi <= lo) return lo;
    using U = std::make_unsigned_t<T>;
    const std::uint64_t span = static_cast<std::uint64_t>(static_cast<U>(hi) - static_cast<U>(lo));
    std::uint64_t v = 0;
    for (std::uint64_t seen = 0; seen < span && pos_ < size_; seen = (seen << 8) | 0xff) v = (v << 8) | data_[pos_++];
    return static_cast<T>(static_cast<U>(lo) + static_cast<U>(span == UINT64_MAX ? v : v % (span + 1)));
  }
  bool flag() { return in<int>(0, 1) == 1; }
  /// A value in [lo, hi] in 2^16 steps.
  double real(double lo, double hi) { return lo + (hi - lo) * in<int>(0, 65535) / 65535.0; }
  /// One of `options`.
  template <class T, std::size_t N>
  const T& pick(const T (&options)[N]) {
    return options[in<std::size_t>(0, N - 1)];
  }
  [[nodiscard]] std::size_t left() const { return size_ - pos_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

/// Prints what broke, where, and aborts (libFuzzer then saves the input).
[[noreturn]] void fail(const char* harness, const char* file, int line, const std::string& what);

/// Runs f: true if it threw cush::InvalidArgument, false if it returned; any other exception
/// fails the harness (a planner rejects bad input with InvalidArgument and nothing else).
template <class F>
bool rejects(const char* harness, const char* file, int line, F&& f) {
  try {
    f();
    return false;
  } catch (const cush::InvalidArgument&) {
    return true;
  } catch (const std::exception& e) {
    fail(harness, file, line, std::string("an exception other than cush::InvalidArgument: ") + e.what());
  } catch (...) {
    fail(harness, file, line, "a non-standard exception");
  }
}

}  // namespace cush_fuzz

#define FUZZ_CHECK(cond, what)                                                                 \
  do {                                                                                         \
    if (!(cond)) ::cush_fuzz::fail(FUZZ_NAME, __FILE__, __LINE__, std::string(#cond ": ") + (what)); \
  } while (0)

/// True if `expr` threw cush::InvalidArgument, false if it returned; another exception fails.
#define FUZZ_REJECTS(expr) ::cush_fuzz::rejects(FUZZ_NAME, __FILE__, __LINE__, [&] { (void)(expr); })

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
