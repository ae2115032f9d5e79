// cush::transpose's automatic choices (libcush/ops/transpose_rules.hpp): how many chunks a
// pipelined transpose takes, and when the automatic path stages a pair that could store directly.
// No GPU needed.

#include <gtest/gtest.h>

#include <cstddef>

#include "ops/transpose_rules.hpp"

using cush::detail::transpose_chunks;
using cush::detail::transpose_stages_pipelined;

namespace {
constexpr std::size_t MiB = std::size_t{1} << 20;
}

TEST(TransposeRules, ForcedChunksAreKeptUpToOneARow) {
  EXPECT_EQ(transpose_chunks(3, 100, 1, false), 3U);
  EXPECT_EQ(transpose_chunks(8, 5, 1024 * MiB, false), 5U);
  EXPECT_EQ(transpose_chunks(2, 64, 1024 * MiB, true), 2U);  // forced also where every target is local
}

TEST(TransposeRules, AutomaticChunksTakeTheMostOf8_4_2WithAtLeast16MiBAChunk) {
  EXPECT_EQ(transpose_chunks(0, 1024, 1024 * MiB, false), 8U);
  EXPECT_EQ(transpose_chunks(0, 1024, 128 * MiB, false), 8U);     // 16 MiB a chunk exactly
  EXPECT_EQ(transpose_chunks(0, 1024, 128 * MiB - 1, false), 4U);  // 8 would leave less
  EXPECT_EQ(transpose_chunks(0, 1024, 32 * MiB, false), 2U);
  EXPECT_EQ(transpose_chunks(0, 1024, 31 * MiB, false), 1U);
  EXPECT_EQ(transpose_chunks(0, 12, 1024 * MiB, false), 4U);  // 8 does not divide 12 rows
  EXPECT_EQ(transpose_chunks(0, 9, 1024 * MiB, false), 1U);   // nor 4 or 2 divide 9
  EXPECT_EQ(transpose_chunks(0, 1024, 1024 * MiB, true), 1U);  // every target on the source's GPU
}

TEST(TransposeRules, TheAutomaticPathStagesBetweenGpusFromFourChunks) {
  EXPECT_FALSE(transpose_stages_pipelined(1, false));
  EXPECT_FALSE(transpose_stages_pipelined(2, false));
  EXPECT_FALSE(transpose_stages_pipelined(3, false));
  EXPECT_TRUE(transpose_stages_pipelined(4, false));
  EXPECT_TRUE(transpose_stages_pipelined(8, false));
  EXPECT_FALSE(transpose_stages_pipelined(8, true));  // virtual GPUs of one GPU: nothing crosses a link
}
