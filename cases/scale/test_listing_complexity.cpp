// Seed 002 §2.5: Listing 2.2 (CUSH) has McCabe complexity 1 and under half the statements of
// Listing 2.1 (raw CUDA). Measured here with pmccabe on our own versions of both listings, the
// multi-GPU variants of the case cases/scale.

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

namespace {

struct Measure {
  int mcc = 0;         // modified McCabe cyclomatic complexity, summed over functions
  int statements = 0;  // pmccabe's statement count (NCSS), summed over functions
  int functions = 0;
};

// Runs pmccabe on one file; empty optional-like result (functions == 0) if it cannot run.
Measure pmccabe(const std::string& file) {
  Measure m;
  const std::string command = "pmccabe '" + file + "' 2>/dev/null";
  const std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return m;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe.get()) != nullptr) {
    std::istringstream in(line);
    int mod = 0, trad = 0, stmts = 0;
    if (in >> mod >> trad >> stmts) {
      m.mcc += mod;
      m.statements += stmts;
      ++m.functions;
    }
  }
  return m;
}

bool have_pmccabe() { return std::system("command -v pmccabe >/dev/null 2>&1") == 0; }

}  // namespace

TEST(ListingComplexity, CushIsMcc1AndUnderHalfTheStatementsOfRawCuda) {
  if (!have_pmccabe()) GTEST_SKIP() << "pmccabe is not installed (scripts/setup.sh installs it: apt-get install pmccabe)";
  const std::string dir = CUSH_SOURCE_DIR "/cases/scale/";
  const Measure raw = pmccabe(dir + "multi_cuda.cpp");
  const Measure with_cush = pmccabe(dir + "multi_cush.cpp");
  ASSERT_EQ(raw.functions, 1);
  ASSERT_EQ(with_cush.functions, 1);
  std::printf("Listing 2.1 (raw CUDA): MCC %d, NCSS %d\nListing 2.2 (cush):     MCC %d, NCSS %d\n", raw.mcc,
              raw.statements, with_cush.mcc, with_cush.statements);
  EXPECT_EQ(with_cush.mcc, 1);
  EXPECT_GT(raw.mcc, 1);
  EXPECT_LT(2 * with_cush.statements, raw.statements);
}
