// Fuzz harness of the halo exchange's program and schedule (libcush/grid/exchange_program.hpp,
// libcush/grid/exchange_schedule.hpp), pure host code.
//
// Decodes: a small grid (1-3 axes of up to 64, 20 or 8 cells, 1-16 blocks chosen or given,
// depth 1-4, periodicity per axis, ghost layers along every axis, one or some, a row alignment),
// a field of 1-3 components and what the exchange moves (all, or random fills and write-backs per
// axis and direction, now and then a bad one), which blocks may pack into which peers, the
// pipelining options, exchange() or exchange_start()/finish(), and a seed for the order of
// execution.
//
// Checks, once the grid is accepted, that check_components() refuses a selection with
// InvalidArgument exactly as documented, and else:
// - The program, run step by step on host arrays where an owned cell holds a value naming its
//   global cell, component and exchange, and a ghost a value naming its block and position: every
//   ghost of a filled component is written exactly once, with the value of the cell it stands for
//   (for edges and corners through the earlier phases' ghosts, so beyond a non-periodic edge a
//   neighbour's boundary ghost; with every component filled both ways along every axis, the
//   value of the wrapped global cell); a component written back lands exactly once on each owned
//   cell its neighbour's ghosts stand for; nothing else changes. Steps name buffers of the
//   declared sizes and stay in them, a step marked contiguous is one run of the same cells,
//   sends run on the sender's stream, receives on the receiver's, a kernel stores into a peer
//   only where allowed, and the links are the pairs of blocks that send to each other.
// - The schedule, with the user's work around two exchanges in a row (every cell written before;
//   between start and finish, the interior for a radius of the halo depth read, grown by that
//   radius, less the owned layers a write-back overwrites; everything read after), under CUDA's
//   stream and event rules (tests/support/simulate_streams.hpp): steps on their block's streams,
//   records on their event's device, unpack streams only where declared, no exchange stream in
//   exchange(), no step in exchange_finish(); every two accesses to the same cells, one a write,
//   ordered; and, run in a random order that the events allow, every read finds the values and
//   write counts of the run above.
//
// tests/grid/exchange_model.hpp models the same for one component; this harness needs the
// components apart (a buffer per component) and the write-backs, so it has its own executor on
// the same stream model.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cush/grid.hpp"
#include "cush/halo_components.hpp"
#include "fuzz.hpp"
#include "grid/exchange_program.hpp"
#include "grid/exchange_schedule.hpp"
#include "support/simulate_streams.hpp"

namespace {

using cush::Box;
using cush::Decomposition;
using cush::Extent3;
using cush::GridOptions;
using cush::HaloComponents;
using cush::detail::BufferRef;
using cush::detail::ExchangeProgram;
using cush::detail::ExchangeSchedule;
using cush::detail::ExchangeStep;
using cush::detail::Instruction;
using cush::detail::ScheduleOptions;
using cush::detail::ScheduleStream;
using cush::detail::StepSide;
using cush_test::Access;
using cush_test::Cells3;
using Point = std::array<std::ptrdiff_t, 3>;
using Value = std::int64_t;

constexpr std::size_t exchanges = 2;  // in a row, so the second is checked against the first's readers
constexpr std::size_t every_component = SIZE_MAX;

std::string text(const Extent3& e) {
  return std::to_string(e[0]) + " " + std::to_string(e[1]) + " " + std::to_string(e[2]);
}

// True for about one input in 16 (false once the bytes are used up).
bool rarely(cush_fuzz::Bytes& in) { return in.in<int>(0, 15) == 15; }

std::uint32_t mask_of(const std::vector<std::size_t>& components) {
  std::uint32_t m = 0;
  for (std::size_t c : components) m |= c < 32 ? std::uint32_t{1} << c : 0;
  return m;
}

// Why the documentation refuses `which` for a field of `components` components on `g` (empty:
// it accepts it): a component out of range, one filled and written back along one axis, a
// write-back on a grid with ghost layers along several axes, or one written back both ways into
// blocks thinner than twice the halo.
std::string selection_refusal(const Decomposition& g, const HaloComponents& which, std::size_t components) {
  std::size_t ghost_axes = 0;
  for (std::size_t a = 0; a < 3; ++a) ghost_axes += g.halo(a) > 0 ? 1 : 0;
  for (std::size_t a = 0; a < 3; ++a) {
    std::vector<std::size_t> filled, back;
    for (int dir : {-1, 1}) {
      const auto& f = which.filled(a, dir);
      const auto& b = which.written_back(a, dir);
      filled.insert(filled.end(), f.begin(), f.end());
      back.insert(back.end(), b.begin(), b.end());
    }
    for (std::size_t c : filled)
      if (c >= components) return "a component out of range";
    for (std::size_t c : back) {
      if (c >= components) return "a component out of range";
      if (std::find(filled.begin(), filled.end(), c) != filled.end())
        return "a component filled and written back along one axis";
      if (ghost_axes > 1) return "a write-back on a grid with ghost layers along several axes";
    }
    std::size_t thinnest = g.extent()[a];
    for (std::size_t k = 0; k < g.size(); ++k) thinnest = std::min(thinnest, g.owned(k).size[a]);
    for (std::size_t c : which.written_back(a, +1)) {
      const auto& down = which.written_back(a, -1);
      if (std::find(down.begin(), down.end(), c) != down.end() && thinnest < 2 * g.halo(a))
        return "a component written back both ways into blocks thinner than twice the halo";
    }
  }
  return {};
}

// The exchange of one decoded case: its grid and program, the host memory they name, and the
// values and write counts the program must leave in the blocks.
class Exchange {
 public:
  Exchange(const Decomposition& grid, std::size_t components, const HaloComponents& which,
           const ExchangeProgram& program, std::string what)
      : g_(grid), c_(components), program_(program), what_(std::move(what)), p_(grid.size()), m_(program.ends.size()) {
    neighbor_.resize(p_);
    for (std::size_t k = 0; k < p_; ++k) {
      owned_.push_back(grid.owned(k));
      alloc_.push_back(grid.allocated(k));
      width_.push_back(grid.row_cells(k));
      cells_ = std::max(cells_, grid.allocated_cells(k));
      for (std::size_t a = 0; a < 3; ++a)
        for (int side = 0; side < 2; ++side) neighbor_[k][a][side] = grid.neighbor(k, a, side == 0 ? -1 : +1);
    }
    for (std::size_t a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        fill_[a][side] = mask_of(which.filled(a, side == 0 ? -1 : +1));
        back_[a][side] = mask_of(which.written_back(a, side == 0 ? -1 : +1));
      }
  }

  [[nodiscard]] const std::string& what() const { return what_; }
  [[nodiscard]] std::size_t blocks() const { return p_; }
  [[nodiscard]] std::size_t components() const { return c_; }
  [[nodiscard]] std::size_t buffers() const { return p_ * c_ + 2 * m_; }
  [[nodiscard]] const Extent3& alloc(std::size_t k) const { return alloc_[k]; }
  [[nodiscard]] std::size_t width(std::size_t k) const { return width_[k]; }

  // Buffer ids: component c of block k is k * C + c, then the send and the receive buffers of
  // the messages (so the stream model tells components apart).
  [[nodiscard]] std::size_t id(const BufferRef& b) const {
    switch (b.kind) {
      case BufferRef::Kind::send:
        return p_ * c_ + b.index;
      case BufferRef::Kind::recv:
        return p_ * c_ + m_ + b.index;
      case BufferRef::Kind::block:
        break;
    }
    return b.index * c_ + b.component;
  }
  [[nodiscard]] std::string name(std::size_t id) const {
    if (id < p_ * c_) return "block " + std::to_string(id / c_) + " component " + std::to_string(id % c_);
    if (id < p_ * c_ + m_) return "send buffer " + std::to_string(id - p_ * c_);
    return "receive buffer " + std::to_string(id - p_ * c_ - m_);
  }
  // The block whose device holds a buffer.
  [[nodiscard]] std::size_t home(const BufferRef& b) const {
    if (b.kind == BufferRef::Kind::send) return program_.ends[b.index].first;
    if (b.kind == BufferRef::Kind::recv) return program_.ends[b.index].second;
    return b.index;
  }

  // Empty host memory: every block component and staging buffer, at its declared size.
  [[nodiscard]] std::vector<std::vector<Value>> memory() const {
    std::vector<std::vector<Value>> mem(buffers());
    for (std::size_t k = 0; k < p_; ++k)
      for (std::size_t c = 0; c < c_; ++c) mem[k * c_ + c].assign(alloc_[k][0] * alloc_[k][1] * alloc_[k][2], 0);
    for (std::size_t m = 0; m < m_; ++m) {
      mem[p_ * c_ + m].assign(program_.send_cells[m], 0);
      mem[p_ * c_ + m_ + m].assign(program_.recv_cells[m], 0);
    }
    return mem;
  }

  // Calls f(local coordinates, offset) for the cells of block k's buffer that hold values
  // (owned and ghosts, not the row padding) within buffer box [lo, lo + size).
  template <class F>
  void cells(std::size_t k, const Extent3& lo, const Extent3& size, F&& f) const {
    const Extent3& al = alloc_[k];
    for (std::size_t z = lo[2]; z < lo[2] + size[2]; ++z)
      for (std::size_t y = lo[1]; y < lo[1] + size[1]; ++y)
        for (std::size_t x = lo[0]; x < lo[0] + size[0]; ++x)
          f(Point{static_cast<std::ptrdiff_t>(x) - h(0), static_cast<std::ptrdiff_t>(y) - h(1),
                  static_cast<std::ptrdiff_t>(z) - h(2)},
            x + al[0] * (y + al[1] * z));
  }
  template <class F>
  void cells(std::size_t k, F&& f) const {
    cells(k, Extent3{0, 0, 0}, Extent3{width_[k], alloc_[k][1], alloc_[k][2]}, f);
  }

  // What the user's kernel of exchange x writes into each cell before it: an owned cell's value
  // names its global cell and component (> 0), a ghost's its block, position and component (< 0).
  [[nodiscard]] Value initial(std::size_t k, std::size_t c, const Point& p, std::size_t x) const {
    const Extent3& e = g_.extent();
    if (owned(k, p)) {
      const Box& o = owned_[k];
      const auto gx = static_cast<std::size_t>(o.lo[0] + p[0]), gy = static_cast<std::size_t>(o.lo[1] + p[1]),
                 gz = static_cast<std::size_t>(o.lo[2] + p[2]);
      return global_value(gx + e[0] * (gy + e[1] * gz), c, x);
    }
    const auto at = [&](std::size_t a) { return static_cast<std::size_t>(p[a] + h(a)); };  // buffer coordinates
    const std::size_t offset = at(0) + alloc_[k][0] * (at(1) + alloc_[k][1] * at(2));
    return -static_cast<Value>(1 + offset + cells_ * (k + p_ * (c + c_ * x)));
  }
  [[nodiscard]] Value global_value(std::size_t global, std::size_t c, std::size_t x) const {
    const Extent3& e = g_.extent();
    return static_cast<Value>(1 + global + e[0] * e[1] * e[2] * (c + c_ * x));
  }

  // The value cell p of component c of block k holds after exchange x, and how many steps wrote it.
  [[nodiscard]] std::pair<Value, int> expected(std::size_t k, std::size_t c, const Point& p, std::size_t x) const {
    const std::uint32_t bit = std::uint32_t{1} << c;
    if (owned(k, p)) {
      // Written back: the lowest owned layers from the low neighbour's high ghosts (travelling
      // +1), the highest from the high neighbour's low ghosts (travelling -1).
      for (std::size_t a = 0; a < 3; ++a) {
        const auto n = static_cast<std::ptrdiff_t>(owned_[k].size[a]);
        const std::optional<std::size_t>& low = neighbor_[k][a][0];
        const std::optional<std::size_t>& high = neighbor_[k][a][1];
        Point q = p;
        if (p[a] < h(a) && low && (back_[a][1] & bit) != 0) {
          q[a] = static_cast<std::ptrdiff_t>(owned_[*low].size[a]) + p[a];
          return {initial(*low, c, q, x), 1};
        }
        if (p[a] >= n - h(a) && high && (back_[a][0] & bit) != 0) {
          q[a] = p[a] - n;
          return {initial(*high, c, q, x), 1};
        }
      }
      return {initial(k, c, p, x), 0};
    }
    // A ghost is filled in the phase of the last axis along which it lies outside the owned
    // cells, from the neighbour on that side, with what that neighbour's cell holds by then.
    std::size_t a = 2;
    while (p[a] >= 0 && p[a] < static_cast<std::ptrdiff_t>(owned_[k].size[a])) --a;
    const bool below = p[a] < 0;
    const std::optional<std::size_t>& from = neighbor_[k][a][below ? 0 : 1];
    if (!from || (fill_[a][below ? 1 : 0] & bit) == 0) return {initial(k, c, p, x), 0};
    Point q = p;
    q[a] = below ? p[a] + static_cast<std::ptrdiff_t>(owned_[*from].size[a])
                 : p[a] - static_cast<std::ptrdiff_t>(owned_[k].size[a]);
    return {expected(*from, c, q, x).first, 1};
  }

  // The global cell a cell of block k stands for, wrapped across periodic axes; none beyond a
  // non-periodic edge.
  [[nodiscard]] std::optional<std::size_t> global(std::size_t k, const Point& p) const {
    const Extent3& e = g_.extent();
    std::size_t index = 0;
    for (std::size_t a = 3; a-- > 0;) {
      const auto n = static_cast<std::ptrdiff_t>(e[a]);
      std::ptrdiff_t v = owned_[k].lo[a] + p[a];
      if (v < 0 || v >= n) {
        if (!g_.periodic(a)) return std::nullopt;
        v = (v % n + n) % n;
      }
      index = index * e[a] + static_cast<std::size_t>(v);
    }
    return index;
  }
  // True if component c is written back along axis a in direction dir.
  [[nodiscard]] bool written_back(std::size_t a, int dir, std::size_t c) const {
    return ((back_[a][dir > 0 ? 1 : 0] >> c) & 1U) != 0;
  }
  // True if component c is filled both ways along every axis that keeps ghosts.
  [[nodiscard]] bool filled_everywhere(std::size_t c) const {
    for (std::size_t a = 0; a < 3; ++a)
      if (g_.halo(a) > 0 && ((fill_[a][0] >> c) & (fill_[a][1] >> c) & 1U) == 0) return false;
    return true;
  }

  // Runs step s on `mem`, counting the writes into the blocks' cells: a box copy, or for a
  // contiguous step one linear copy of box_span() cells (the row padding between whole rows
  // included). check_step() has vetted it.
  void run(const ExchangeStep& s, std::vector<std::vector<Value>>& mem,
           std::vector<std::vector<std::uint8_t>>& writes) const {
    std::vector<Value>& src = mem[id(s.src.buffer)];
    std::vector<Value>& dst = mem[id(s.dst.buffer)];
    std::vector<std::uint8_t>* counts =
        s.dst.buffer.kind == BufferRef::Kind::block ? &writes[id(s.dst.buffer)] : nullptr;
    const auto offset = [](const StepSide& side, std::size_t x, std::size_t y, std::size_t z) {
      return (side.lo[0] + x) + side.alloc[0] * ((side.lo[1] + y) + side.alloc[1] * (side.lo[2] + z));
    };
    if (s.contiguous) {
      const std::size_t n = cush::detail::box_span(s.src.alloc, s.size);
      const std::size_t to = offset(s.dst, 0, 0, 0);
      std::memmove(dst.data() + to, src.data() + offset(s.src, 0, 0, 0), n * sizeof(Value));
      if (counts != nullptr)
        for (std::size_t i = to; i < to + n; ++i)
          if (i % s.dst.alloc[0] < s.dst.width) ++(*counts)[i];  // a cell, not row padding
      return;
    }
    for (std::size_t z = 0; z < s.size[2]; ++z)
      for (std::size_t y = 0; y < s.size[1]; ++y)
        for (std::size_t x = 0; x < s.size[0]; ++x) {
          const std::size_t to = offset(s.dst, x, y, z);
          dst[to] = src[offset(s.src, x, y, z)];
          if (counts != nullptr) ++(*counts)[to];
        }
  }

  // A step's buffers exist with the declared shapes, its boxes lie in their cells (not the
  // padding), and a contiguous one is one run of exactly those cells on both sides.
  template <class Where>
  void check_step(const ExchangeStep& s, Where&& where) const {
    const auto fail = [&](const char* why) { return where() + ": " + why; };
    for (const StepSide* side : {&s.src, &s.dst}) {
      const BufferRef& b = side->buffer;
      const bool staging = b.kind != BufferRef::Kind::block;
      FUZZ_CHECK(staging ? b.index < m_ : b.index < p_ && b.component < c_, fail("no such buffer"));
      const std::size_t cells = side->alloc[0] * side->alloc[1] * side->alloc[2];
      if (staging) {
        const std::size_t declared =
            (b.kind == BufferRef::Kind::send ? program_.send_cells : program_.recv_cells)[b.index];
        FUZZ_CHECK(cells == declared && side->width == side->alloc[0],
                   fail("a staging buffer of another shape than declared"));
      } else {
        FUZZ_CHECK(side->alloc == alloc_[b.index] && side->width == width_[b.index],
                   fail("a block buffer of another shape"));
      }
      FUZZ_CHECK(side->lo[0] + s.size[0] <= side->width && side->lo[1] + s.size[1] <= side->alloc[1] &&
                     side->lo[2] + s.size[2] <= side->alloc[2],
                 fail("a box outside its buffer's cells"));
    }
    const bool same = id(s.src.buffer) == id(s.dst.buffer);
    const auto first = [](const StepSide& side) {
      return side.lo[0] + side.alloc[0] * (side.lo[1] + side.alloc[1] * side.lo[2]);
    };
    if (!s.contiguous) {
      bool apart = false;
      for (std::size_t a = 0; a < 3; ++a)
        apart = apart || s.src.lo[a] + s.size[a] <= s.dst.lo[a] || s.dst.lo[a] + s.size[a] <= s.src.lo[a];
      FUZZ_CHECK(!same || apart, fail("a box copy onto itself"));
      return;
    }
    const std::size_t n = cush::detail::box_span(s.src.alloc, s.size);
    FUZZ_CHECK(n == cush::detail::box_span(s.dst.alloc, s.size), fail("a contiguous step with runs of two lengths"));
    const std::size_t from = first(s.src), to = first(s.dst);
    FUZZ_CHECK(!same || from + n <= to || to + n <= from, fail("a contiguous step onto itself"));
    // Cell i of the run: real cells of the destination must be the box's, and the source's
    // cell at the same place in the run the matching one.
    std::size_t real = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Extent3& da = s.dst.alloc;
      const Extent3& sa = s.src.alloc;
      const Extent3 d{(to + i) % da[0], (to + i) / da[0] % da[1], (to + i) / (da[0] * da[1])};
      if (d[0] >= s.dst.width) continue;  // padding
      ++real;
      const Extent3 sp{(from + i) % sa[0], (from + i) / sa[0] % sa[1], (from + i) / (sa[0] * sa[1])};
      bool matches = true;
      for (std::size_t a = 0; a < 3; ++a)
        matches = matches && d[a] >= s.dst.lo[a] && d[a] < s.dst.lo[a] + s.size[a] &&
                  sp[a] == s.src.lo[a] + (d[a] - s.dst.lo[a]);
      FUZZ_CHECK(matches, fail("a contiguous step's run covers other cells than its box"));
    }
    FUZZ_CHECK(real == s.size[0] * s.size[1] * s.size[2], fail("a contiguous step's run misses cells of its box"));
  }

  // Compares block k's cells within buffer box [lo, lo + size) of component `only` (all:
  // every_component) with the values (and, with `counts`, the write counts) exchange x must
  // leave there.
  void compare(std::size_t k, const std::vector<std::vector<Value>>& mem,
               const std::vector<std::vector<std::uint8_t>>* counts, std::size_t x, const Extent3& lo,
               const Extent3& size, const std::string& who, std::size_t only) const {
    for (std::size_t c = 0; c < c_; ++c)
      if (only == every_component || c == only)
        cells(k, lo, size, [&](const Point& p, std::size_t at) {
          const auto [want, writes] = expected(k, c, p, x);
          const auto where = [&] {
            return what_ + ": " + who + ": block " + std::to_string(k) + " component " + std::to_string(c) +
                   " local cell (" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ", " + std::to_string(p[2]) +
                   ")";
          };
          FUZZ_CHECK(mem[k * c_ + c][at] == want,
                     where() + " holds " + std::to_string(mem[k * c_ + c][at]) + ", expected " + std::to_string(want));
          if (counts != nullptr)
            FUZZ_CHECK((*counts)[k * c_ + c][at] == writes, where() + " written " +
                                                                std::to_string((*counts)[k * c_ + c][at]) +
                                                                " times, expected " + std::to_string(writes));
        });
  }

 private:
  [[nodiscard]] std::ptrdiff_t h(std::size_t a) const { return static_cast<std::ptrdiff_t>(g_.halo(a)); }
  [[nodiscard]] bool owned(std::size_t k, const Point& p) const {
    for (std::size_t a = 0; a < 3; ++a)
      if (p[a] < 0 || p[a] >= static_cast<std::ptrdiff_t>(owned_[k].size[a])) return false;
    return true;
  }

  const Decomposition& g_;
  std::size_t c_;
  const ExchangeProgram& program_;
  std::string what_;
  std::size_t p_, m_;
  std::size_t cells_ = 0;  // of the largest block buffer
  std::vector<Box> owned_;
  std::vector<Extent3> alloc_;
  std::vector<std::size_t> width_;
  using Sides = std::array<std::optional<std::size_t>, 2>;       // the neighbours below and above
  std::vector<std::array<Sides, 3>> neighbor_;                   // [block][axis]
  std::array<std::array<std::uint32_t, 2>, 3> fill_{}, back_{};  // component masks [axis][dir > 0]
};

// The harness's own model: with a component filled both ways along every axis, every ghost that
// stands for a cell of the (wrapped) grid holds that cell's value.
void check_model(const Exchange& ex, const Decomposition& g) {
  for (std::size_t k = 0; k < g.size(); ++k)
    for (std::size_t c = 0; c < ex.components(); ++c) {
      if (!ex.filled_everywhere(c)) continue;
      ex.cells(k, [&](const Point& p, std::size_t) {
        if (const std::optional<std::size_t> cell = ex.global(k, p))
          FUZZ_CHECK(ex.expected(k, c, p, 0).first == ex.global_value(*cell, c, 0),
                     ex.what() + ": the harness's model");
      });
    }
}

// The program's shape and its run in program order (phase by phase, sends then receives).
void check_program(const Exchange& ex, const Decomposition& g, const HaloComponents& which,
                   const ExchangeProgram& program, const cush::detail::PeerStores& peers) {
  const std::string& what = ex.what();
  const std::size_t m = program.ends.size();
  FUZZ_CHECK(program.send_cells.size() == m && program.recv_cells.size() == m, what + ": staging sizes per message");
  // One message per block, axis and side with a neighbour, per component filled that way or
  // written back the other way.
  std::size_t messages = 0;
  for (std::size_t a = 0; a < g.dims(); ++a)
    for (std::size_t k = 0; k < g.size(); ++k)
      for (int dir : {-1, 1})
        if (g.neighbor(k, a, dir)) messages += which.filled(a, dir).size() + which.written_back(a, -dir).size();
  FUZZ_CHECK(m == messages, what + ": " + std::to_string(m) + " messages, expected " + std::to_string(messages));

  std::vector<std::vector<Value>> mem = ex.memory();
  std::vector<std::vector<std::uint8_t>> writes(ex.blocks() * ex.components());
  for (std::size_t k = 0; k < ex.blocks(); ++k)
    for (std::size_t c = 0; c < ex.components(); ++c) {
      writes[k * ex.components() + c].assign(mem[k * ex.components() + c].size(), 0);
      ex.cells(k, [&](const Point& p, std::size_t at) { mem[k * ex.components() + c][at] = ex.initial(k, c, p, 0); });
    }
  std::size_t last_axis = 0;
  for (std::size_t ph = 0; ph < program.phases.size(); ++ph) {
    const cush::detail::ExchangePhase& phase = program.phases[ph];
    const auto where = [&](const char* list, std::size_t i) {
      return [&, list, i] {
        return what + ": phase " + std::to_string(ph) + " (axis " + std::to_string(phase.axis) + ") " + list + " " +
               std::to_string(i);
      };
    };
    FUZZ_CHECK(
        phase.axis < g.dims() && g.halo(phase.axis) > 0 && (ph == 0 || phase.axis > last_axis) && !phase.sends.empty(),
        what + ": phase " + std::to_string(ph) + " along axis " + std::to_string(phase.axis));
    last_axis = phase.axis;
    std::vector<std::pair<std::size_t, std::size_t>> pairs;  // (sender, receiver) of the steps into another block
    for (std::size_t i = 0; i < phase.sends.size(); ++i) {
      const ExchangeStep& s = phase.sends[i];
      ex.check_step(s, where("send", i));
      const std::size_t written = ex.home(s.dst.buffer);
      // On the sender's stream: it reads the sender's memory and fills the sender's staging buffers.
      FUZZ_CHECK(ex.home(s.src.buffer) == s.stream, where("send", i)() + " reads another block's memory");
      FUZZ_CHECK(s.dst.buffer.kind != BufferRef::Kind::recv || program.ends[s.dst.buffer.index].first == s.stream,
                 where("send", i)() + " writes the receive buffer of another sender's message");
      if (written == s.stream) continue;
      // A kernel storing into a peer: only where allowed, from the sender's block itself.
      if (!s.contiguous)
        FUZZ_CHECK(peers && peers(s.stream, written) && s.src.buffer.kind == BufferRef::Kind::block,
                   where("send", i)() + " is a kernel storing into a peer it may not");
      if (std::find(pairs.begin(), pairs.end(), std::pair{s.stream, written}) == pairs.end())
        pairs.emplace_back(s.stream, written);
    }
    for (std::size_t i = 0; i < phase.receives.size(); ++i) {
      const ExchangeStep& s = phase.receives[i];
      ex.check_step(s, where("receive", i));
      FUZZ_CHECK(s.dst.buffer.kind == BufferRef::Kind::block && s.dst.buffer.index == s.stream &&
                     s.src.buffer.kind == BufferRef::Kind::recv && ex.home(s.src.buffer) == s.stream,
                 where("receive", i)() + " is not an unpack of the receiver's receive buffer on its stream");
    }
    std::vector<std::pair<std::size_t, std::size_t>> links = phase.links;
    std::sort(links.begin(), links.end());
    std::sort(pairs.begin(), pairs.end());
    FUZZ_CHECK(links == pairs,
               what + ": phase " + std::to_string(ph) + "'s links are not the pairs of blocks that send");
    for (const ExchangeStep& s : phase.sends) ex.run(s, mem, writes);
    for (const ExchangeStep& s : phase.receives) ex.run(s, mem, writes);
  }
  for (std::size_t k = 0; k < ex.blocks(); ++k)
    ex.compare(k, mem, &writes, 0, Extent3{0, 0, 0}, Extent3{ex.width(k), ex.alloc(k)[1], ex.alloc(k)[2]},
               "the program's run", every_component);
}

// The schedule with the user's work around two exchanges, on the stream model.
void check_schedule(const Exchange& ex, const Decomposition& g, const ExchangeSchedule& schedule,
                    const ScheduleOptions& options, bool whole, std::uint64_t seed) {
  using Kind = ScheduleStream::Kind;
  const std::string& what = ex.what();
  const std::size_t p = ex.blocks(), cs = ex.components();
  for (std::size_t n : schedule.pipelined_slabs)
    FUZZ_CHECK(n >= 2 && n <= options.max_chunks, what + ": a face pipelined in " + std::to_string(n) + " slabs");
  bool unpacks = false;
  for (const auto* list : {&schedule.start, &schedule.finish, &schedule.whole})
    for (const Instruction& in : *list) unpacks = unpacks || in.stream.kind == Kind::unpack;
  FUZZ_CHECK(unpacks == schedule.unpack_streams,
             what + ": unpack_streams does not say whether unpack streams are used");
  for (const Instruction& in : schedule.finish)
    FUZZ_CHECK(in.op != Instruction::Op::step, what + ": a step in exchange_finish()");

  // What each operation of the model does on the host.
  struct Action {
    enum class Kind { none, step, write, read_interior, read_all } kind = Kind::none;
    const ExchangeStep* step = nullptr;
    std::size_t block = 0, exchange = 0;
    Extent3 lo{}, size{};  // write, reads: buffer coordinates
    std::size_t component = every_component;
  };
  cush_test::StreamModel model;
  std::vector<Action> actions;
  const auto stream_id = [p](const ScheduleStream& s) {
    return (s.kind == Kind::block ? 0 : s.kind == Kind::exchange ? 1 : 2) * p + s.block;
  };
  const auto user = [&](std::size_t k, Action a, bool write, const std::string& label) {
    std::vector<Access> accesses;
    for (std::size_t c = 0; c < cs; ++c)
      if (a.component == every_component || c == a.component)
        accesses.push_back(Access{k * cs + c, a.lo, a.size, write});
    model.work(k, std::move(accesses), label + " (exchange " + std::to_string(a.exchange) + ")");
    actions.push_back(a);
  };
  const auto enqueue = [&](const std::vector<Instruction>& list, const char* call, std::size_t x) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Instruction& in = list[i];
      const auto where = [&] {
        return what + ": " + call + " instruction " + std::to_string(i) + " (exchange " + std::to_string(x) + ")";
      };
      FUZZ_CHECK(in.stream.block < p, where() + " runs on the stream of no block");
      FUZZ_CHECK(in.stream.kind != Kind::unpack || schedule.unpack_streams,
                 where() + " uses an undeclared unpack stream");
      FUZZ_CHECK(!whole || in.stream.kind != Kind::exchange, where() + ": exchange() uses an exchange stream");
      FUZZ_CHECK(!in.throttled || in.op == Instruction::Op::step, where() + " throttles what is not a step");
      const std::size_t on = stream_id(in.stream);
      if (in.op == Instruction::Op::step) {
        const ExchangeStep& s = in.step;
        FUZZ_CHECK(s.stream == in.stream.block,
                   where() + ": a step of block " + std::to_string(s.stream) + " on another's stream");
        ex.check_step(s, where);
        std::vector<Access> accesses;
        for (const StepSide* side : {&s.src, &s.dst}) {
          const bool write = side == &s.dst;
          if (!s.contiguous) {
            accesses.push_back(Access{ex.id(side->buffer), side->lo, s.size, write});
            continue;
          }
          const std::size_t first = side->lo[0] + side->alloc[0] * (side->lo[1] + side->alloc[1] * side->lo[2]);
          for (const auto& [lo, size] :
               cush_test::run_boxes(side->alloc, first, cush::detail::box_span(side->alloc, s.size)))
            accesses.push_back(Access{ex.id(side->buffer), lo, size, write});
        }
        model.work(on, std::move(accesses),
                   std::string(call) + " instruction " + std::to_string(i) + " (exchange " + std::to_string(x) + ")");
        actions.push_back(Action{Action::Kind::step, &s, 0, x, {}, {}});
        continue;
      }
      FUZZ_CHECK(in.event < schedule.events.size(), where() + " names no event");
      if (in.op == Instruction::Op::record) {
        FUZZ_CHECK(schedule.events[in.event].block == in.stream.block, where() + " records an event of another device");
        model.record(on, in.event, std::string(call) + " record " + std::to_string(i));
      } else {
        model.wait(on, in.event, std::string(call) + " wait " + std::to_string(i));
      }
      actions.push_back(Action{});
    }
  };
  for (std::size_t x = 0; x < exchanges; ++x) {
    for (std::size_t k = 0; k < p; ++k) {
      const Extent3 all{ex.width(k), ex.alloc(k)[1], ex.alloc(k)[2]};
      user(k, Action{Action::Kind::write, nullptr, k, x, {0, 0, 0}, all}, true,
           "user kernel writes block " + std::to_string(k));
    }
    if (whole) {
      enqueue(schedule.whole, "exchange()", x);
    } else {
      enqueue(schedule.start, "exchange_start()", x);
      for (std::size_t k = 0; k < p; ++k) {
        const Box in = g.interior(k, g.depth());
        if (in.empty()) continue;
        for (std::size_t c = 0; c < cs; ++c) {
          Action a{Action::Kind::read_interior, nullptr, k, x, {}, {}, c};
          for (std::size_t d = 0; d < 3; ++d) {
            const std::size_t h = g.halo(d);
            a.lo[d] = static_cast<std::size_t>(in.lo[d]);  // local in.lo - halo is buffer position in.lo
            a.size[d] = in.size[d] + 2 * h;
            if (g.exchanged_in_place(d)) continue;
            // Left alone (Field::exchange_start(which)): the owned layers a write-back overwrites.
            if (g.neighbor(k, d, -1) && ex.written_back(d, +1, c)) {
              a.lo[d] += h;
              a.size[d] -= h;
            }
            if (g.neighbor(k, d, +1) && ex.written_back(d, -1, c)) a.size[d] -= h;
          }
          user(k, a, false,
               "user kernel reads component " + std::to_string(c) + " of the interior of block " + std::to_string(k) +
                   " grown by the depth");
        }
      }
      enqueue(schedule.finish, "exchange_finish()", x);
    }
    for (std::size_t k = 0; k < p; ++k) {
      const Extent3 all{ex.width(k), ex.alloc(k)[1], ex.alloc(k)[2]};
      user(k, Action{Action::Kind::read_all, nullptr, k, x, {0, 0, 0}, all}, false,
           "user kernel reads block " + std::to_string(k));
    }
  }
  const std::string conflict = model.unordered_conflict([&](std::size_t id) { return ex.name(id); });
  FUZZ_CHECK(conflict.empty(), what + (whole ? ", exchange(): " : ", exchange_start()/finish(): ") + conflict);

  // Everything in a random order that the streams and events allow.
  std::mt19937_64 rng(seed);
  std::vector<std::vector<Value>> mem = ex.memory();
  std::vector<std::vector<std::uint8_t>> writes(p * cs);
  for (std::size_t b = 0; b < p * cs; ++b) writes[b].assign(mem[b].size(), 0);
  for (std::size_t op : model.random_order(rng)) {
    const Action& a = actions[op];
    const std::string& label = model.ops()[op].label;
    switch (a.kind) {
      case Action::Kind::none:
        break;
      case Action::Kind::step:
        ex.run(*a.step, mem, writes);
        break;
      case Action::Kind::write:
        for (std::size_t c = 0; c < cs; ++c) {
          std::fill(writes[a.block * cs + c].begin(), writes[a.block * cs + c].end(), 0);
          ex.cells(a.block, [&](const Point& q, std::size_t at) {
            mem[a.block * cs + c][at] = ex.initial(a.block, c, q, a.exchange);
          });
        }
        break;
      case Action::Kind::read_interior:
        ex.compare(a.block, mem, nullptr, a.exchange, a.lo, a.size, label, a.component);
        break;
      case Action::Kind::read_all:
        ex.compare(a.block, mem, &writes, a.exchange, a.lo, a.size, label, every_component);
        break;
    }
  }
}

// A small grid, mostly valid (fuzz_grid covers the refusals); none if refused.
std::optional<Decomposition> decode_grid(cush_fuzz::Bytes& in) {
  const std::size_t dims = in.in<std::size_t>(1, 3);
  const std::size_t longest[] = {0, 64, 20, 8};
  Extent3 extent{1, 1, 1};
  GridOptions o;
  for (std::size_t a = 0; a < dims; ++a) {
    extent[a] = in.in<std::size_t>(1, longest[dims]);
    o.periodic[a] = in.flag();
  }
  o.halo = in.in<std::size_t>(1, 4);
  const int ghosts = in.in<int>(0, 3);  // along every axis (twice as often), one axis, or some
  if (ghosts >= 2) {
    for (std::size_t a = 0; a < 3; ++a) o.ghosts[a] = ghosts == 3 && in.flag();
    o.ghosts[in.in<std::size_t>(0, dims - 1)] = true;
  }
  const std::size_t aligns[] = {1, 2, 4, 16, 3, 7, 32};
  o.row_align = in.pick(aligns);
  std::size_t count = in.in<std::size_t>(1, 16);
  if (in.flag()) {  // a given process grid
    count = 1;
    o.blocks = {1, 1, 1};
    for (std::size_t a = 0; a < dims; ++a) {
      o.blocks[a] = in.in<std::size_t>(1, std::min<std::size_t>(4, 16 / count));
      count *= o.blocks[a];
    }
  }
  std::optional<Decomposition> g;
  if (FUZZ_REJECTS(g.emplace(extent, dims, count, o))) return std::nullopt;
  return g;
}

// All components filled everywhere, or per axis, direction and component nothing, a fill or a
// write-back; now and then a component out of range or one both filled and written back.
HaloComponents decode_selection(cush_fuzz::Bytes& in, std::size_t dims, std::size_t components) {
  if (!in.flag()) return HaloComponents::all(components);
  HaloComponents which;
  for (std::size_t a = 0; a < dims; ++a)
    for (int dir : {-1, 1})
      for (std::size_t c = 0; c < components; ++c) {
        const int how = in.in<int>(0, 3);  // nothing, filled (twice as often), written back
        if (how == 1 || how == 2) which.fill(a, dir, {c});
        if (how == 3) which.write_back(a, dir, {c});
      }
  if (rarely(in)) {
    const std::size_t a = in.in<std::size_t>(0, 2), c = in.in<std::size_t>(0, components);
    which.fill(a, in.flag() ? 1 : -1, {c}).write_back(a, in.flag() ? 1 : -1, {c});
  }
  for (std::size_t a = 0; a < 3; ++a)
    for (int dir : {-1, 1})
      for (const auto* list : {&which.filled(a, dir), &which.written_back(a, dir)})
        FUZZ_CHECK(std::adjacent_find(list->begin(), list->end(), std::greater_equal<>()) == list->end(),
                   "HaloComponents lists are not ascending, once each");
  return which;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cush_fuzz::Bytes in(data, size);
  const std::optional<Decomposition> grid = decode_grid(in);
  if (!grid) return 0;
  const Decomposition& g = *grid;
  const std::size_t components = in.in<std::size_t>(1, 3);
  const HaloComponents which = decode_selection(in, g.dims(), components);
  // Packs into peers, pipelining, the call and the order of execution.
  enum class Peers { always, never, some };
  const auto peers_how = static_cast<Peers>(in.in<int>(0, 2));
  const auto salt = in.in<std::uint32_t>(0, UINT32_MAX);
  cush::detail::PeerStores peers;
  if (peers_how == Peers::always) peers = [](std::size_t, std::size_t) { return true; };
  if (peers_how == Peers::some)
    peers = [salt](std::size_t from, std::size_t to) { return ((from * 7 + to * 13 + salt) & 2U) != 0; };
  ScheduleOptions options;
  options.element_size = in.flag() ? 8 : 4;
  const std::size_t thresholds[] = {0, 64, 512, 4096, std::size_t{1} << 40};
  options.pipeline_bytes = in.pick(thresholds);
  options.max_chunks = 8 - in.in<std::size_t>(0, 7);
  const bool whole = in.flag();
  const auto seed = in.in<std::uint64_t>(0, UINT64_MAX);

  const std::string what =
      std::to_string(g.dims()) + "D extent " + text(g.extent()) + ", blocks " + text(g.blocks()) + ", halo " +
      std::to_string(g.depth()) + " (ghosts " + text(Extent3{g.halo(0), g.halo(1), g.halo(2)}) + "), periodic " +
      text(Extent3{g.periodic(0), g.periodic(1), g.periodic(2)}) + ", row_align " + std::to_string(g.row_align()) +
      ", " + std::to_string(components) + " components, peers " +
      (peers_how == Peers::never    ? "never"
       : peers_how == Peers::always ? "always"
                                    : "salt " + std::to_string(salt)) +
      ", element " + std::to_string(options.element_size) + " B, pipelined from " +
      std::to_string(options.pipeline_bytes) + " B in up to " + std::to_string(options.max_chunks) + " slabs";
  const std::string why = selection_refusal(g, which, components);
  const bool refused = FUZZ_REJECTS(cush::detail::check_components(g, which, components));
  FUZZ_CHECK(refused == !why.empty(),
             what + (refused ? ": check_components() refused the selection" : ": accepted " + why));
  if (refused) return 0;

  const ExchangeProgram program = cush::detail::exchange_program(g, peers, which);
  const Exchange ex(g, components, which, program, what);
  check_model(ex, g);
  check_program(ex, g, which, program, peers);
  check_schedule(ex, g, cush::detail::exchange_schedule(program, g, options), options, whole, seed);
  return 0;
}
