#pragma once
// Random transfer lists of every operation (transfer.hpp, device_transfers.hpp) on random
// layouts, with buffers of random values: what the tests of transfer lists over ranks run, in one
// process (tests/host) and under mpiexec (tests/mpi). The same seed draws the same cases.

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cush/layout.hpp"
#include "host/transfer.hpp"
#include "ops/device_transfers.hpp"

namespace cush_test {

using cush::Layout;
using cush::Range;
using cush::TransferList;
using Value = std::int64_t;

inline std::vector<Value> random_values(std::mt19937_64& rng, std::size_t n) {
  std::vector<Value> v(n);
  for (auto& x : v) x = static_cast<Value>(rng() % 1000003);
  return v;
}

// One plan's buffers: each position's segment (the whole extent where replicated).
inline std::vector<std::vector<Value>> buffers(std::mt19937_64& rng, const Layout& l) {
  std::vector<std::vector<Value>> b(l.devices());
  for (std::size_t p = 0; p < l.devices(); ++p) b[p] = random_values(rng, l.segment(p).count);
  return b;
}

struct Case {
  std::string what;
  TransferList list;
  Layout src, dst;
  bool one_plan = false;  // src and dst the same buffers: lists within one plan, and between a plan and the host
};

inline Layout random_partition(std::mt19937_64& rng, std::size_t n, std::size_t p) {
  std::vector<std::size_t> counts(p, 0);
  for (std::size_t k = 0; k < n; ++k) ++counts[rng() % p];
  return Layout::partitioned(counts);
}

inline std::vector<int> random_ranks(std::mt19937_64& rng, std::size_t positions, int ranks) {
  std::vector<int> r(positions);
  for (auto& x : r) x = static_cast<int>(rng() % static_cast<unsigned>(ranks));
  return r;
}

// Every operation's list on random layouts of 1-6 positions over 1-4 ranks.
inline std::vector<Case> random_cases(std::mt19937_64& rng) {
  const std::size_t n = 1 + rng() % 300, p = 1 + rng() % 6, q = 1 + rng() % 6;
  const std::size_t a = rng() % n, b = a + rng() % (n - a + 1);
  const Range part{a, b - a};
  const Layout split = random_partition(rng, n, p), other = random_partition(rng, n, q), rep = Layout::replicated(n, p);
  std::vector<int> ids(std::max(p, q));
  for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<int>(k);
  const std::span<const int> src_ids(ids.data(), p), other_ids(ids.data(), q);
  std::vector<Case> cases;
  cases.push_back({"scatter", cush::scatter_transfers(split, part), split, split, true});
  cases.push_back({"gather", cush::gather_transfers(split, part), split, split, true});
  cases.push_back({"gather of a replicated plan", cush::gather_transfers(rep, part), rep, rep, true});
  cases.push_back({"host broadcast through peers", cush::broadcast_transfers(rep, part, {true, 1 + rng() % 40}), rep, rep, true});
  cases.push_back({"host broadcast", cush::broadcast_transfers(rep, part, {false, 0}), rep, rep, true});
  cases.push_back({"copy between distributions", cush::copy_transfers(split, src_ids, other, other_ids, part), split, other});
  cases.push_back({"all-gather", cush::copy_transfers(split, src_ids, Layout::replicated(n, q), other_ids, part), split, Layout::replicated(n, q)});
  cases.push_back({"device scatter", cush::copy_transfers(rep, src_ids, other, other_ids, part, {static_cast<int>(rng() % p), -1}), rep, other});
  cases.push_back({"device gather", cush::copy_transfers(split, src_ids, Layout::replicated(n, q), other_ids, part, {-1, static_cast<int>(rng() % q)}), split, Layout::replicated(n, q)});
  // An all-to-all with uneven pieces: source i's elements to destination j in turn, as many as
  // both have left (rows sum to the source segments, columns to the destination segments).
  std::vector<std::size_t> counts(p * q, 0);
  for (std::size_t i = 0, j = 0, used_i = 0, used_j = 0; i < p && j < q;) {
    const std::size_t take = std::min(split.segment(i).count - used_i, other.segment(j).count - used_j);
    counts[i * q + j] += take;
    used_i += take;
    used_j += take;
    if (used_i == split.segment(i).count) ++i, used_i = 0;
    if (j < q && used_j == other.segment(j).count) ++j, used_j = 0;
  }
  cases.push_back({"all-to-all", cush::all_to_all_transfers(split, other, counts), split, other});
  const std::size_t root = rng() % p;
  cases.push_back({"device broadcast along a chain", cush::device_broadcast_transfers(rep, root, part, true, 1 + rng() % 50), rep, rep, true});
  cases.push_back({"device broadcast", cush::device_broadcast_transfers(rep, root, part, false), rep, rep, true});
  cases.push_back({"reduce", cush::reduce_transfers(rep, root, part), rep, rep, true});
  cases.push_back({"all-reduce", cush::all_reduce_transfers(rep, part, 1 + rng() % 4), rep, rep, true});
  return cases;
}

}  // namespace cush_test
