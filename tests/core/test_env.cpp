// The environment parameters: one table, units, errors that name the variable, caching, and the
// table in docs/guide.md kept equal to the code's.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include "core/env.hpp"
#include "cush/error.hpp"
#include "support/env.hpp"

namespace {

namespace env = cush::detail::env;

// The InvalidArgument a read throws, or nothing.
std::optional<cush::InvalidArgument> error_of(const char* name) {
  try {
    (void)env::size(name);
  } catch (const cush::InvalidArgument& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace

TEST(Env, TheTableIsConsistent) {
  std::set<std::string> names;
  for (const env::Variable& v : env::variables()) {
    const std::string name = v.name;
    EXPECT_EQ(name.rfind("CUSH_", 0), 0U) << name;
    EXPECT_TRUE(names.insert(name).second) << name << " is listed twice";
    EXPECT_FALSE(std::string(v.meaning).empty()) << name;
    if (v.unit == env::Unit::path || v.unit == env::Unit::text || (v.unit == env::Unit::seconds && v.fallback == 0)) continue;
    EXPECT_LE(v.min, v.fallback) << name;
    EXPECT_LE(v.fallback, v.max) << name;
  }
  EXPECT_GE(names.size(), 10U);
}

TEST(Env, UnsetVariablesGiveTheirDefaultsInBytes) {
  ::unsetenv("CUSH_HALO_PIPELINE_MIB");
  ::unsetenv("CUSH_DIRECT_TO_HOST_BELOW_KIB");
  ::unsetenv("CUSH_HALO_CHUNKS");
  env::refresh();
  EXPECT_EQ(env::size("CUSH_HALO_PIPELINE_MIB"), std::size_t{256} << 20);
  EXPECT_EQ(env::size("CUSH_DIRECT_TO_HOST_BELOW_KIB"), std::size_t{256} << 10);
  EXPECT_EQ(env::size("CUSH_HALO_CHUNKS"), 8U);
  EXPECT_FALSE(env::is_set("CUSH_HALO_CHUNKS"));
  EXPECT_EQ(env::text("CUSH_TRANSPORTS"), std::getenv("CUSH_TRANSPORTS") ? std::getenv("CUSH_TRANSPORTS") : "");
}

TEST(Env, ValuesAreReadInTheirUnits) {
  {
    const cush_test::ScopedEnv v("CUSH_HALO_PIPELINE_MIB", "4");
    EXPECT_EQ(env::size("CUSH_HALO_PIPELINE_MIB"), std::size_t{4} << 20);
  }
  {
    const cush_test::ScopedEnv v("CUSH_DIRECT_TO_DEVICE_BELOW_KIB", "0");
    EXPECT_EQ(env::size("CUSH_DIRECT_TO_DEVICE_BELOW_KIB"), 0U);
  }
  {
    const cush_test::ScopedEnv v("CUSH_BENCH_MIN_TIME", "0.25");
    EXPECT_TRUE(env::is_set("CUSH_BENCH_MIN_TIME"));
    EXPECT_DOUBLE_EQ(env::seconds("CUSH_BENCH_MIN_TIME"), 0.25);
  }
}

TEST(Env, MalformedValuesAreInvalidArgumentsThatNameTheVariable) {
  for (const char* text : {"abc", "12abc", "-1", "4.5", " 4", "99999999999999999999999"}) {
    const cush_test::ScopedEnv v("CUSH_HALO_PIPELINE_MIB", text);
    const auto e = error_of("CUSH_HALO_PIPELINE_MIB");
    ASSERT_TRUE(e.has_value()) << "'" << text << "' was accepted";
    EXPECT_EQ(e->argument(), "CUSH_HALO_PIPELINE_MIB");
    EXPECT_NE(std::string(e->what()).find(text), std::string::npos) << e->what();
    EXPECT_NE(std::string(e->what()).find("MiB"), std::string::npos) << e->what();
  }
  {
    const cush_test::ScopedEnv v("CUSH_BENCH_MIN_TIME", "fast");
    EXPECT_THROW((void)env::seconds("CUSH_BENCH_MIN_TIME"), cush::InvalidArgument);
  }
}

TEST(Env, OutOfRangeValuesAreRejected) {
  for (const char* text : {"0", "65"}) {
    const cush_test::ScopedEnv v("CUSH_HALO_CHUNKS", text);
    const auto e = error_of("CUSH_HALO_CHUNKS");
    ASSERT_TRUE(e.has_value()) << text;
    EXPECT_NE(std::string(e->what()).find("out of range"), std::string::npos) << e->what();
  }
  const cush_test::ScopedEnv v("CUSH_STAGING_SLOTS", "1");
  EXPECT_THROW((void)env::size("CUSH_STAGING_SLOTS"), cush::InvalidArgument);
}

TEST(Env, ValuesAreCachedUntilRefreshed) {
  const cush_test::ScopedEnv v("CUSH_HALO_CHUNKS", "3");
  EXPECT_EQ(env::size("CUSH_HALO_CHUNKS"), 3U);
  ::setenv("CUSH_HALO_CHUNKS", "5", 1);
  EXPECT_EQ(env::size("CUSH_HALO_CHUNKS"), 3U) << "read once, then cached";
  env::refresh();
  EXPECT_EQ(env::size("CUSH_HALO_CHUNKS"), 5U);
}

TEST(Env, UnknownNamesAndWrongReadersAreProgrammingErrors) {
  EXPECT_THROW((void)env::size("CUSH_NO_SUCH_VARIABLE"), std::logic_error);
  EXPECT_THROW((void)env::size("CUSH_TRANSPORTS"), std::logic_error);
  EXPECT_THROW((void)env::seconds("CUSH_HALO_CHUNKS"), std::logic_error);
}

TEST(Env, TheGuideListsEveryVariable) {
  std::ifstream in(CUSH_SOURCE_DIR "/docs/guide.md");
  ASSERT_TRUE(in) << "docs/guide.md not found";
  std::stringstream text;
  text << in.rdbuf();
  for (const env::Variable& v : env::variables())
    EXPECT_NE(text.str().find(std::string("| `") + v.name + "`"), std::string::npos)
        << v.name << " is missing from the table in docs/guide.md";
}
