// The checks of the caller's streams that need no GPU: count, default streams, stated devices.

#include <gtest/gtest.h>

#include <vector>

#include "core/stream_set.hpp"
#include "cush/captured_work.hpp"
#include "cush/error.hpp"

namespace {
std::string rejection(const std::vector<int>& devices, const std::vector<cush::StreamRef>& streams) {
  try {
    cush::detail::StreamSet set(devices, streams, "test");
  } catch (const cush::InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "streams");
    return e.what();
  }
  return {};
}
bool says(const std::string& message, const char* part) { return message.find(part) != std::string::npos; }
}  // namespace

TEST(StreamSet, TheCallersStreamsAreChecked) {
  auto* fake = reinterpret_cast<cudaStream_t>(0x1000);  // never used: the checks fail before
  EXPECT_TRUE(says(rejection({0, 1}, {cush::StreamRef(0, fake)}), "1 streams for 2 devices"));
  EXPECT_TRUE(says(rejection({0}, {cush::StreamRef(0, nullptr)}), "default stream"));
  EXPECT_TRUE(says(rejection({0}, {cush::StreamRef(0, cudaStreamLegacy)}), "default stream"));
  EXPECT_TRUE(says(rejection({0}, {cush::StreamRef(0, cudaStreamPerThread)}), "default stream"));
  EXPECT_TRUE(says(rejection({0, 1}, {cush::StreamRef(0, fake), cush::StreamRef(0, fake)}),
                   "stream 1 is said to be on device 0, position 1 of the set is device 1"));
}

// CapturedWork refuses what cannot be captured before it asks CUDA anything.
TEST(CapturedWork, NoStreamsAndDefaultStreamsAreRefused) {
  const auto refusal = [](const std::vector<cush::StreamRef>& streams) -> std::string {
    bool ran = false;
    try {
      cush::CapturedWork w(streams, [&] { ran = true; });
    } catch (const cush::InvalidArgument& e) {
      EXPECT_EQ(e.argument(), "streams");
      EXPECT_FALSE(ran);
      return e.what();
    }
    return {};
  };
  auto* fake = reinterpret_cast<cudaStream_t>(0x1000);  // never used: the checks fail before
  EXPECT_TRUE(says(refusal({}), "no streams"));
  EXPECT_TRUE(says(refusal({cush::StreamRef(0, fake), cush::StreamRef(1, nullptr)}), "stream 1 is a default stream"));
  EXPECT_TRUE(says(refusal({cush::StreamRef(0, cudaStreamLegacy)}), "stream 0 is a default stream"));
  EXPECT_TRUE(says(refusal({cush::StreamRef(0, cudaStreamPerThread)}), "default stream"));
}
