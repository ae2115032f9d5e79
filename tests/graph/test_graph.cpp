// Host tests of the graph decomposition: every part's sets, local order and maps against a brute
// force from the definitions (std::set, no code of the library), the exchange's messages run on
// host arrays (every ghost must end up equal to its owner's value), localized SpMV equal bit for
// bit to the global one, and the bad-input rules.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "cush/graph.hpp"
#include "cush/layout.hpp"
#include "graph/graph_input.hpp"
#include "support/random_graphs.hpp"

namespace {

using cush::Adjacency;
using cush::GraphDecomposition;
using cush::GraphMessage;
using cush::GraphPart;
using cush::Range;
using cush_test::Case;
using cush_test::Coverage;
using cush_test::Graph;
using cush_test::Node;
using cush_test::Rows;
using cush_test::csr;
using cush_test::random_case;

// A graph in CSR form, owning its arrays.

// ---- The brute force: the sets of spec §1 from their definitions ----

struct Sets {
  std::set<Node> q, r, b, o;
};

std::vector<Sets> brute_sets(const Graph& g, const std::vector<int>& owner, std::size_t parts) {
  std::vector<Sets> s(parts);
  for (std::size_t i = 0; i < g.nodes(); ++i) s[static_cast<std::size_t>(owner[i])].q.insert(static_cast<Node>(i));
  for (auto& p : s)  // R = G \ Q, G = Q + the columns of Q's rows
    for (const Node i : p.q)
      for (const Node j : g.row(i))
        if (!p.q.contains(j)) p.r.insert(j);
  for (auto& p : s)  // B: rows that read a node of R
    for (const Node i : p.q)
      for (const Node j : g.row(i))
        if (p.r.contains(j)) p.b.insert(i);
  for (std::size_t p = 0; p < parts; ++p)  // O: nodes in some other part's R
    for (const Node i : s[p].q)
      for (std::size_t h = 0; h < parts; ++h)
        if (h != p && s[h].r.contains(i)) s[p].o.insert(i);
  return s;
}

// The required local order: [Q\(B+O)] [O\B] [O&B] [B\O] [R of part 0] [R of part 1] ..., global
// order inside each group; `groups` gets the sizes of the four owned groups, `from` the ghosts
// per owner.
std::vector<Node> expected_order(const Sets& s, const std::vector<int>& owner, std::size_t parts,
                                 std::array<std::size_t, 4>& groups, std::vector<std::size_t>& from) {
  std::array<std::vector<Node>, 4> g;
  for (const Node i : s.q) {
    const bool in_b = s.b.contains(i);
    const bool in_o = s.o.contains(i);
    if (!in_b && !in_o) g[0].push_back(i);
    if (in_o && !in_b) g[1].push_back(i);
    if (in_o && in_b) g[2].push_back(i);
    if (in_b && !in_o) g[3].push_back(i);
  }
  std::vector<Node> order;
  for (std::size_t k = 0; k < 4; ++k) {
    groups[k] = g[k].size();
    order.insert(order.end(), g[k].begin(), g[k].end());
  }
  from.assign(parts, 0);
  for (std::size_t h = 0; h < parts; ++h)
    for (const Node j : s.r)
      if (owner[static_cast<std::size_t>(j)] == static_cast<int>(h)) {
        order.push_back(j);
        ++from[h];
      }
  return order;
}

// The value of node j in the exchange test, and the poison a ghost holds before it.
Node value_of(Node j) { return 3 * j + 1; }
constexpr Node poison = -7;

// Applies every message of `dec` to one host array per part.
template <class T>
void run_program(const GraphDecomposition& dec, std::vector<std::vector<T>>& values) {
  for (const GraphMessage& m : dec.messages())
    for (std::size_t k = 0; k < m.dst.count; ++k)
      values[m.to][m.dst.offset + k] = values[m.from][static_cast<std::size_t>(m.src_local[k])];
}

// A row's sum, one entry after the other, the same code for the global and the local rows.
double dot(const std::vector<double>& w, const std::vector<double>& x) {
  double s = 0.0;
  for (std::size_t k = 0; k < w.size(); ++k) s += w[k] * x[k];
  return s;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }


// Checks every part of `dec` against the brute force, runs the program and the localized SpMV.
void check_decomposition(const GraphDecomposition& dec, const Graph& g, const std::vector<int>& owner,
                         std::size_t parts, std::mt19937_64& rng, Coverage& seen) {
  const std::vector<Sets> sets = brute_sets(g, owner, parts);
  ASSERT_EQ(dec.size(), parts);
  ASSERT_EQ(dec.nodes(), g.nodes());
  ASSERT_EQ(dec.entries(), g.cols.size());
  std::vector<std::vector<Node>> order(parts);
  for (std::size_t p = 0; p < parts; ++p) {
    SCOPED_TRACE("part " + std::to_string(p));
    const Sets& s = sets[p];
    const GraphPart& part = dec.part(p);
    std::array<std::size_t, 4> groups{};
    std::vector<std::size_t> from;
    order[p] = expected_order(s, owner, parts, groups, from);
    ASSERT_EQ(part.size(), s.q.size() + s.r.size());
    ASSERT_EQ(std::vector<Node>(part.globals().begin(), part.globals().end()), order[p]);
    for (std::size_t k = 0; k < part.size(); ++k) EXPECT_EQ(part.global(k), order[p][k]);
    EXPECT_THROW((void)part.global(part.size()), cush::InvalidArgument);

    // Ranges, from the groups' sizes and from the sets' own sizes.
    const std::size_t nq = s.q.size();
    EXPECT_EQ(part.owned(), (Range{0, nq}));
    EXPECT_EQ(part.interior(), (Range{0, groups[0] + groups[1]}));
    EXPECT_EQ(part.boundary(), (Range{groups[0] + groups[1], groups[2] + groups[3]}));
    EXPECT_EQ(part.sent(), (Range{groups[0], groups[1] + groups[2]}));
    EXPECT_EQ(part.ghosts(), (Range{nq, s.r.size()}));
    EXPECT_EQ(part.boundary().count, s.b.size());
    EXPECT_EQ(part.sent().count, s.o.size());
    std::size_t offset = nq;
    for (std::size_t h = 0; h < parts; ++h) {
      EXPECT_EQ(part.ghosts_from(h), (Range{offset, from[h]})) << "ghosts from part " << h;
      offset += from[h];
    }
    EXPECT_EQ(offset, part.size());
    EXPECT_TRUE(part.ghosts_from(p).empty());
    EXPECT_THROW((void)part.ghosts_from(parts), cush::InvalidArgument);

    // Each range holds exactly its set's members, in global order within each group.
    for (std::size_t k = 0; k < part.size(); ++k) {
      const Node j = part.global(k);
      const bool in_interior = k < part.interior().end();
      const bool in_sent = k >= part.sent().offset && k < part.sent().end();
      EXPECT_EQ(k < nq, s.q.contains(j)) << "local " << k;
      EXPECT_EQ(k >= nq, s.r.contains(j)) << "local " << k;
      if (k < nq) {
        EXPECT_EQ(in_interior, !s.b.contains(j)) << "local " << k;
        EXPECT_EQ(in_sent, s.o.contains(j)) << "local " << k;
      } else {
        const Range mine = part.ghosts_from(static_cast<std::size_t>(owner[static_cast<std::size_t>(j)]));
        EXPECT_TRUE(k >= mine.offset && k < mine.end()) << "ghost " << j << " outside its owner's range";
      }
    }
    for (const Range r : {Range{0, groups[0]}, Range{groups[0], groups[1]}, Range{groups[0] + groups[1], groups[2]},
                          Range{nq - groups[3], groups[3]}})
      for (std::size_t k = r.offset + 1; k < r.end(); ++k) EXPECT_LT(part.global(k - 1), part.global(k));
    for (std::size_t h = 0; h < parts; ++h)
      for (std::size_t k = part.ghosts_from(h).offset + 1; k < part.ghosts_from(h).end(); ++k)
        EXPECT_LT(part.global(k - 1), part.global(k));

    // The maps are inverse; nodes outside G have no local index.
    for (std::size_t k = 0; k < part.size(); ++k) EXPECT_EQ(part.local(part.global(k)), k);
    for (Node j = -1; j <= static_cast<Node>(g.nodes()); ++j) {
      const std::optional<std::size_t> l = part.local(j);
      EXPECT_EQ(l.has_value(), s.q.contains(j) || s.r.contains(j)) << "node " << j;
      if (l) EXPECT_EQ(order[p][*l], j);
    }

    if (parts > 1 && s.r.empty()) ++seen.empty_ghosts;
    if (groups[1] > 0) ++seen.sent_not_boundary;
    if (groups[3] > 0) ++seen.boundary_not_sent;
  }

  // The messages: one per ordered pair with R_to & Q_from not empty, by (from, to).
  std::vector<std::pair<std::size_t, std::size_t>> pairs, expected_pairs;
  for (std::size_t f = 0; f < parts; ++f)
    for (std::size_t t = 0; t < parts; ++t)
      if (t != f && std::any_of(sets[t].r.begin(), sets[t].r.end(), [&](Node j) { return sets[f].q.contains(j); }))
        expected_pairs.emplace_back(f, t);
  for (const GraphMessage& m : dec.messages()) {
    pairs.emplace_back(m.from, m.to);
    ASSERT_LT(m.from, parts);
    ASSERT_LT(m.to, parts);
    EXPECT_EQ(m.dst, dec.part(m.to).ghosts_from(m.from));
    ASSERT_EQ(m.src_local.size(), m.dst.count);
    bool run = true;
    for (std::size_t k = 0; k < m.src_local.size(); ++k) {
      const auto src = static_cast<std::size_t>(m.src_local[k]);
      EXPECT_GE(src, dec.part(m.from).sent().offset);
      EXPECT_LT(src, dec.part(m.from).sent().end());
      if (k > 0 && m.src_local[k] != m.src_local[k - 1] + 1) run = false;
    }
    EXPECT_EQ(m.contiguous, run);
    ++(m.contiguous ? seen.plain_copies : seen.gathers);
  }
  EXPECT_EQ(pairs, expected_pairs);

  // The program on host arrays: owned entries hold their node's value (placed by the brute
  // force's order), ghosts the poison; afterwards every entry holds its node's value.
  std::vector<std::vector<Node>> values(parts);
  for (std::size_t p = 0; p < parts; ++p) {
    values[p].assign(order[p].size(), poison);
    for (std::size_t k = 0; k < sets[p].q.size(); ++k) values[p][k] = value_of(order[p][k]);
  }
  run_program(dec, values);
  for (std::size_t p = 0; p < parts; ++p)
    for (std::size_t k = 0; k < order[p].size(); ++k)
      EXPECT_EQ(values[p][k], value_of(order[p][k])) << "part " << p << ", local " << k;

  // Localized SpMV after the program equals the global SpMV on the owned rows, bit for bit.
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> w(g.cols.size()), x(g.nodes()), y(g.nodes());
  for (double& v : w) v = u(rng);
  for (double& v : x) v = u(rng);
  for (std::size_t i = 0; i < g.nodes(); ++i) {
    std::vector<double> wi, xi;
    for (auto e = static_cast<std::size_t>(g.row_ptr[i]); e < static_cast<std::size_t>(g.row_ptr[i + 1]); ++e) {
      wi.push_back(w[e]);
      xi.push_back(x[static_cast<std::size_t>(g.cols[e])]);
    }
    y[i] = dot(wi, xi);
  }
  std::vector<std::vector<double>> xl(parts);
  for (std::size_t p = 0; p < parts; ++p) {
    xl[p].assign(order[p].size(), std::numeric_limits<double>::quiet_NaN());
    for (std::size_t k = 0; k < sets[p].q.size(); ++k) xl[p][k] = x[static_cast<std::size_t>(order[p][k])];
  }
  run_program(dec, xl);
  for (std::size_t p = 0; p < parts; ++p) {
    const cush::LocalAdjacency a = dec.localize(p, g.adjacency());
    const std::size_t nq = sets[p].q.size();
    ASSERT_EQ(a.row_ptr.size(), nq + 1);
    EXPECT_EQ(a.row_ptr[0], 0);
    ASSERT_EQ(static_cast<std::size_t>(a.row_ptr[nq]), a.cols.size());
    ASSERT_EQ(a.entries.size(), a.cols.size());
    for (std::size_t r = 0; r < nq; ++r) {
      const auto i = static_cast<std::size_t>(order[p][r]);
      const auto first = static_cast<std::size_t>(g.row_ptr[i]);
      ASSERT_EQ(a.row_ptr[r + 1] - a.row_ptr[r], g.row_ptr[i + 1] - g.row_ptr[i]) << "part " << p << ", row " << i;
      std::vector<double> wi, xi;
      for (auto k = static_cast<std::size_t>(a.row_ptr[r]); k < static_cast<std::size_t>(a.row_ptr[r + 1]); ++k) {
        ASSERT_GE(a.cols[k], 0);
        ASSERT_LT(static_cast<std::size_t>(a.cols[k]), xl[p].size());
        EXPECT_EQ(order[p][static_cast<std::size_t>(a.cols[k])],
                  g.cols[first + k - static_cast<std::size_t>(a.row_ptr[r])]);
        EXPECT_EQ(static_cast<std::size_t>(a.entries[k]), first + k - static_cast<std::size_t>(a.row_ptr[r]));
        wi.push_back(w[static_cast<std::size_t>(a.entries[k])]);
        xi.push_back(xl[p][static_cast<std::size_t>(a.cols[k])]);
      }
      EXPECT_TRUE(same_bits(dot(wi, xi), y[i]))
          << "part " << p << ", row " << i << ": " << dot(wi, xi) << " vs " << y[i];
    }
    // The split by columns: each half keeps its entries in row order, interior rows read no
    // ghost, boundary rows at least one; the two halves' sums add up to the row's.
    const cush::SplitAdjacency split = cush::split_columns(a, dec.part(p));
    const cush::Range interior = dec.part(p).interior();
    for (const cush::LocalAdjacency* half : {&split.owned, &split.ghosts}) {
      ASSERT_EQ(half->row_ptr.size(), nq + 1);
      ASSERT_EQ(half->entries.size(), half->cols.size());
    }
    for (std::size_t r = 0; r < nq; ++r) {
      std::vector<std::int64_t> own, ghost;
      for (auto k = static_cast<std::size_t>(a.row_ptr[r]); k < static_cast<std::size_t>(a.row_ptr[r + 1]); ++k)
        (static_cast<std::size_t>(a.cols[k]) < nq ? own : ghost).push_back(a.entries[k]);
      std::vector<double> sums;
      for (const auto& [half, want] : {std::pair{&split.owned, &own}, std::pair{&split.ghosts, &ghost}}) {
        const auto b = static_cast<std::size_t>(half->row_ptr[r]), e = static_cast<std::size_t>(half->row_ptr[r + 1]);
        ASSERT_EQ(std::vector<std::int64_t>(half->entries.begin() + b, half->entries.begin() + e), *want)
            << "part " << p << ", local row " << r;
        std::vector<double> wi, xi;
        for (std::size_t k = b; k < e; ++k) {
          EXPECT_EQ(half->cols[k] < static_cast<std::int32_t>(nq), half == &split.owned);
          wi.push_back(w[static_cast<std::size_t>(half->entries[k])]);
          xi.push_back(xl[p][static_cast<std::size_t>(half->cols[k])]);
        }
        sums.push_back(dot(wi, xi));
      }
      EXPECT_EQ(ghost.empty(), r < interior.end()) << "part " << p << ", local row " << r;
      const auto i = static_cast<std::size_t>(order[p][r]);
      double scale = 0;
      for (auto k = static_cast<std::size_t>(g.row_ptr[i]); k < static_cast<std::size_t>(g.row_ptr[i + 1]); ++k)
        scale += std::fabs(w[k] * x[static_cast<std::size_t>(g.cols[k])]);
      EXPECT_LE(std::fabs(sums[0] + sums[1] - y[i]), 1e-13 * scale) << "part " << p << ", row " << i;
    }
  }
}

// ---- Random graphs ----


// ---- Tests ----

// The spec's hand example (its §1 and §7): eq. 1.1's order [Q\B][B\O][O][R] would list node 1,
// in O but not in B, twice.
TEST(GraphDecomposition, HandExample) {
  const Graph g = csr({{0, 1}, {0, 1, 2}, {1, 2, 3}, {3, 4, 5}, {1, 3, 4}, {4, 5}});
  const std::vector<int> owner{0, 0, 0, 1, 1, 1};
  const GraphDecomposition dec(g.adjacency(), owner, 2);
  ASSERT_EQ(dec.size(), 2U);
  EXPECT_EQ(dec.nodes(), 6U);
  EXPECT_EQ(dec.entries(), 16U);

  // Part 0: B = {2}, O = {1}, R = {3}; order [0] [1] [] [2] [3].
  const GraphPart& p0 = dec.part(0);
  EXPECT_EQ(std::vector<Node>(p0.globals().begin(), p0.globals().end()), (std::vector<Node>{0, 1, 2, 3}));
  EXPECT_EQ(p0.size(), 4U);
  EXPECT_EQ(p0.owned(), (Range{0, 3}));
  EXPECT_EQ(p0.interior(), (Range{0, 2}));
  EXPECT_EQ(p0.boundary(), (Range{2, 1}));
  EXPECT_EQ(p0.sent(), (Range{1, 1}));
  EXPECT_EQ(p0.ghosts(), (Range{3, 1}));
  EXPECT_EQ(p0.ghosts_from(0), (Range{3, 0}));
  EXPECT_EQ(p0.ghosts_from(1), (Range{3, 1}));
  const std::vector<std::optional<std::size_t>> local0{0, 1, 2, 3, std::nullopt, std::nullopt};
  for (Node j = 0; j < 6; ++j) EXPECT_EQ(p0.local(j), local0[static_cast<std::size_t>(j)]) << "node " << j;
  EXPECT_EQ(p0.local(-1), std::nullopt);
  EXPECT_EQ(p0.local(6), std::nullopt);

  // Part 1: B = {4}, O = {3}, R = {1}; order [5] [3] [] [4] [1].
  const GraphPart& p1 = dec.part(1);
  EXPECT_EQ(std::vector<Node>(p1.globals().begin(), p1.globals().end()), (std::vector<Node>{5, 3, 4, 1}));
  EXPECT_EQ(p1.owned(), (Range{0, 3}));
  EXPECT_EQ(p1.interior(), (Range{0, 2}));
  EXPECT_EQ(p1.boundary(), (Range{2, 1}));
  EXPECT_EQ(p1.sent(), (Range{1, 1}));
  EXPECT_EQ(p1.ghosts(), (Range{3, 1}));
  EXPECT_EQ(p1.ghosts_from(0), (Range{3, 1}));
  EXPECT_EQ(p1.ghosts_from(1), (Range{4, 0}));
  const std::vector<std::optional<std::size_t>> local1{std::nullopt, 3, std::nullopt, 1, 2, 0};
  for (Node j = 0; j < 6; ++j) EXPECT_EQ(p1.local(j), local1[static_cast<std::size_t>(j)]) << "node " << j;
  for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(p1.global(k), (std::vector<Node>{5, 3, 4, 1})[k]);

  // Node 1 (part 0's local 1) fills part 1's ghost; node 3 (part 1's local 1) part 0's.
  ASSERT_EQ(dec.messages().size(), 2U);
  const GraphMessage& m01 = dec.messages()[0];
  EXPECT_EQ(m01.from, 0U);
  EXPECT_EQ(m01.to, 1U);
  EXPECT_EQ(m01.src_local, (std::vector<std::int32_t>{1}));
  EXPECT_EQ(m01.dst, (Range{3, 1}));
  EXPECT_TRUE(m01.contiguous);
  const GraphMessage& m10 = dec.messages()[1];
  EXPECT_EQ(m10.from, 1U);
  EXPECT_EQ(m10.to, 0U);
  EXPECT_EQ(m10.src_local, (std::vector<std::int32_t>{1}));
  EXPECT_EQ(m10.dst, (Range{3, 1}));
  EXPECT_TRUE(m10.contiguous);

  // Rows in local order, columns renumbered, entry order kept.
  const cush::LocalAdjacency a0 = dec.localize(0, g.adjacency());
  EXPECT_EQ(a0.row_ptr, (std::vector<std::int64_t>{0, 2, 5, 8}));
  EXPECT_EQ(a0.cols, (std::vector<std::int32_t>{0, 1, 0, 1, 2, 1, 2, 3}));
  const cush::LocalAdjacency a1 = dec.localize(1, g.adjacency());  // rows of 5, 3, 4
  EXPECT_EQ(a1.row_ptr, (std::vector<std::int64_t>{0, 2, 5, 8}));
  EXPECT_EQ(a1.cols, (std::vector<std::int32_t>{2, 0, 1, 2, 0, 3, 1, 2}));
  // Split by columns: part 0's boundary row (node 2) reads ghost 3 (node 3).
  const cush::SplitAdjacency s0 = cush::split_columns(a0, dec.part(0));
  EXPECT_EQ(s0.owned.row_ptr, (std::vector<std::int64_t>{0, 2, 5, 7}));
  EXPECT_EQ(s0.owned.cols, (std::vector<std::int32_t>{0, 1, 0, 1, 2, 1, 2}));
  EXPECT_EQ(s0.ghosts.row_ptr, (std::vector<std::int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(s0.ghosts.cols, (std::vector<std::int32_t>{3}));
  EXPECT_EQ(s0.ghosts.entries, (std::vector<std::int64_t>{7}));
  cush::LocalAdjacency short_rows = a0, far_column = a0;
  short_rows.row_ptr.pop_back();
  far_column.cols[7] = 4;  // part 0 holds 4 values
  EXPECT_THROW((void)cush::split_columns(short_rows, dec.part(0)), cush::InvalidArgument);
  EXPECT_THROW((void)cush::split_columns(far_column, dec.part(0)), cush::InvalidArgument);

  // The same parts from a layout of two consecutive ranges.
  const std::vector<std::size_t> counts{3, 3};
  const GraphDecomposition by_layout(g.adjacency(), cush::Layout::partitioned(counts));
  for (std::size_t p = 0; p < 2; ++p) {
    EXPECT_TRUE(std::ranges::equal(by_layout.part(p).globals(), dec.part(p).globals()));
    EXPECT_EQ(by_layout.part(p).sent(), dec.part(p).sent());
  }
}

// A part whose nodes are in some other part's R and read one another only (O \ B, no R), and a
// node sent to two parts: the message from it to each reads the same local index.
TEST(GraphDecomposition, OneNodeSentToTwoParts) {
  // Part 0 = {0, 1}, part 1 = {2}, part 2 = {3}; nodes 2 and 3 read node 1, node 0 reads 1.
  const Graph g = csr({{0, 1}, {1}, {1, 2}, {3, 1}});
  const std::vector<int> owner{0, 0, 1, 2};
  const GraphDecomposition dec(g.adjacency(), owner, 3);
  EXPECT_EQ(dec.part(0).interior(), (Range{0, 2}));
  EXPECT_TRUE(dec.part(0).ghosts().empty());
  EXPECT_EQ(dec.part(0).sent(), (Range{1, 1}));
  ASSERT_EQ(dec.messages().size(), 2U);
  EXPECT_EQ(dec.messages()[0].to, 1U);
  EXPECT_EQ(dec.messages()[1].to, 2U);
  EXPECT_EQ(dec.messages()[0].src_local, dec.messages()[1].src_local);
}

TEST(GraphDecomposition, RandomGraphsMatchTheDefinitions) {
  std::mt19937_64 rng(0x6a09e667f3bcc909ULL);
  Coverage seen;
  constexpr int trials = 600;
  for (int trial = 0; trial < trials; ++trial) {
    const Case c = random_case(rng, trial, seen);
    SCOPED_TRACE(c.what);
    const GraphDecomposition dec(c.graph.adjacency(), c.owner, c.parts);
    if (c.parts > 1) ++seen.multi_part;
    ASSERT_NO_FATAL_FAILURE(check_decomposition(dec, c.graph, c.owner, c.parts, rng, seen));
    if (c.layout) {  // the layout's constructor gives the same parts and messages
      ++seen.layouts;
      const GraphDecomposition by_layout(c.graph.adjacency(), *c.layout);
      ASSERT_EQ(by_layout.size(), dec.size());
      for (std::size_t p = 0; p < dec.size(); ++p) {
        EXPECT_TRUE(std::ranges::equal(by_layout.part(p).globals(), dec.part(p).globals()));
        EXPECT_EQ(by_layout.part(p).interior(), dec.part(p).interior());
        EXPECT_EQ(by_layout.part(p).sent(), dec.part(p).sent());
      }
      ASSERT_EQ(by_layout.messages().size(), dec.messages().size());
      for (std::size_t m = 0; m < dec.messages().size(); ++m)
        EXPECT_EQ(by_layout.messages()[m].src_local, dec.messages()[m].src_local);
    }
    if (HasFatalFailure() || ::testing::Test::HasFailure()) break;
  }
  // The generator made every kind the test is about.
  EXPECT_GT(seen.multi_part, trials / 2);
  EXPECT_GT(seen.empty_ghosts, 10U);
  EXPECT_GT(seen.sent_not_boundary, 10U);
  EXPECT_GT(seen.boundary_not_sent, 10U);
  EXPECT_GT(seen.gathers, 100U);
  EXPECT_GT(seen.plain_copies, 100U);
  EXPECT_GT(seen.duplicates, 100U);
  EXPECT_GT(seen.empty_rows, 100U);
  EXPECT_GT(seen.rows_without_centre, 100U);
  EXPECT_GT(seen.layouts, 100U);
}

// The InvalidArgument `call` throws names `argument` and holds every fragment.
void expect_invalid(const std::function<void()>& call, const std::string& argument,
                    std::initializer_list<std::string> fragments) {
  try {
    call();
    ADD_FAILURE() << "no InvalidArgument for '" << argument << "'";
  } catch (const cush::InvalidArgument& e) {
    EXPECT_EQ(e.argument(), argument) << e.what();
    for (const std::string& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what() << " lacks '" << f << "'";
  }
}

TEST(GraphDecomposition, BadInputIsRejectedNamingTheItem) {
  const Graph good = csr({{0, 1}, {0, 1, 2}, {1, 2, 3}, {3, 4, 5}, {1, 3, 4}, {4, 5}});
  const std::vector<int> owner{0, 0, 0, 1, 1, 1};
  const auto make = [](const Graph& g, const std::vector<int>& o, std::size_t parts) {
    return [g, o, parts] { (void)GraphDecomposition(g.adjacency(), o, parts); };
  };

  expect_invalid(make(good, owner, 0), "parts", {});
  expect_invalid(make(csr({}), {}, 1), "graph.row_ptr", {"at least one node"});
  expect_invalid([] { (void)GraphDecomposition(Adjacency{}, std::vector<int>{}, 1); }, "graph.row_ptr", {});
  expect_invalid(make(good, {0, 0, 0, 1, 1}, 2), "owner", {"5 values", "N = 6"});
  expect_invalid(make(good, {0, 0, 0, 1, 2, 1}, 2), "owner", {"node 4", "value 2"});
  expect_invalid(make(good, {0, -1, 0, 1, 1, 1}, 2), "owner", {"node 1", "value -1"});
  expect_invalid(make(good, {0, 0, 0, 0, 0, 0}, 2), "owner", {"part 1 owns no node"});
  expect_invalid(make(good, {0, 0, 2, 2, 2, 2}, 3), "owner", {"part 1 owns no node"});
  expect_invalid(make(good, owner, 1000), "owner", {"part 2 owns no node"});  // more parts than nodes

  Graph g = good;
  g.row_ptr[0] = 1;
  expect_invalid(make(g, owner, 2), "graph.row_ptr", {"row 0"});
  g = good;
  g.row_ptr[2] = 1;  // row 1 ends before it starts
  expect_invalid(make(g, owner, 2), "graph.row_ptr", {"row 1", "decreases"});
  g = good;
  g.row_ptr.back() = 15;
  expect_invalid(make(g, owner, 2), "graph.row_ptr", {"row 5", "ends at 15", "cols.size() = 16"});
  g = good;
  g.cols[6] = 6;  // row 2, entry 6
  expect_invalid(make(g, owner, 2), "graph.cols", {"row 2", "entry 6", "column 6"});
  g = good;
  g.cols[14] = -1;  // row 5, entry 14
  expect_invalid(make(g, owner, 2), "graph.cols", {"row 5", "entry 14", "column -1"});

  // |G| >= 2^31 (checked on the counts: a graph that large does not fit a test).
  constexpr std::size_t two31 = std::size_t{1} << 31;
  EXPECT_NO_THROW(cush::detail::check_local_size("test", 3, two31 - 6, 5));
  expect_invalid([&] { cush::detail::check_local_size("test", 3, two31 - 5, 5); }, "owner", {"part 3", "2^31"});
  expect_invalid([&] { cush::detail::check_local_size("test", 1, two31, 0); }, "owner", {"part 1"});
  expect_invalid([&] { cush::detail::check_local_size("test", 1, 1, two31 * 2); }, "owner", {"part 1"});

  // Layouts: replicated, of another size, with an empty segment.
  expect_invalid([&] { (void)GraphDecomposition(good.adjacency(), cush::Layout::replicated(6, 2)); }, "layout",
                 {"replicated"});
  const std::vector<std::size_t> five{3, 2}, hole{3, 0, 3};
  expect_invalid([&] { (void)GraphDecomposition(good.adjacency(), cush::Layout::partitioned(five)); }, "layout",
                 {"5 elements", "6 nodes"});
  expect_invalid([&] { (void)GraphDecomposition(good.adjacency(), cush::Layout::partitioned(hole)); }, "owner",
                 {"part 1 owns no node"});

  // Accepted: empty rows, duplicate columns, rows without their centre.
  EXPECT_NO_THROW((void)GraphDecomposition(csr({{}, {0, 0, 2}, {1}, {}}).adjacency(), std::vector<int>{0, 1, 1, 0}, 2));

  // Accessors out of range, and localize with another graph.
  const GraphDecomposition dec(good.adjacency(), owner, 2);
  expect_invalid([&] { (void)dec.part(2); }, "pos", {"2"});
  expect_invalid([&] { (void)dec.part(0).ghosts_from(2); }, "h", {});
  expect_invalid([&] { (void)dec.part(0).global(4); }, "local", {});
  expect_invalid([&] { (void)dec.localize(2, good.adjacency()); }, "pos", {});
  const Graph seven = csr({{0, 1}, {0, 1, 2}, {1, 2, 3}, {3, 4, 5}, {1, 3, 4}, {4, 5}, {6}});
  expect_invalid([&] { (void)dec.localize(0, seven.adjacency()); }, "graph", {"7 nodes"});
  const Graph fewer = csr({{0, 1}, {0, 1, 2}, {1, 2, 3}, {3, 4, 5}, {1, 3, 4}, {4}});
  expect_invalid([&] { (void)dec.localize(0, fewer.adjacency()); }, "graph", {"15 entries"});
  g = good;
  g.cols[1] = 4;  // row 0 reads node 4, not in part 0's G
  expect_invalid([&] { (void)dec.localize(0, g.adjacency()); }, "graph", {"row 0", "entry 1", "column 4"});
  g = good;
  g.cols[7] = 0;  // row 2 reads 0 for 2: it reads no ghost, yet is in B
  expect_invalid([&] { (void)dec.localize(0, g.adjacency()); }, "graph", {"row 2", "reads no ghost"});
  g = good;
  g.cols[0] = 3;  // row 0, interior, reads the ghost 3
  expect_invalid([&] { (void)dec.localize(0, g.adjacency()); }, "graph", {"row 0", "reads ghost"});
  // Part 1's boundary row 4 reading {4, 3, 4} for {1, 3, 4}: no ghost.
  expect_invalid(
      [&] {
        (void)dec.localize(1, csr({{0, 1}, {0, 1, 2}, {1, 2, 3}, {3, 4, 5}, {4, 3, 4}, {4, 5}}).adjacency());
      },
      "graph", {"row 4", "reads no ghost"});
  // A ghost no row reads: node 2 reads 3 and 4 in the decomposition's graph, 3 twice in this one.
  const Graph two_ghosts = csr({{0}, {1}, {2, 3, 4}, {3}, {4}, {5}});
  const GraphDecomposition dec2(two_ghosts.adjacency(), owner, 2);
  expect_invalid(
      [&] {
        (void)dec2.localize(0, csr({{0}, {1}, {2, 3, 3}, {3}, {4}, {5}}).adjacency());
      },
      "graph", {"ghost node 4"});
  EXPECT_NO_THROW((void)dec2.localize(0, two_ghosts.adjacency()));
}

}  // namespace
