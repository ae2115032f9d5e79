// Fuzz harness of the graph decomposition (include/cush/graph.hpp, docs/graph.md):
// GraphDecomposition, its parts and messages, and localize(), pure host code.
//
// Decodes: 0-200 nodes (half of the inputs 1-12, N = 0 now and then), 0-9 parts (mostly no more
// than N), the owners as an array (random per node, blocks, round robin or random runs; now and
// then one out of range, a part emptied, one value too many or too few) or through a Layout (even
// or random counts, so empty parts too; now and then counts that do not add up to N, a replicated
// layout, no devices); rows of 0-12 entries with columns anywhere (the centre or not, near it,
// duplicates, now and then outside [0, N), negative included); now and then a malformed row_ptr
// (not starting at 0, decreasing, not ending at cols.size()) or cols of another length; which
// part and entry the localize() misuse below changes.
//
// Checks: InvalidArgument exactly when the documented rules (graph.hpp's constructors,
// docs/graph.md "Bad input") refuse the input, and no other exception. Otherwise, against each
// part's Q, B, O and R computed here from their definitions: the local order [Q\(B+O)] [O\B]
// [O&B] [B\O] [R of part 0] [R of part 1] ..., global order inside each group; owned(),
// interior(), boundary(), sent(), ghosts() and ghosts_from(h) for every part h (past the last
// refused); global() and local() inverse on G, local() empty for every other node and for ids
// outside [0, N); the messages: exactly one per ordered pair with R_to & Q_from not empty, in
// (from, to) order, dst = to's ghosts_from(from), src_local inside from's sent() naming the same
// global ids as dst, contiguous exactly when src_local is one increasing run; run on host arrays,
// every ghost gets its owner's value, once, owned values unchanged; localize() of every part: its
// owned rows in local order, columns mapping back through global() to the row's columns in the
// global graph, in order, `entries` naming each one's global entry; localize() refused for a
// graph of another N, with an owned row's entry changed to a node outside the part's G, and for a
// part past the last. The graph field's exchange
// of the decomposition (1-2 components, every message by one route or mixed) through the stream
// model with the user's work around two exchanges (support/graph_exchange_model.hpp): every
// conflicting pair of accesses ordered, every ghost filled in random allowed orders.

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cush/graph.hpp"
#include "cush/layout.hpp"
#include "decode.hpp"
#include "fuzz.hpp"
#include "support/graph_exchange_model.hpp"

namespace {

using cush::GraphDecomposition;
using cush::GraphPart;
using cush::Range;
using cush_fuzz::str;
using Ids = std::vector<std::int64_t>;

// True for about one input in 16 (false once the bytes are used up): where an unusual or bad
// value replaces the usual ones.
bool rarely(cush_fuzz::Bytes& in) { return in.in<int>(0, 15) == 15; }

template <class T>
std::string list(const std::vector<T>& v) {
  std::string s = "{";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? " " : "") + std::to_string(v[k]);
  return s + "}";
}

// ---------------------------------------------------------------------------------------------
// The input.

struct Case {
  Ids row_ptr, cols;
  std::size_t parts = 0;
  std::vector<int> owner;              // the owner array (for a layout: from its counts)
  std::optional<cush::Layout> layout;  // set: built through this layout
  std::vector<std::size_t> counts;     // the layout's counts (partitioned)
  bool replicated = false;             // the layout is replicated (of `replicated_n` nodes)
  std::size_t replicated_n = 0;

  [[nodiscard]] std::size_t nodes() const { return row_ptr.size() < 2 ? 0 : row_ptr.size() - 1; }
  [[nodiscard]] cush::Adjacency adjacency() const { return {row_ptr, cols}; }
  [[nodiscard]] std::string text() const {
    std::string s = "N " + std::to_string(nodes()) + ", parts " + std::to_string(parts) + ", row_ptr " +
                    list(row_ptr) + ", cols " + list(cols);
    if (!layout) return s + ", owner " + list(owner);
    if (replicated) return s + ", a replicated layout of " + std::to_string(replicated_n);
    return s + ", a layout of counts " + list(counts);
  }
};

Case decode(cush_fuzz::Bytes& in) {
  // The shape and every unusual choice first, so that short inputs have them too; then the
  // owners and the rows, which take most of the bytes.
  Case c;
  const bool by_layout = in.in<int>(0, 3) == 0;
  const std::size_t n = rarely(in) ? 0 : in.flag() ? in.in<std::size_t>(1, 12) : in.in<std::size_t>(1, 200);
  // Mostly no more parts than nodes (more parts leave some without a node: refused).
  c.parts = rarely(in) ? in.in<std::size_t>(0, 9) : in.in<std::size_t>(1, std::clamp<std::size_t>(n, 1, 9));
  const int owner_style = in.in<int>(0, 3);
  const bool bad_owner = rarely(in), empty_part = rarely(in), owner_size = rarely(in);
  const bool replicated = rarely(in), even = in.flag(), counts_off = rarely(in);
  const bool bad_cols = rarely(in);
  const std::size_t cap = in.in<std::size_t>(0, 12);
  const int malformed = rarely(in) ? in.in<int>(0, 3) : -1;
  const int p = static_cast<int>(std::max<std::size_t>(c.parts, 1));
  // A part for node i: from the bytes, round robin once they are used up (every part owns a node).
  const auto any_part = [&](std::size_t i) {
    return in.left() > 0 ? in.in<int>(0, p - 1) : static_cast<int>(i % static_cast<std::size_t>(p));
  };

  if (!by_layout) {
    c.owner.resize(n);
    switch (owner_style) {
      case 0:  // random
        for (std::size_t i = 0; i < n; ++i) c.owner[i] = any_part(i);
        break;
      case 1:  // blocks in order
        for (std::size_t i = 0; i < n; ++i) c.owner[i] = static_cast<int>(i * static_cast<std::size_t>(p) / n);
        break;
      case 2:  // round robin
        for (std::size_t i = 0; i < n; ++i) c.owner[i] = static_cast<int>(i % static_cast<std::size_t>(p));
        break;
      default:  // runs of random parts
        for (std::size_t i = 0; i < n;) {
          const int o = any_part(i);
          for (std::size_t len = in.in<std::size_t>(1, 16); len > 0 && i < n; --len) c.owner[i++] = o;
        }
    }
  } else if (c.parts == 0) {
    c.layout.emplace();  // a layout of no devices
  } else if (replicated) {
    c.replicated = true;
    c.replicated_n = in.flag() ? n : in.in<std::size_t>(0, 201);
    c.layout = cush::Layout::replicated(c.replicated_n, c.parts);
  } else {
    std::vector<std::size_t> cuts{0, n};
    for (std::size_t k = 1; k < c.parts; ++k)  // even (the first n mod parts one node more), or random
      cuts.push_back(even ? k * (n / c.parts) + std::min(k, n % c.parts) : in.in<std::size_t>(0, n));
    std::sort(cuts.begin(), cuts.end());  // random cuts make empty parts where two meet
    for (std::size_t k = 0; k < c.parts; ++k) c.counts.push_back(cuts[k + 1] - cuts[k]);
    if (counts_off) {  // counts that do not add up to N
      std::size_t& last = c.counts.back();
      const std::size_t d = in.in<std::size_t>(1, 3);
      last = in.flag() || last < d ? last + d : last - d;
    }
    for (std::size_t k = 0; k < c.parts; ++k) c.owner.insert(c.owner.end(), c.counts[k], static_cast<int>(k));
    c.layout = cush::Layout::partitioned(c.counts);
  }

  // Rows.
  const auto sn = static_cast<std::int64_t>(n);
  c.row_ptr.push_back(0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto centre = static_cast<std::int64_t>(i);
    for (std::size_t len = in.in<std::size_t>(0, cap); len > 0; --len) {
      std::int64_t col = centre;
      switch (in.in<int>(0, 7)) {
        case 0: break;  // the centre
        case 1: case 2: case 3: col = ((centre + in.in<std::int64_t>(-3, 3)) % sn + sn) % sn; break;  // near it
        case 4: case 5: col = in.in<std::int64_t>(0, sn - 1); break;  // anywhere
        case 6: col = c.cols.size() > static_cast<std::size_t>(c.row_ptr.back()) ? c.cols.back() : centre; break;
        default:
          if (bad_cols) {
            const std::int64_t bad[] = {-1, sn, sn + 1, INT64_MIN, INT64_MAX, -sn};
            col = in.pick(bad);
          } else {
            col = in.in<std::int64_t>(0, sn - 1);
          }
      }
      c.cols.push_back(col);
    }
    c.row_ptr.push_back(static_cast<std::int64_t>(c.cols.size()));
  }
  if (n == 0 && in.flag()) c.row_ptr.clear();  // no row_ptr at all

  // The bad owners.
  if (!by_layout) {
    if (bad_owner && n > 0) {  // an owner out of range
      const int bad[] = {-1, INT_MIN, p, p + 1, INT_MAX};
      c.owner[in.in<std::size_t>(0, n - 1)] = in.pick(bad);
    }
    if (empty_part && p > 1) {  // a part emptied into the next one
      const int e = in.in<int>(0, p - 1);
      for (auto& o : c.owner)
        if (o == e) o = (e + 1) % p;
    }
    if (owner_size) {  // one owner too many or too few
      if (in.flag() || c.owner.empty()) c.owner.push_back(0);
      else c.owner.pop_back();
    }
  }

  // A malformed row_ptr (or cols of another length).
  if (malformed >= 0 && n > 0) {
    const std::int64_t d = in.in<std::int64_t>(1, 3);
    switch (malformed) {
      case 0: c.row_ptr[0] = in.flag() ? d : -d; break;  // not starting at 0
      case 1: {  // decreasing (row i - 1 ends before it starts)
        const std::size_t i = in.in<std::size_t>(1, n);
        c.row_ptr[i] = c.row_ptr[i - 1] - d;
        break;
      }
      case 2: c.row_ptr[n] += in.flag() ? d : -d; break;  // not ending at cols.size()
      default:
        if (in.flag() || c.cols.empty()) c.cols.push_back(0);
        else c.cols.pop_back();
    }
  }
  return c;
}

// Why the documented rules refuse the case; empty if they accept it.
std::string refusal(const Case& c) {
  const std::size_t n = c.nodes();
  if (n == 0) return "N = 0";
  if (c.row_ptr[0] != 0) return "row_ptr does not start at 0";
  for (std::size_t i = 0; i < n; ++i)
    if (c.row_ptr[i + 1] < c.row_ptr[i]) return "row_ptr decreases at row " + std::to_string(i);
  if (c.row_ptr[n] != static_cast<std::int64_t>(c.cols.size())) return "row_ptr does not end at cols.size()";
  for (std::size_t e = 0; e < c.cols.size(); ++e)
    if (c.cols[e] < 0 || c.cols[e] >= static_cast<std::int64_t>(n))
      return "entry " + std::to_string(e) + " is not a node";
  if (c.layout) {
    if (c.replicated) return "the layout is replicated";
    if (c.layout->devices() == 0) return "parts = 0 (a layout of no devices)";
    std::size_t sum = 0;
    for (const std::size_t k : c.counts) sum += k;
    if (sum != n) return "the layout's size is not N";
  }
  if (c.parts == 0) return "parts = 0";
  if (c.owner.size() != n) return "owner.size() != N";
  std::vector<std::size_t> count(c.parts, 0);
  for (const int o : c.owner) {
    if (o < 0 || static_cast<std::size_t>(o) >= c.parts) return "an owner outside [0, parts)";
    ++count[static_cast<std::size_t>(o)];
  }
  for (std::size_t q = 0; q < c.parts; ++q)
    if (count[q] == 0) return "part " + std::to_string(q) + " owns no node";
  return {};
}

// ---------------------------------------------------------------------------------------------
// The sets of every part from their definitions, and the local order they give.

struct Expected {
  std::vector<std::vector<bool>> q, r, b, o;  // [part][node]
  std::vector<Ids> order;                     // [part]: the local order
  std::vector<std::array<std::size_t, 4>> groups;
  std::vector<std::vector<std::size_t>> ghosts_of;  // [part][owner]: |R & Q_owner|
};

Expected expect(const Case& c) {
  const std::size_t n = c.nodes(), parts = c.parts;
  const auto owner = [&](std::int64_t j) { return static_cast<std::size_t>(c.owner[static_cast<std::size_t>(j)]); };
  Expected x;
  x.q.assign(parts, std::vector<bool>(n, false));
  x.r = x.b = x.o = x.q;
  for (std::size_t i = 0; i < n; ++i) x.q[owner(static_cast<std::int64_t>(i))][i] = true;
  // R_g: the columns of g's rows that other parts own; B_g: g's rows with such a column.
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t g = owner(static_cast<std::int64_t>(i));
    for (auto e = c.row_ptr[i]; e < c.row_ptr[i + 1]; ++e) {
      const std::int64_t j = c.cols[static_cast<std::size_t>(e)];
      if (owner(j) == g) continue;
      x.r[g][static_cast<std::size_t>(j)] = true;
      x.b[g][i] = true;
    }
  }
  // O_g: the nodes of Q_g in some other part's R.
  for (std::size_t g = 0; g < parts; ++g)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t h = 0; h < parts; ++h)
        if (h != g && x.q[g][j] && x.r[h][j]) x.o[g][j] = true;
  for (std::size_t g = 0; g < parts; ++g) {
    Ids group[4];  // Q\(B+O), O\B, O&B, B\O
    for (std::size_t i = 0; i < n; ++i) {
      if (!x.q[g][i]) continue;
      const bool b = x.b[g][i], o = x.o[g][i];
      group[!b && !o ? 0 : o && !b ? 1 : o && b ? 2 : 3].push_back(static_cast<std::int64_t>(i));
    }
    Ids order;
    std::array<std::size_t, 4> sizes{};
    for (int k = 0; k < 4; ++k) {
      sizes[static_cast<std::size_t>(k)] = group[k].size();
      order.insert(order.end(), group[k].begin(), group[k].end());
    }
    std::vector<std::size_t> from(parts, 0);  // then R, by owner ascending, global order inside
    for (std::size_t h = 0; h < parts; ++h)
      for (std::size_t j = 0; j < n; ++j)
        if (x.r[g][j] && owner(static_cast<std::int64_t>(j)) == h) {
          order.push_back(static_cast<std::int64_t>(j));
          ++from[h];
        }
    x.order.push_back(std::move(order));
    x.groups.push_back(sizes);
    x.ghosts_of.push_back(std::move(from));
  }
  return x;
}

std::string text(Range r) { return str(r); }
std::string title(const Case& c) { return "GraphDecomposition(" + c.text() + ")"; }

// ---------------------------------------------------------------------------------------------
// Checks of an accepted decomposition.

void check_part(const GraphDecomposition& dec, const Case& c, const Expected& x, std::size_t g) {
  const GraphPart& part = dec.part(g);
  const auto which = [&] { return title(c) + ": part " + std::to_string(g); };
  const Ids& order = x.order[g];
  const std::array<std::size_t, 4>& k = x.groups[g];
  const std::size_t owned = k[0] + k[1] + k[2] + k[3];
  const Ids got(part.globals().begin(), part.globals().end());
  FUZZ_CHECK(got == order, which() + ": local order " + list(got) + ", not " + list(order) + " (groups " +
                               std::to_string(k[0]) + " " + std::to_string(k[1]) + " " + std::to_string(k[2]) + " " +
                               std::to_string(k[3]) + ")");
  FUZZ_CHECK(part.size() == order.size(), which());
  const auto range = [&](Range r, std::size_t offset, std::size_t count, const std::string& name) {
    FUZZ_CHECK(r.offset == offset && r.count == count,
               which() + ": " + name + " " + text(r) + ", not " + text(Range{offset, count}));
  };
  range(part.owned(), 0, owned, "owned()");
  range(part.interior(), 0, k[0] + k[1], "interior()");
  range(part.boundary(), k[0] + k[1], k[2] + k[3], "boundary()");
  range(part.sent(), k[0], k[1] + k[2], "sent()");
  range(part.ghosts(), owned, order.size() - owned, "ghosts()");
  std::size_t at = owned;
  for (std::size_t h = 0; h < c.parts; ++h) {
    range(part.ghosts_from(h), at, x.ghosts_of[g][h], "ghosts_from(" + std::to_string(h) + ")");
    at += x.ghosts_of[g][h];
  }
  FUZZ_CHECK(FUZZ_REJECTS(part.ghosts_from(c.parts)), which() + ": ghosts_from() of a part past the last");
  FUZZ_CHECK(FUZZ_REJECTS(part.ghosts_from(SIZE_MAX)), which() + ": ghosts_from(SIZE_MAX)");

  // The maps.
  for (std::size_t l = 0; l < part.size(); ++l) {
    FUZZ_CHECK(part.global(l) == order[l], which() + ": global(" + std::to_string(l) + ")");
    FUZZ_CHECK(part.local(order[l]) == l, which() + ": local(global(" + std::to_string(l) + "))");
  }
  FUZZ_CHECK(FUZZ_REJECTS(part.global(part.size())), which() + ": global() past the last value");
  FUZZ_CHECK(FUZZ_REJECTS(part.global(SIZE_MAX)), which() + ": global(SIZE_MAX)");
  const std::size_t n = c.nodes();
  for (std::size_t j = 0; j < n; ++j)
    if (!x.q[g][j] && !x.r[g][j])
      FUZZ_CHECK(!part.local(static_cast<std::int64_t>(j)),
                 which() + ": local(" + std::to_string(j) + ") of a node outside G");
  const auto sn = static_cast<std::int64_t>(n);
  for (const std::int64_t id : {std::int64_t{-1}, -sn, INT64_MIN, sn, sn + 1, INT64_MAX})
    FUZZ_CHECK(!part.local(id), which() + ": local(" + std::to_string(id) + ") of an id outside [0, N)");
}

void check_messages(const GraphDecomposition& dec, const Case& c, const Expected& x) {
  // Which ordered pairs need one.
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t from = 0; from < c.parts; ++from)
    for (std::size_t to = 0; to < c.parts; ++to)
      if (to != from && x.ghosts_of[to][from] > 0) pairs.emplace_back(from, to);
  const std::span<const cush::GraphMessage> messages = dec.messages();
  FUZZ_CHECK(messages.size() == pairs.size(), title(c) + ": " + std::to_string(messages.size()) + " messages, not " +
                                                  std::to_string(pairs.size()));

  // Host arrays: an owned value names its node, a ghost starts as -1.
  const auto value = [](std::int64_t node) { return 3 * node + 1; };
  std::vector<Ids> values(c.parts);
  std::vector<std::vector<int>> writes(c.parts);
  for (std::size_t g = 0; g < c.parts; ++g) {
    const std::size_t owned = dec.part(g).owned().count;
    for (std::size_t l = 0; l < x.order[g].size(); ++l) values[g].push_back(l < owned ? value(x.order[g][l]) : -1);
    writes[g].assign(x.order[g].size(), 0);
  }

  for (std::size_t m = 0; m < messages.size(); ++m) {
    const cush::GraphMessage& msg = messages[m];
    const auto which = [&] {
      return title(c) + ": message " + std::to_string(m) + " (" + std::to_string(msg.from) + " -> " +
             std::to_string(msg.to) + ", src_local " + list(msg.src_local) + ", dst " + text(msg.dst) + ")";
    };
    FUZZ_CHECK(msg.from == pairs[m].first && msg.to == pairs[m].second,
               which() + ": not the pair " + std::to_string(pairs[m].first) + " -> " + std::to_string(pairs[m].second));
    const GraphPart& from = dec.part(msg.from);
    const GraphPart& to = dec.part(msg.to);
    const Range dst = to.ghosts_from(msg.from);
    FUZZ_CHECK(msg.dst.offset == dst.offset && msg.dst.count == dst.count,
               which() + ": dst is not to's ghosts_from(from)");
    FUZZ_CHECK(msg.src_local.size() == dst.count, which() + ": as many sources as destinations");
    const Range sent = from.sent();
    bool run = true;
    for (std::size_t k = 0; k < msg.src_local.size(); ++k) {
      const std::int32_t s = msg.src_local[k];
      FUZZ_CHECK(s >= 0 && static_cast<std::size_t>(s) >= sent.offset && static_cast<std::size_t>(s) < sent.end(),
                 which() + ": source " + std::to_string(s) + " outside from's sent() " + text(sent));
      const std::size_t d = dst.offset + k;
      FUZZ_CHECK(x.order[msg.from][static_cast<std::size_t>(s)] == x.order[msg.to][d],
                 which() + ": entry " + std::to_string(k) + " sends node " +
                     std::to_string(x.order[msg.from][static_cast<std::size_t>(s)]) + " to ghost node " +
                     std::to_string(x.order[msg.to][d]));
      if (k > 0 && msg.src_local[k - 1] + 1 != s) run = false;
      values[msg.to][d] = values[msg.from][static_cast<std::size_t>(s)];
      ++writes[msg.to][d];
    }
    FUZZ_CHECK(msg.contiguous == run, which() + ": contiguous is " + (msg.contiguous ? "true" : "false"));
  }

  for (std::size_t g = 0; g < c.parts; ++g) {
    const std::size_t owned = dec.part(g).owned().count;
    for (std::size_t l = 0; l < x.order[g].size(); ++l) {
      const auto which = [&] {
        return title(c) + ": after the messages, part " + std::to_string(g) + " local " + std::to_string(l) +
               " (node " + std::to_string(x.order[g][l]) + ")";
      };
      FUZZ_CHECK(values[g][l] == value(x.order[g][l]), which() + " holds " + std::to_string(values[g][l]));
      FUZZ_CHECK(writes[g][l] == (l < owned ? 0 : 1), which() + " written " + std::to_string(writes[g][l]) + " times");
    }
  }
}

void check_localize(const GraphDecomposition& dec, const Case& c, const Expected& x, cush_fuzz::Bytes& in) {
  for (std::size_t g = 0; g < c.parts; ++g) {
    const auto which = [&] { return title(c) + ": localize(" + std::to_string(g) + ")"; };
    cush::LocalAdjacency a;
    FUZZ_CHECK(!FUZZ_REJECTS(a = dec.localize(g, c.adjacency())), which() + " refused the decomposition's graph");
    const Ids& order = x.order[g];
    const std::size_t owned = dec.part(g).owned().count;
    FUZZ_CHECK(a.row_ptr.size() == owned + 1 && a.row_ptr[0] == 0, which() + ": row_ptr " + list(a.row_ptr));
    FUZZ_CHECK(a.row_ptr[owned] == static_cast<std::int64_t>(a.cols.size()), which() + ": row_ptr " + list(a.row_ptr));
    for (std::size_t r = 0; r < owned; ++r) {
      const auto i = static_cast<std::size_t>(order[r]);
      const std::int64_t start = c.row_ptr[i], len = c.row_ptr[i + 1] - start;
      FUZZ_CHECK(a.row_ptr[r + 1] - a.row_ptr[r] == len,
                 which() + ": row " + std::to_string(r) + " (node " + std::to_string(i) + ") has " +
                     std::to_string(a.row_ptr[r + 1] - a.row_ptr[r]) + " entries, not " + std::to_string(len));
      for (std::int64_t k = 0; k < len; ++k) {
        const std::int32_t l = a.cols[static_cast<std::size_t>(a.row_ptr[r] + k)];
        const std::int64_t want = c.cols[static_cast<std::size_t>(start + k)];
        FUZZ_CHECK(l >= 0 && static_cast<std::size_t>(l) < order.size() && order[static_cast<std::size_t>(l)] == want,
                   which() + ": row " + std::to_string(r) + " (node " + std::to_string(i) + ") entry " +
                       std::to_string(k) + " is local " + std::to_string(l) + ", not node " + std::to_string(want));
        FUZZ_CHECK(a.entries.size() == a.cols.size() && a.entries[static_cast<std::size_t>(a.row_ptr[r] + k)] == start + k,
                   which() + ": row " + std::to_string(r) + " entry " + std::to_string(k) + " names the wrong global entry");
      }
    }
  }

  // Another graph: one more (empty) row.
  Case other = c;
  other.row_ptr.push_back(other.row_ptr.back());
  const std::size_t g = in.in<std::size_t>(0, c.parts - 1);
  FUZZ_CHECK(FUZZ_REJECTS(dec.localize(g, other.adjacency())), title(c) + ": localize() of a graph of N + 1 nodes");
  FUZZ_CHECK(FUZZ_REJECTS(dec.localize(c.parts, c.adjacency())), title(c) + ": localize() of a part past the last");

  // Another graph: an entry of one of g's owned rows changed to a node outside g's G.
  std::vector<std::size_t> entries;  // the entries of g's rows
  const std::size_t n = c.nodes();
  for (std::size_t i = 0; i < n; ++i)
    if (x.q[g][i])
      for (auto e = c.row_ptr[i]; e < c.row_ptr[i + 1]; ++e) entries.push_back(static_cast<std::size_t>(e));
  if (entries.empty()) return;
  std::vector<std::int64_t> outside{-1, static_cast<std::int64_t>(n)};
  for (std::size_t j = 0; j < n; ++j)
    if (!x.q[g][j] && !x.r[g][j]) outside.push_back(static_cast<std::int64_t>(j));
  other = c;
  const std::size_t e = entries[in.in<std::size_t>(0, entries.size() - 1)];
  // Mostly a node of [0, N) where there is one.
  other.cols[e] = outside[outside.size() > 2 && in.in<int>(0, 3) != 0 ? in.in<std::size_t>(2, outside.size() - 1)
                                                                       : in.in<std::size_t>(0, 1)];
  FUZZ_CHECK(FUZZ_REJECTS(dec.localize(g, other.adjacency())),
             title(c) + ": localize(" + std::to_string(g) + ") of the graph with entry " + std::to_string(e) + " = " +
                 std::to_string(other.cols[e]) + ", outside the part's nodes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cush_fuzz::Bytes in(data, size);
  const Case c = decode(in);
  const auto what = [&] { return title(c); };

  const std::string why = refusal(c);
  std::optional<GraphDecomposition> dec;
  const bool refused = FUZZ_REJECTS(c.layout ? dec.emplace(c.adjacency(), *c.layout)
                                             : dec.emplace(c.adjacency(), std::span<const int>(c.owner), c.parts));
  FUZZ_CHECK(refused == !why.empty(), what() + (refused ? " refused" : " accepted, though " + why));
  if (refused) return 0;

  try {
    FUZZ_CHECK(dec->size() == c.parts && dec->nodes() == c.nodes() && dec->entries() == c.cols.size(),
               what() + ": size(), nodes() or entries()");
    FUZZ_CHECK(FUZZ_REJECTS(dec->part(c.parts)), what() + ": part() past the last");
    const Expected x = expect(c);
    for (std::size_t g = 0; g < c.parts; ++g) check_part(*dec, c, x, g);
    check_messages(*dec, c, x);
    check_localize(*dec, c, x, in);
    const std::size_t components = in.in<std::size_t>(1, 2);
    const int route = in.in<int>(0, 3);
    std::mt19937_64 rng(in.in<std::uint32_t>(0, 1000000));
    const std::string wrong = cush_test::check_graph_exchange(*dec, components, route, rng);
    FUZZ_CHECK(wrong.empty(), what() + ": the field's exchange, route " + std::to_string(route) + ", " +
                                  std::to_string(components) + " components: " + wrong);
  } catch (const std::exception& e) {
    cush_fuzz::fail(FUZZ_NAME, __FILE__, __LINE__, what() + ": threw " + e.what());
  }
  return 0;
}
