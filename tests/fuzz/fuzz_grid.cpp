// Fuzz harness of the grid decomposition (include/cush/grid.hpp): choose_process_grid() and
// Decomposition, pure host code.
//
// Decodes: extents 0-64 per axis (0 and 1 included, axes beyond `dims` sometimes not 1), 0-4 axes,
// 0-16 blocks, a process grid chosen by the library or given (its product right or wrong, zeros,
// splits beyond the grid's axes or along axes without ghosts), halo depths 0-7 (wider than a
// block too), periodicity and ghost axes per axis, row alignments 0-4097; for
// choose_process_grid() alone also a minimum thickness and splittable axes.
//
// Checks: InvalidArgument exactly when the documented rules refuse the arguments. Otherwise the
// process grid is the given one or a best factorization by the documented ranking; block b sits
// at (b mod B_x, (b / B_x) mod B_y, b / (B_x B_y)); the owned boxes tile the grid exactly once, in
// that order, the first (n mod B) blocks of an axis one cell larger; neighbours are the adjacent
// blocks (wrapped across periodic axes, none at other edges or along axes without ghosts) and
// symmetric; buffer shapes, lead() and index() follow the documented layout; interior() is the
// owned box shrunk as documented and boundary() the rest, in z, y, x slabs, disjoint; the halo
// phases (libcush/grid/halo.hpp) send each block's outermost owned layers to the ghosts of its
// neighbours that stand for the same (wrapped) cells, once per block, axis and side, in
// messages that write disjoint cells and read none another one writes; bad calls are refused.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cush/grid.hpp"
#include "fuzz.hpp"
#include "grid/halo.hpp"

namespace {

using cush::Box;
using cush::Decomposition;
using cush::Extent3;
using cush::GridOptions;
using Flags = std::array<bool, 3>;
using Point = std::array<std::ptrdiff_t, 3>;

std::string text(const Extent3& e) {
  return std::to_string(e[0]) + " " + std::to_string(e[1]) + " " + std::to_string(e[2]);
}
std::string text(const Flags& f) { return std::string(f[0] ? "1" : "0") + (f[1] ? " 1" : " 0") + (f[2] ? " 1" : " 0"); }
std::string text(const Box& b) {
  return "lo " + std::to_string(b.lo[0]) + " " + std::to_string(b.lo[1]) + " " + std::to_string(b.lo[2]) + " size " +
         text(b.size);
}

std::ptrdiff_t end(const Box& b, std::size_t a) { return b.lo[a] + static_cast<std::ptrdiff_t>(b.size[a]); }
bool overlap(const Box& x, const Box& y) {
  for (std::size_t a = 0; a < 3; ++a)
    if (std::max(x.lo[a], y.lo[a]) >= std::min(end(x, a), end(y, a))) return false;
  return true;
}
bool within(const Box& inner, const Box& outer) {
  for (std::size_t a = 0; a < 3; ++a)
    if (inner.lo[a] < outer.lo[a] || end(inner, a) > end(outer, a)) return false;
  return true;
}

// True for about one input in 16 (false once the bytes are used up): where an unusual or bad
// value replaces the usual ones.
bool rarely(cush_fuzz::Bytes& in) { return in.in<int>(0, 15) == 15; }

// ---------------------------------------------------------------------------------------------
// The process grid as documented for choose_process_grid(): among the factorizations of `count`
// with no empty block, no block thinner than `min_thickness` along a split axis and one block
// along the axes beyond `dims` or not splittable, the one whose largest block has the smallest
// surface, ties going to larger blocks along x, then y.

struct Score {
  std::size_t surface = 0;
  Extent3 largest{};  // the cells of the largest block (the first one) along each axis

  [[nodiscard]] bool better_than(const Score& o) const {
    if (surface != o.surface) return surface < o.surface;
    if (largest[0] != o.largest[0]) return largest[0] > o.largest[0];
    return largest[1] > o.largest[1];
  }
  [[nodiscard]] bool ties(const Score& o) const { return !better_than(o) && !o.better_than(*this); }
};

Score score(const Extent3& blocks, const Extent3& extent) {
  Score s;
  for (std::size_t a = 0; a < 3; ++a) s.largest[a] = (extent[a] + blocks[a] - 1) / blocks[a];
  const Extent3& l = s.largest;
  s.surface = l[0] * l[1] + l[1] * l[2] + l[0] * l[2];
  return s;
}

bool fits(const Extent3& blocks, const Extent3& extent, std::size_t dims, std::size_t min_thickness,
          const Flags& splittable) {
  for (std::size_t a = 0; a < 3; ++a) {
    if ((a >= dims || !splittable[a]) && blocks[a] != 1) return false;
    const std::size_t thinnest = extent[a] / blocks[a];
    if (thinnest == 0 || (blocks[a] > 1 && thinnest < min_thickness)) return false;
  }
  return true;
}

// A best fitting factorization of `count` (any of the tied ones), or none.
std::optional<Extent3> best_fit(std::size_t count, const Extent3& extent, std::size_t dims, std::size_t min_thickness,
                                const Flags& splittable) {
  std::optional<Extent3> best;
  for (std::size_t bx = 1; bx <= count; ++bx)
    for (std::size_t by = 1; bx * by <= count; ++by) {
      if (count % (bx * by) != 0) continue;
      const Extent3 b{bx, by, count / (bx * by)};
      if (fits(b, extent, dims, min_thickness, splittable) &&
          (!best || score(b, extent).better_than(score(*best, extent))))
        best = b;
    }
  return best;
}

void check_choose_process_grid(cush_fuzz::Bytes& in) {
  const std::size_t count = in.in<std::size_t>(0, 16);
  const std::size_t dims = in.in<std::size_t>(0, 4);
  Extent3 extent{1, 1, 1};
  for (std::size_t a = 0; a < 3 && a < dims; ++a)
    extent[a] = in.flag() ? in.in<std::size_t>(0, 8) : in.in<std::size_t>(0, 64);
  const std::size_t min_thickness = in.in<std::size_t>(0, 6);
  const Flags splittable{in.in<int>(0, 3) != 3, in.in<int>(0, 3) != 3, in.in<int>(0, 3) != 3};
  const auto what = [&] {
    return "choose_process_grid(" + std::to_string(count) + ", {" + text(extent) + "}, " + std::to_string(dims) + ", " +
           std::to_string(min_thickness) + ", {" + text(splittable) + "})";
  };

  Extent3 got{};
  const bool refused = FUZZ_REJECTS(got = cush::choose_process_grid(count, extent, dims, min_thickness, splittable));
  const bool dims_ok = dims >= 1 && dims <= 3;
  const std::optional<Extent3> best = dims_ok ? best_fit(count, extent, dims, min_thickness, splittable) : std::nullopt;
  FUZZ_CHECK(refused == !best,
             what() + (refused ? " refused, though a process grid fits"
                               : " returned " + text(got) + ", though none fits (an empty or thin block)"));
  if (refused) return;
  FUZZ_CHECK(got[0] * got[1] * got[2] == count, what() + " returned " + text(got));
  FUZZ_CHECK(fits(got, extent, dims, min_thickness, splittable), what() + " returned " + text(got));
  FUZZ_CHECK(score(got, extent).ties(score(*best, extent)),
             what() + " returned " + text(got) + ", not as good as " + text(*best));
}

// ---------------------------------------------------------------------------------------------
// A Decomposition.

// Why the documentation refuses these arguments; empty if it accepts them (then *blocks is a
// process grid the decomposition may have).
std::string refusal(const Extent3& extent, std::size_t dims, std::size_t count, const GridOptions& o, Extent3& blocks) {
  if (dims < 1 || dims > 3) return "dims is not 1, 2 or 3";
  for (std::size_t a = 0; a < 3; ++a) {
    if (extent[a] == 0) return "the grid is empty";
    if (a >= dims && extent[a] != 1) return "an axis beyond dims has an extent other than 1";
    if (a >= dims && o.periodic[a]) return "an axis beyond dims is periodic";
  }
  if (o.halo == 0) return "the halo depth is 0";
  if (o.row_align == 0 || o.row_align > 4096) return "row_align is not 1-4096";
  blocks = o.blocks;
  if (blocks == Extent3{0, 0, 0}) {
    const std::optional<Extent3> best = best_fit(count, extent, dims, o.halo, o.ghosts);
    if (!best) return "no process grid fits";
    blocks = *best;
  } else {
    if (blocks[0] * blocks[1] * blocks[2] != count) return "the given process grid does not have `count` blocks";
    for (std::size_t a = 0; a < 3; ++a)
      if (blocks[a] == 0 || (a >= dims && blocks[a] != 1)) return "the given process grid does not fit the grid's axes";
    for (std::size_t a = 0; a < dims; ++a)
      if (blocks[a] > 1 && !o.ghosts[a]) return "the given process grid splits an axis without ghost layers";
  }
  for (std::size_t a = 0; a < dims; ++a) {
    const bool exchanges = o.ghosts[a] && (blocks[a] > 1 || o.periodic[a]);
    if (exchanges && extent[a] / blocks[a] < o.halo)
      return "a block is thinner than the halo along an axis that exchanges";
  }
  return {};
}

// Block positions, coordinates and owned boxes: in the documented order, tiling the grid once,
// as even as documented.
void check_blocks(const Decomposition& g, const std::string& what) {
  const Extent3& e = g.extent();
  const Extent3& B = g.blocks();
  // Along each axis, the first cell and the cells of the blocks at coordinate c: the first
  // (n mod B) get n / B + 1 cells, the rest n / B, one after another from 0.
  std::array<std::vector<std::size_t>, 3> first, cells;
  for (std::size_t a = 0; a < 3; ++a) {
    std::size_t at = 0;
    for (std::size_t c = 0; c < B[a]; ++c) {
      first[a].push_back(at);
      cells[a].push_back(e[a] / B[a] + (c < e[a] % B[a] ? 1 : 0));
      at += cells[a].back();
    }
    FUZZ_CHECK(at == e[a], what);  // the reference itself: the parts add up to the axis
  }
  const std::size_t volume = e[0] * e[1] * e[2];
  std::vector<std::uint8_t> owners(volume <= 4096 ? volume : 0, 0);  // counted cell by cell on small grids
  for (std::size_t b = 0; b < g.size(); ++b) {
    const Extent3 c = g.coords(b);
    FUZZ_CHECK((c == Extent3{b % B[0], (b / B[0]) % B[1], b / (B[0] * B[1])}),
               what + ": coords of block " + std::to_string(b));
    FUZZ_CHECK(g.block_at(c) == b, what + ": block_at(coords(" + std::to_string(b) + "))");
    const Box o = g.owned(b);
    for (std::size_t a = 0; a < 3; ++a) {
      FUZZ_CHECK(o.lo[a] == static_cast<std::ptrdiff_t>(first[a][c[a]]) && o.size[a] == cells[a][c[a]],
                 what + ": block " + std::to_string(b) + " owns " + text(o) +
                     ", unbalanced or out of order along axis " + std::to_string(a));
    }
    FUZZ_CHECK(!o.empty(), what + ": block " + std::to_string(b) + " is empty");
    if (owners.empty()) continue;
    for (std::size_t z = 0; z < o.size[2]; ++z)
      for (std::size_t y = 0; y < o.size[1]; ++y)
        for (std::size_t x = 0; x < o.size[0]; ++x) {
          const std::size_t i = (o.lo[0] + x) + e[0] * ((o.lo[1] + y) + e[1] * (o.lo[2] + z));
          FUZZ_CHECK(i < volume && ++owners[i] == 1,
                     what + ": a cell owned twice or outside the grid, block " + std::to_string(b));
        }
  }
  FUZZ_CHECK(std::all_of(owners.begin(), owners.end(), [](std::uint8_t n) { return n == 1; }),
             what + ": a cell owned by no block");
}

// Neighbours: the adjacent block, wrapped across periodic axes; none at a non-periodic edge or
// along an axis without ghost layers; symmetric.
void check_neighbors(const Decomposition& g, const std::string& what) {
  const Extent3& B = g.blocks();
  for (std::size_t b = 0; b < g.size(); ++b) {
    const Box mine = g.owned(b);
    for (std::size_t a = 0; a < 3; ++a)
      for (int dir : {-1, +1}) {
        const auto which = [&] {
          return what + ": neighbour of block " + std::to_string(b) + " along axis " + std::to_string(a) +
                 (dir < 0 ? " below" : " above");
        };
        Extent3 c = g.coords(b);
        const bool edge = dir < 0 ? c[a] == 0 : c[a] + 1 == B[a];
        std::optional<std::size_t> want;
        if (a < g.dims() && g.halo(a) > 0 && (!edge || g.periodic(a))) {
          c[a] = (c[a] + B[a] + static_cast<std::size_t>(dir)) % B[a];
          want = g.block_at(c);
        }
        const std::optional<std::size_t> got = g.neighbor(b, a, dir);
        FUZZ_CHECK(got == want, which());
        if (!got) continue;
        FUZZ_CHECK(g.neighbor(*got, a, -dir) == b, which() + " is not symmetric");
        // Adjacent: the same cells along the other axes, the next ones (wrapped) along `a`.
        const Box theirs = g.owned(*got);
        const auto n = static_cast<std::ptrdiff_t>(g.extent()[a]);
        const Box& low = dir > 0 ? mine : theirs;
        const Box& high = dir > 0 ? theirs : mine;
        FUZZ_CHECK(end(low, a) % n == high.lo[a], which() + " is not adjacent");
        for (std::size_t o = 0; o < 3; ++o)
          if (o != a)
            FUZZ_CHECK(mine.lo[o] == theirs.lo[o] && mine.size[o] == theirs.size[o], which() + " is not aligned");
      }
  }
}

// The buffer layout: rows of n_x + 2h_x cells padded to a multiple of row_align, the first owned
// cell of every row on a row_align boundary after lead(), index() x fastest from the first ghost.
void check_buffers(const Decomposition& g, const std::string& what) {
  const std::size_t align = g.row_align();
  const Extent3 h{g.halo(0), g.halo(1), g.halo(2)};
  FUZZ_CHECK(g.lead() < align && (g.lead() + h[0]) % align == 0, what + ": lead " + std::to_string(g.lead()));
  for (std::size_t b = 0; b < g.size(); ++b) {
    const auto which = [&] { return what + ": buffer of block " + std::to_string(b); };
    const Box o = g.owned(b);
    const Extent3 alloc = g.allocated(b);
    const std::size_t row = g.row_cells(b);
    FUZZ_CHECK(row == o.size[0] + 2 * h[0], which());
    FUZZ_CHECK(alloc[0] % align == 0 && alloc[0] >= row && alloc[0] < row + align,
               which() + ": pitch " + std::to_string(alloc[0]));
    FUZZ_CHECK(alloc[1] == o.size[1] + 2 * h[1] && alloc[2] == o.size[2] + 2 * h[2],
               which() + ": allocated " + text(alloc));
    FUZZ_CHECK(g.allocated_cells(b) == alloc[0] * alloc[1] * alloc[2], which());
    // The corners of the cells that hold values (owned and ghosts).
    Point lo{}, hi{};  // local coordinates, hi inclusive
    for (std::size_t a = 0; a < 3; ++a) {
      lo[a] = -static_cast<std::ptrdiff_t>(h[a]);
      hi[a] = static_cast<std::ptrdiff_t>(o.size[a] + h[a]) - 1;
    }
    for (int corner = 0; corner < 8; ++corner) {
      Point p{};
      for (std::size_t a = 0; a < 3; ++a) p[a] = ((corner >> a) & 1) != 0 ? hi[a] : lo[a];
      const std::size_t want =
          static_cast<std::size_t>(p[0] - lo[0]) +
          alloc[0] * (static_cast<std::size_t>(p[1] - lo[1]) + alloc[1] * static_cast<std::size_t>(p[2] - lo[2]));
      FUZZ_CHECK(g.index(b, p) == want, which() + ": index of a corner");
      FUZZ_CHECK((g.lead() + g.index(b, Point{0, p[1], p[2]})) % align == 0,
                 which() + ": a row's first owned cell is not aligned");
    }
  }
}

// Interior and boundary for every radius up to the depth: the owned box shrunk by the radius on
// each side with a neighbour (except along the axes exchanged in place), and the rest as at most
// six disjoint non-empty boxes: z slabs, then y slabs, then x slabs.
void check_regions(const Decomposition& g, const std::string& what) {
  for (std::size_t a = 0; a < 3; ++a) {
    bool in_place = true;
    for (std::size_t b = 0; b <= a; ++b) in_place = in_place && g.blocks()[b] == 1;
    FUZZ_CHECK(g.exchanged_in_place(a) == in_place, what + ": exchanged_in_place(" + std::to_string(a) + ")");
  }
  for (std::size_t b = 0; b < g.size(); ++b) {
    const Box o = g.owned(b);
    const Box whole{{0, 0, 0}, o.size};
    for (std::size_t r = 0; r <= g.depth(); ++r) {
      const auto which = [&] { return what + ": block " + std::to_string(b) + ", radius " + std::to_string(r); };
      const Box in = g.interior(b, r);
      Box want;
      bool shrunk_away = false;
      for (std::size_t a = 0; a < 3; ++a) {
        const bool later = !g.exchanged_in_place(a);
        const std::size_t low = later && g.neighbor(b, a, -1) ? r : 0;
        const std::size_t high = later && g.neighbor(b, a, +1) ? r : 0;
        want.lo[a] = static_cast<std::ptrdiff_t>(low);
        want.size[a] = o.size[a] > low + high ? o.size[a] - low - high : 0;
        shrunk_away = shrunk_away || want.size[a] == 0;
      }
      FUZZ_CHECK(shrunk_away ? in.empty() : in == want,
                 which() + ": interior " + text(in) + ", expected " + text(want));
      const std::vector<Box> shell = g.boundary(b, r);
      FUZZ_CHECK(shell.size() <= 6, which() + ": more than six boundary boxes");
      std::size_t cells = in.volume();
      int last_kind = 0;
      for (std::size_t i = 0; i < shell.size(); ++i) {
        const Box& s = shell[i];
        FUZZ_CHECK(!s.empty(), which() + ": an empty boundary box");
        FUZZ_CHECK(within(s, whole), which() + ": boundary box " + text(s) + " leaves the block");
        FUZZ_CHECK(in.empty() || !overlap(s, in), which() + ": boundary box " + text(s) + " overlaps the interior");
        for (std::size_t j = 0; j < i; ++j) FUZZ_CHECK(!overlap(s, shell[j]), which() + ": two boundary boxes overlap");
        cells += s.volume();
        if (in.empty()) continue;
        // Its kind: 1 a z slab (whole x-y planes), 2 a y slab (whole rows within the interior's
        // z range), 3 an x slab (within the interior's y and z ranges).
        const bool whole_rows = s.size[0] == o.size[0];
        const bool in_z = s.lo[2] >= in.lo[2] && end(s, 2) <= end(in, 2);
        const bool in_y = s.lo[1] >= in.lo[1] && end(s, 1) <= end(in, 1);
        const int kind = whole_rows && s.size[1] == o.size[1] && !in_z ? 1
                         : whole_rows && in_z && !in_y                 ? 2
                         : in_z && in_y                                ? 3
                                                                       : 0;
        FUZZ_CHECK(kind != 0 && kind >= last_kind, which() + ": boundary box " + std::to_string(i) + " (" + text(s) +
                                                       ") is not a z, y or x slab in that order");
        last_kind = kind;
      }
      FUZZ_CHECK(cells == o.volume(), which() + ": interior and boundary do not cover the owned cells once");
    }
  }
}

// The halo phases (libcush/grid/halo.hpp): one per axis along which some block has a neighbour,
// in axis order; one message per block, axis and side with a neighbour, from the sender's
// outermost owned layers on that side (with the earlier axes' ghost layers) into the receiver's
// ghosts that stand for the same cells (wrapped); within a phase no two messages write the same
// cell and none reads a cell another one writes.
void check_halo_phases(const Decomposition& g, const std::string& what) {
  const std::vector<cush::HaloPhase> phases = cush::halo_phases(g);
  const auto buffer_cells = [&](std::size_t b) {  // local coordinates of the cells that hold values
    Box box{{}, g.owned(b).size};
    for (std::size_t a = 0; a < 3; ++a) {
      box.lo[a] = -static_cast<std::ptrdiff_t>(g.halo(a));
      box.size[a] += 2 * g.halo(a);
    }
    return box;
  };
  std::size_t p = 0;
  for (std::size_t axis = 0; axis < 3; ++axis) {
    std::size_t expected = 0;
    for (std::size_t b = 0; b < g.size(); ++b)
      for (int dir : {-1, +1}) expected += g.neighbor(b, axis, dir) ? 1 : 0;
    if (expected == 0) continue;
    const auto which = [&] { return what + ": halo phase of axis " + std::to_string(axis); };
    FUZZ_CHECK(p < phases.size() && phases[p].axis == axis, which() + " missing or out of order");
    const std::vector<cush::HaloMessage>& messages = phases[p++].messages;
    FUZZ_CHECK(messages.size() == expected, which() + ": " + std::to_string(messages.size()) + " messages");
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const cush::HaloMessage& m = messages[i];
      const auto message = [&] {
        return which() + ", message " + std::to_string(i) + ": " + text(m.src) + " -> " + text(m.dst);
      };
      FUZZ_CHECK(m.axis == axis && (m.dir == -1 || m.dir == 1) && g.neighbor(m.from, axis, m.dir) == m.to, message());
      FUZZ_CHECK(m.src.size == m.dst.size && m.src.size[axis] == g.halo(axis), message());
      FUZZ_CHECK(within(m.src, buffer_cells(m.from)) && within(m.dst, buffer_cells(m.to)),
                 message() + " leaves a buffer");
      const Box from = g.owned(m.from), to = g.owned(m.to);
      const auto h = static_cast<std::ptrdiff_t>(g.halo(axis));
      FUZZ_CHECK(m.src.lo[axis] == (m.dir > 0 ? static_cast<std::ptrdiff_t>(from.size[axis]) - h : 0),
                 message() + ": not the outermost owned layers");
      FUZZ_CHECK(m.dst.lo[axis] == (m.dir > 0 ? -h : static_cast<std::ptrdiff_t>(to.size[axis])),
                 message() + ": not a ghost region");
      for (std::size_t a = 0; a < 3; ++a) {
        const auto n = static_cast<std::ptrdiff_t>(g.extent()[a]);
        const std::ptrdiff_t shift = (from.lo[a] + m.src.lo[a]) - (to.lo[a] + m.dst.lo[a]);
        FUZZ_CHECK(shift % n == 0, message() + ": the cells stand for other cells along axis " + std::to_string(a));
        if (a > axis)
          FUZZ_CHECK(m.src.lo[a] == 0 && m.src.size[a] == from.size[a],
                     message() + ": not the owned cells of a later axis");
      }
      for (std::size_t j = 0; j < i; ++j) {
        const cush::HaloMessage& o = messages[j];
        FUZZ_CHECK(o.to != m.to || !overlap(o.dst, m.dst),
                   message() + ": writes cells message " + std::to_string(j) + " writes");
        FUZZ_CHECK(o.to != m.from || !overlap(o.dst, m.src),
                   message() + ": reads cells message " + std::to_string(j) + " writes");
        FUZZ_CHECK(o.from != m.to || !overlap(o.src, m.dst),
                   message() + ": writes cells message " + std::to_string(j) + " reads");
      }
    }
  }
  FUZZ_CHECK(p == phases.size(), what + ": halo phases along axes without neighbours");
}

// Calls with bad arguments on block b (one block per input: an exception costs microseconds).
void check_bad_calls(const Decomposition& g, std::size_t b, const std::string& what) {
  FUZZ_CHECK(FUZZ_REJECTS(g.coords(g.size())), what + ": coords() of a block past the end");
  FUZZ_CHECK(FUZZ_REJECTS(g.owned(g.size())), what + ": owned() of a block past the end");
  FUZZ_CHECK(FUZZ_REJECTS(g.block_at(Extent3{0, g.blocks()[1], 0})), what + ": block_at() outside the process grid");
  FUZZ_CHECK(FUZZ_REJECTS(g.neighbor(b, 3, 1)), what + ": neighbor() along axis 3");
  FUZZ_CHECK(FUZZ_REJECTS(g.neighbor(b, 0, 0)), what + ": neighbor() in direction 0");
  FUZZ_CHECK(FUZZ_REJECTS(g.exchanged_in_place(3)), what + ": exchanged_in_place(3)");
  FUZZ_CHECK(FUZZ_REJECTS(g.interior(b, g.depth() + 1)), what + ": interior() with a radius beyond the depth");
  // The cells just outside those that hold values: before the first ghost, in the row padding
  // or past the last ghost.
  const Box o = g.owned(b);
  for (std::size_t a = 0; a < 3; ++a) {
    Point below{}, above{};
    below[a] = -static_cast<std::ptrdiff_t>(g.halo(a)) - 1;
    above[a] = static_cast<std::ptrdiff_t>(o.size[a] + g.halo(a));
    FUZZ_CHECK(FUZZ_REJECTS(g.index(b, below)),
               what + ": index() of a cell before block " + std::to_string(b) + "'s buffer");
    FUZZ_CHECK(FUZZ_REJECTS(g.index(b, above)),
               what + ": index() of a cell past block " + std::to_string(b) + "'s cells");
  }
}

void check_decomposition(cush_fuzz::Bytes& in) {
  const std::size_t bad_dims[] = {0, 4};
  const std::size_t dims = rarely(in) ? in.pick(bad_dims) : in.in<std::size_t>(1, 3);
  Extent3 extent{};
  GridOptions o;
  for (std::size_t a = 0; a < 3; ++a) {
    if (a < dims) {
      extent[a] = rarely(in) ? 0 : in.flag() ? in.in<std::size_t>(1, 8) : in.in<std::size_t>(1, 64);
      o.periodic[a] = in.flag();
    } else {
      const bool odd = rarely(in);  // a bad extent or periodicity beyond the grid's axes
      extent[a] = odd ? in.in<std::size_t>(0, 3) : 1;
      o.periodic[a] = odd && in.flag();
    }
    o.ghosts[a] = in.in<int>(0, 7) != 7;
  }
  o.halo = rarely(in) ? in.in<std::size_t>(0, 7) : in.in<std::size_t>(1, 3);
  const std::size_t bad_aligns[] = {0, 4096, 4097};
  const std::size_t aligns[] = {1, 2, 4, 16};
  o.row_align = rarely(in) ? in.pick(bad_aligns) : in.flag() ? in.pick(aligns) : in.in<std::size_t>(1, 40);
  std::size_t count = rarely(in) ? 0 : in.in<std::size_t>(1, 16);
  const int how = in.in<int>(0, 7);
  if (how >= 4 && how < 7) {  // given, with `count` blocks, at most 16
    count = 1;
    for (std::size_t a = 0; a < 3; ++a) {
      o.blocks[a] = a < dims ? in.in<std::size_t>(1, 16 / count) : 1;
      count *= o.blocks[a];
    }
  } else if (how == 7) {  // given, anything: zeros, splits beyond the axes, a wrong product
    for (std::size_t a = 0; a < 3; ++a) o.blocks[a] = in.in<std::size_t>(0, 4);
  }  // else chosen by choose_process_grid()
  const std::string what = "Decomposition({" + text(extent) + "}, " + std::to_string(dims) + ", " +
                           std::to_string(count) + ", blocks {" + text(o.blocks) + "}, halo " + std::to_string(o.halo) +
                           ", periodic {" + text(o.periodic) + "}, ghosts {" + text(o.ghosts) + "}, row_align " +
                           std::to_string(o.row_align) + ")";

  Extent3 possible{};
  const std::string why = refusal(extent, dims, count, o, possible);
  std::optional<Decomposition> g;
  const bool refused = FUZZ_REJECTS(g.emplace(extent, dims, count, o));
  FUZZ_CHECK(refused == !why.empty(), what + (refused ? " refused" : " accepted, though " + why));
  if (refused) return;

  FUZZ_CHECK(g->extent() == extent && g->dims() == dims && g->size() == count && g->depth() == o.halo &&
                 g->row_align() == o.row_align,
             what);
  for (std::size_t a = 0; a < 3; ++a) {
    FUZZ_CHECK(g->periodic(a) == o.periodic[a], what);
    FUZZ_CHECK(g->halo(a) == (a < dims && o.ghosts[a] ? o.halo : 0), what + ": halo(" + std::to_string(a) + ")");
  }
  const Extent3& B = g->blocks();
  if (o.blocks != Extent3{0, 0, 0}) {
    FUZZ_CHECK(B == o.blocks, what + ": process grid " + text(B) + " instead of the given one");
  } else {
    FUZZ_CHECK(B[0] * B[1] * B[2] == count && fits(B, extent, dims, o.halo, o.ghosts) &&
                   score(B, extent).ties(score(possible, extent)),
               what + ": chose " + text(B) + ", not a best fitting process grid like " + text(possible));
  }
  check_blocks(*g, what);
  check_neighbors(*g, what);
  check_buffers(*g, what);
  check_regions(*g, what);
  check_halo_phases(*g, what);
  check_bad_calls(*g, in.in<std::size_t>(0, g->size() - 1), what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cush_fuzz::Bytes in(data, size);
  if (in.in<int>(0, 3) == 0) {
    check_choose_process_grid(in);
  } else {
    check_decomposition(in);
  }
  return 0;
}
