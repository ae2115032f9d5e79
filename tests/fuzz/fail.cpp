// cush_fuzz::fail (fuzz.hpp).
#include <cstdio>
#include <cstdlib>

#include "fuzz.hpp"

namespace cush_fuzz {

void fail(const char* harness, const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "fuzz %s: invariant broken at %s:%d: %s\n", harness, file, line, what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace cush_fuzz
