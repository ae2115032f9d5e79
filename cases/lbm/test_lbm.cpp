// Case "lbm", host part (runs without a GPU): the kernels' cell update (cell.hpp) emulated on the
// host, slab by slab in the GPU layout, and the duct's analytic flow.
//
//   - the velocity set, the collision's conservation laws, the host half conversions;
//   - A-B pull and esoteric pull agree bit for bit (FP32 and FP16S) from a random state;
//   - mass is conserved; the steady duct profile matches White's series within the spec's error
//     and converges at second order;
//   - the multi-slab emulation (ghost layers filled between steps by exactly the exchange the
//     multi-GPU variants do, kAbUp / kAbDown and esoteric_exchange of kernels.hpp) agrees bit for
//     bit with one slab, down to slabs of one layer; leaving out any one slot of the exchange
//     breaks it;
//   - analytic_uz, force_for, l2_error and the duct checks.

#include <gtest/gtest.h>

#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <type_traits>
#include <vector>

#include "cell.hpp"
#include "kernels.hpp"
#include "lbm.hpp"
#include "test_support.hpp"

namespace lbm = cases::lbm;
namespace cell = cases::lbm::cell;
using lbm::kQ;

namespace {

using lbm_test::fluid_mass;
using lbm_test::same_bits;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// --- the host emulation --------------------------------------------------------------------------

// A slab in host memory, laid out as on the GPU (kernels.hpp).
template <class T>
struct HostSlab {
  lbm::Slab s{};
  std::vector<T> data;
  HostSlab(const lbm::Duct& d, int nz, int ghost) {
    s.pitch = lbm::padded_pitch(d.nx);
    s.nx = static_cast<int>(d.nx);
    s.ny = static_cast<int>(d.ny);
    s.nz = nz;
    s.ghost = ghost;
    s.stride = round_up(s.pitch * d.ny * static_cast<std::size_t>(nz + 2 * ghost), 64);
    data.assign(kQ * s.stride, T(0.0f));
    s.f = data.data();
  }
  HostSlab(const HostSlab&) = delete;
  HostSlab& operator=(const HostSlab&) = delete;
  T* f() { return data.data(); }
  [[nodiscard]] std::size_t layer() const { return s.pitch * static_cast<std::size_t>(s.ny); }
  // Population i of stored layer z (-ghost .. nz - 1 + ghost).
  T* plane(int i, int z) { return data.data() + static_cast<std::size_t>(i) * s.stride + layer() * static_cast<std::size_t>(z + s.ghost); }
};

// One step of every cell of a slab, as the kernels do it; esoteric pull with `cells` = 2 as the
// kernel that takes two rows per thread does it (cell::update_esoteric_rows at y = 1, 3, 5, ...),
// with `cells` = 3 as the FP16S kernel that takes two cells of a row (cell::update_esoteric_pair
// at x = 0, 2, 4, ...).
template <class T>
void step(lbm::Pattern pattern, HostSlab<T>& a, HostSlab<T>& b, int parity, lbm::Physics p, int cells = 1) {
  const auto o = cell::esoteric_offsets<std::int32_t>(a.s, parity);
  for (int z = 0; z < a.s.nz; ++z) {
    if (pattern == lbm::Pattern::esoteric && cells == 2) {
      for (int y = 1; y <= a.s.ny - 2; y += 2)
        for (int x = 0; x < a.s.nx; ++x) cell::update_esoteric_rows<T>(a.f(), a.s, o, x, y, z, p);
      continue;
    }
    if (pattern == lbm::Pattern::esoteric && cells == 3) {
      if constexpr (!std::is_same_v<T, __half>) throw std::invalid_argument("pairs of a row are FP16S only");
      else
        for (int y = 1; y <= a.s.ny - 2; ++y)
          for (int x = 0; x <= a.s.nx - 2; x += 2) cell::update_esoteric_pair(a.f(), a.s, o, x, y, z, p);
      continue;
    }
    for (int y = 0; y < a.s.ny; ++y)
      for (int x = 0; x < a.s.nx; ++x) {
        if (pattern == lbm::Pattern::ab) cell::update_ab<T>(a.f(), b.f(), a.s, x, y, z, p);
        else cell::update_esoteric<T>(a.f(), a.s, o, x, y, z, p);
      }
  }
}

// A slot the exchange leaves out: table 0..3 = fill_up, fill_down, return_up, return_down after a
// step of parity `parity`; 4, 5 = kAbUp, kAbDown.
struct Drop {
  int table = -1, parity = 0, slot = -1;
};

// The duct as one slab without ghost layers (split empty: what Single does) or as z slabs of the
// given thicknesses with one ghost layer, exchanged between steps as the multi-GPU variants do.
template <class T>
class Emulation {
 public:
  Emulation(const lbm::Duct& duct, lbm::Pattern pattern, std::vector<int> split = {})
      : duct_(duct), pattern_(pattern), physics_(lbm::physics(duct)), multi_(!split.empty()) {
    if (!multi_) split = {static_cast<int>(duct.nz)};
    int z = 0;
    for (int t : split) {
      first_.push_back(z);
      z += t;
      a_.push_back(std::make_unique<HostSlab<T>>(duct, t, multi_ ? 1 : 0));
      b_.push_back(std::make_unique<HostSlab<T>>(duct, t, multi_ ? 1 : 0));
    }
    if (z != static_cast<int>(duct.nz)) throw std::invalid_argument("split does not add up to nz");
  }

  // The populations that stream into each cell at the first step: incoming[i + kQ * cell],
  // cells x fastest. Written where the first step loads them (A-B: the pulled slots; esoteric:
  // the load slots of parity 1); a multi-slab lattice gets the layers of that one-slab lattice
  // that each slab stores (ghost layers included, periodic).
  void set(const std::vector<float>& incoming) {
    HostSlab<T> g(duct_, static_cast<int>(duct_.nz), 0);
    for (int z = 0; z < g.s.nz; ++z)
      for (int y = 0; y < g.s.ny; ++y)
        for (int x = 0; x < g.s.nx; ++x) {
          if (cell::solid(g.s, x, y)) continue;
          const cell::Site c = cell::site(g.s, x, y, z);
          const std::size_t n = static_cast<std::size_t>(x) + duct_.nx * (static_cast<std::size_t>(y) + duct_.ny * static_cast<std::size_t>(z));
          for (int i = 0; i < kQ; ++i) {
            const cell::Slot k = pattern_ == lbm::Pattern::ab ? cell::ab_slot(c, i) : cell::esoteric_load_slot(c, 1, i);
            cell::store(g.f(), g.s.stride, k, incoming[static_cast<std::size_t>(i) + kQ * n] * cell::scale<T>());
          }
        }
    const int nz = static_cast<int>(duct_.nz);
    for (std::size_t k = 0; k < a_.size(); ++k) {
      HostSlab<T>& s = *a_[k];
      for (int l = -s.s.ghost; l < s.s.nz + s.s.ghost; ++l)
        for (int i = 0; i < kQ; ++i)
          std::memcpy(s.plane(i, l), g.plane(i, (first_[k] + l + nz) % nz), s.layer() * sizeof(T));
    }
    steps_ = 0;
  }

  void run(std::size_t steps) {
    for (std::size_t n = 0; n < steps; ++n) {
      ++steps_;
      const int parity = static_cast<int>(steps_ % 2);
      if (pattern_ == lbm::Pattern::ab) {
        if (multi_) exchange_ab();
        for (std::size_t k = 0; k < a_.size(); ++k) step(pattern_, *a_[k], *b_[k], parity, physics_);
        std::swap(a_, b_);
      } else {
        for (std::size_t k = 0; k < a_.size(); ++k) step(pattern_, *a_[k], *b_[k], parity, physics_, cells);
        if (multi_) exchange_esoteric(parity);
      }
    }
  }

  lbm::Moments moments() {
    if (pattern_ == lbm::Pattern::ab && multi_) exchange_ab();  // the ghosts the next step reads
    lbm::Moments m;
    for (auto* v : {&m.rho, &m.ux, &m.uy, &m.uz}) v->assign(duct_.cells(), NAN);
    const int parity = static_cast<int>((steps_ + 1) % 2);
    for (std::size_t k = 0; k < a_.size(); ++k) {
      HostSlab<T>& s = *a_[k];
      for (int z = 0; z < s.s.nz; ++z)
        for (int y = 0; y < s.s.ny; ++y)
          for (int x = 0; x < s.s.nx; ++x) {
            const cell::Output o = cell::observe<T>(pattern_, s.f(), s.s, x, y, z, parity, physics_);
            const std::size_t n = static_cast<std::size_t>(x) +
                                  duct_.nx * (static_cast<std::size_t>(y) + duct_.ny * static_cast<std::size_t>(first_[k] + z));
            m.rho[n] = o.rho;
            m.ux[n] = o.ux;
            m.uy[n] = o.uy;
            m.uz[n] = o.uz;
          }
    }
    return m;
  }

  Drop drop;
  int cells = 1;  // esoteric pull: the cells per update (step)

 private:
  // Population i of layer zs of slab `from` into layer zd of slab `to`, whole planes.
  void copy(HostSlab<T>& to, int zd, HostSlab<T>& from, int zs, int i) {
    std::memcpy(to.plane(i, zd), from.plane(i, zs), to.layer() * sizeof(T));
  }
  bool dropped(int table, int parity, int slot) const {
    return drop.table == table && drop.parity == parity && drop.slot == slot;
  }
  // A-B: before a step, every slab's ghost layers get the populations that its neighbours' cells
  // stream across the faces (periodic ring).
  void exchange_ab() {
    const std::size_t n = a_.size();
    for (std::size_t k = 0; k < n; ++k) {
      HostSlab<T>& s = *a_[k];
      HostSlab<T>& below = *a_[(k + n - 1) % n];
      HostSlab<T>& above = *a_[(k + 1) % n];
      for (int i : lbm::kAbUp)
        if (!dropped(4, 0, i)) copy(s, -1, below, below.s.nz - 1, i);
      for (int i : lbm::kAbDown)
        if (!dropped(5, 0, i)) copy(s, s.s.nz, above, 0, i);
    }
  }
  // Esoteric pull: after a step of parity p, across every face between a lower slab L and an
  // upper slab U (periodic ring), the four sets of esoteric_exchange(p).
  void exchange_esoteric(int parity) {
    const lbm::EsotericExchange e = lbm::esoteric_exchange(parity);
    const std::size_t n = a_.size();
    for (std::size_t k = 0; k < n; ++k) {
      HostSlab<T>& L = *a_[k];
      HostSlab<T>& U = *a_[(k + 1) % n];
      for (int i : e.fill_up)
        if (!dropped(0, parity, i)) copy(U, -1, L, L.s.nz - 1, i);
      for (int i : e.fill_down)
        if (!dropped(1, parity, i)) copy(L, L.s.nz, U, 0, i);
      for (int i : e.return_up)
        if (!dropped(2, parity, i)) copy(U, 0, L, L.s.nz, i);
      for (int i : e.return_down)
        if (!dropped(3, parity, i)) copy(L, L.s.nz - 1, U, -1, i);
    }
  }

  lbm::Duct duct_;
  lbm::Pattern pattern_;
  lbm::Physics physics_;
  bool multi_;
  std::vector<int> first_;
  std::vector<std::unique_ptr<HostSlab<T>>> a_, b_;
  std::size_t steps_ = 0;
};

// Shifted equilibrium populations of (rho, u), in double.
std::array<double, kQ> shifted_feq(double rho, double ux, double uy, double uz) {
  std::array<double, kQ> f{};
  const double u2 = ux * ux + uy * uy + uz * uz;
  for (int i = 0; i < kQ; ++i) {
    const double cu = cell::cx(i) * ux + cell::cy(i) * uy + cell::cz(i) * uz;
    const double w = cell::w(i);
    f[i] = w * rho * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * u2) - w;
  }
  return f;
}

// A random state near equilibrium: density 1 +- 0.02, velocity +- 0.03 per component, and
// non-equilibrium parts of 1e-3 (incoming[i + kQ * cell]).
std::vector<float> random_state(const lbm::Duct& d, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> r(-1.0, 1.0);
  std::vector<float> in(kQ * d.cells());
  for (std::size_t n = 0; n < d.cells(); ++n) {
    const auto f = shifted_feq(1 + 0.02 * r(g), 0.03 * r(g), 0.03 * r(g), 0.03 * r(g));
    for (int i = 0; i < kQ; ++i) in[static_cast<std::size_t>(i) + kQ * n] = static_cast<float>(f[i] + 1e-3 * r(g) * cell::w(i));
  }
  return in;
}

std::string name(const lbm::Duct& d) {
  return std::to_string(d.nx) + "x" + std::to_string(d.ny) + "x" + std::to_string(d.nz);
}


template <class T>
lbm::Moments run_emulation(const lbm::Duct& d, lbm::Pattern pattern, std::vector<int> split, std::size_t steps,
                           const std::vector<float>& state, Drop drop = {}) {
  Emulation<T> e(d, pattern, std::move(split));
  e.drop = drop;
  e.set(state);
  e.run(steps);
  return e.moments();
}

lbm::Moments run_storage(lbm::Storage storage, const lbm::Duct& d, lbm::Pattern pattern, std::vector<int> split,
                         std::size_t steps, const std::vector<float>& state, Drop drop = {}) {
  return storage == lbm::Storage::fp32 ? run_emulation<float>(d, pattern, std::move(split), steps, state, drop)
                                       : run_emulation<__half>(d, pattern, std::move(split), steps, state, drop);
}


// The duct run from rest to a steady state (1.2 M^2 / nu + 200 steps, M the larger fluid
// width), u_max = 0.05; the L2 error of u_z in layer 0.
double steady_error(std::size_t fluid, double tau) {
  lbm::Duct d{fluid + 2, fluid + 2, 2, tau, 0.0};
  d.force = lbm::force_for(d, 0.05);
  const auto steps = static_cast<std::size_t>(1.2 * static_cast<double>(fluid * fluid) / d.viscosity()) + 200;
  Emulation<float> e(d, lbm::Pattern::esoteric);
  e.set(std::vector<float>(kQ * d.cells(), 0.0f));
  e.run(steps);
  return lbm::l2_error(d, e.moments(), 0);
}

const lbm::Storage kStorages[] = {lbm::Storage::fp32, lbm::Storage::fp16s};
const char* storage_name(lbm::Storage s) { return s == lbm::Storage::fp32 ? "fp32" : "fp16s"; }

}  // namespace

// --- the model ---------------------------------------------------------------------------------

TEST(Lbm, VelocitySetIsD3Q19InTheSpecsOrder) {
  double sw = 0, swc[3] = {}, swcc[3][3] = {};
  for (int i = 0; i < kQ; ++i) {
    const int c[3] = {cell::cx(i), cell::cy(i), cell::cz(i)};
    const int o = cell::opposite(i);
    EXPECT_EQ(cell::opposite(o), i);
    EXPECT_EQ(cell::cx(o), -c[0]);
    EXPECT_EQ(cell::cy(o), -c[1]);
    EXPECT_EQ(cell::cz(o), -c[2]);
    EXPECT_EQ(cell::w(o), cell::w(i));
    if (i > 0) {
      EXPECT_EQ(o, i % 2 == 1 ? i + 1 : i - 1) << "pairs (2k - 1, 2k) are opposites";
    }
    const int len2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    EXPECT_EQ(cell::w(i), len2 == 0 ? 1.0f / 3.0f : (len2 == 1 ? 1.0f / 18.0f : 1.0f / 36.0f));
    sw += cell::w(i);
    for (int a = 0; a < 3; ++a) {
      swc[a] += cell::w(i) * static_cast<double>(c[a]);
      for (int b = 0; b < 3; ++b) swcc[a][b] += cell::w(i) * static_cast<double>(c[a] * c[b]);
    }
    for (int j = 0; j < i; ++j)
      EXPECT_FALSE(cell::cx(j) == c[0] && cell::cy(j) == c[1] && cell::cz(j) == c[2]) << i << " repeats " << j;
  }
  EXPECT_NEAR(sw, 1.0, 1e-7);
  for (int a = 0; a < 3; ++a) {
    EXPECT_NEAR(swc[a], 0.0, 1e-7);
    for (int b = 0; b < 3; ++b) EXPECT_NEAR(swcc[a][b], a == b ? 1.0 / 3.0 : 0.0, 1e-7);
  }
  // The spec's table, spot checks: 13 = +-0, 16 = -0+, 17 = 0+-.
  EXPECT_EQ(cell::cx(13) * 100 + cell::cy(13) * 10 + cell::cz(13), 100 - 10);
  EXPECT_EQ(cell::cx(16) * 100 + cell::cy(16) * 10 + cell::cz(16), -100 + 1);
  EXPECT_EQ(cell::cx(17) * 100 + cell::cy(17) * 10 + cell::cz(17), 10 - 1);
  // The exchange tables name the populations that cross the z faces.
  for (int i : lbm::kAbUp) EXPECT_EQ(cell::cz(i), 1) << i;
  for (int i : lbm::kAbDown) EXPECT_EQ(cell::cz(i), -1) << i;
}

// The collision keeps the mass and adds the force to the momentum (Guo: sum f*_i c_i = sum f_i c_i
// + F), relaxes towards the equilibrium at rate omega, and leaves an equilibrium at rest alone.
TEST(Lbm, CollisionConservesMassAndAddsTheForce) {
  std::mt19937 g(3);
  std::uniform_real_distribution<double> r(-1.0, 1.0);
  for (int t = 0; t < 100; ++t) {
    const auto eq = shifted_feq(1 + 0.05 * r(g), 0.05 * r(g), 0.05 * r(g), 0.05 * r(g));
    float f[kQ];
    for (int i = 0; i < kQ; ++i) f[i] = static_cast<float>(eq[i] + 2e-3 * r(g) * cell::w(i));
    const lbm::Physics p{static_cast<float>(1.0 / (0.55 + 0.9 * (r(g) + 1) / 2)), static_cast<float>(1e-4 * r(g))};
    double m0 = 0, j0[3] = {}, m1 = 0, j1[3] = {};
    for (int i = 0; i < kQ; ++i) {
      m0 += f[i];
      j0[0] += static_cast<double>(f[i]) * cell::cx(i);
      j0[1] += static_cast<double>(f[i]) * cell::cy(i);
      j0[2] += static_cast<double>(f[i]) * cell::cz(i);
    }
    cell::collide<float>(f, p);
    for (int i = 0; i < kQ; ++i) {
      m1 += f[i];
      j1[0] += static_cast<double>(f[i]) * cell::cx(i);
      j1[1] += static_cast<double>(f[i]) * cell::cy(i);
      j1[2] += static_cast<double>(f[i]) * cell::cz(i);
    }
    EXPECT_NEAR(m1, m0, 2e-7);
    EXPECT_NEAR(j1[0], j0[0], 2e-7);
    EXPECT_NEAR(j1[1], j0[1], 2e-7);
    EXPECT_NEAR(j1[2], j0[2] + p.force_z, 2e-7);
  }
  float rest[kQ] = {};
  cell::collide<float>(rest, lbm::Physics{1.25f, 0.0f});
  for (int i = 0; i < kQ; ++i) EXPECT_EQ(rest[i], 0.0f) << i;
  // Without force the non-equilibrium part shrinks by 1 - omega (omega = 1: equilibrium at once).
  const auto eq = shifted_feq(1.01, 0.02, -0.01, 0.03);
  float f[kQ];
  for (int i = 0; i < kQ; ++i) f[i] = static_cast<float>(eq[i] + (i % 3 - 1) * 1e-3 * cell::w(i));
  const cell::Moments m = cell::moments<float>(f, 0.0f);
  const auto eq2 = shifted_feq(m.rho, m.ux, m.uy, m.uz);
  float g1[kQ];
  std::memcpy(g1, f, sizeof f);
  cell::collide<float>(g1, lbm::Physics{1.0f, 0.0f});
  for (int i = 0; i < kQ; ++i) EXPECT_NEAR(g1[i], eq2[i], 1e-7) << i;
}

// FP16S on the host goes through <cuda_fp16.h>'s host conversions: every half survives a round
// trip, and floats between two halves round to the nearer, ties to even (IEEE round to nearest).
TEST(Lbm, HostHalfConversionsRoundToNearestEven) {
  const auto as_half = [](unsigned bits) {
    __half_raw r;
    r.x = static_cast<unsigned short>(bits);
    return __half(r);
  };
  const auto bits_of = [](__half h) { return static_cast<unsigned>(static_cast<__half_raw>(h).x); };
  for (unsigned b = 0; b + 1 < 0x7c00; ++b) {  // the finite non-negative halves and their successors
    const float v = __half2float(as_half(b));
    ASSERT_EQ(bits_of(__float2half_rn(v)), b) << "half " << b;
    const double mid = (static_cast<double>(v) + static_cast<double>(__half2float(as_half(b + 1)))) / 2;  // exact in float
    ASSERT_EQ(bits_of(__float2half_rn(static_cast<float>(mid))), b % 2 == 0 ? b : b + 1)
        << "the midpoint above half " << b;
    ASSERT_EQ(bits_of(__float2half_rn(std::nextafter(static_cast<float>(mid), 0.0f))), b)
        << "just below the midpoint above half " << b;
    ASSERT_EQ(bits_of(__float2half_rn(-v)), b | 0x8000U) << "minus half " << b;
  }
  EXPECT_EQ(bits_of(__float2half_rn(65520.0f)), 0x7c00U);  // rounds to infinity
  // The scale: a population 1e-3 is stored as the half of 32.768, and collided in those units.
  __half h;
  cell::store(&h, 0, 1e-3f * cell::scale<__half>());
  EXPECT_EQ(__half2float(h), __half2float(__float2half_rn(32.768f)));
  EXPECT_NEAR(cell::load(&h, 0) / cell::scale<__half>(), 1e-3f, 1e-3f / 1024);
  EXPECT_EQ(cell::scale<float>(), 1.0f);
}

// --- the patterns ---------------------------------------------------------------------------------

// A-B pull with halfway bounce-back and esoteric pull with its slot-swapped bounce-back are the
// same scheme: the same moments, bit for bit, from a random state, on odd ducts (a slab of one
// layer too: z wraps onto itself).
TEST(Lbm, AbAndEsotericPullAgreeBitForBit) {
  for (const lbm::Duct& d : {lbm::Duct{7, 9, 5, 0.8, 2e-5}, lbm::Duct{5, 4, 1, 0.6, -1e-5}, lbm::Duct{3, 6, 2, 1.3, 3e-5}}) {
    const std::vector<float> state = random_state(d, 11);
    for (lbm::Storage s : kStorages)
      for (std::size_t steps : {1U, 2U, 50U}) {
        const lbm::Moments ab = run_storage(s, d, lbm::Pattern::ab, {}, steps, state);
        const lbm::Moments eso = run_storage(s, d, lbm::Pattern::esoteric, {}, steps, state);
        EXPECT_TRUE(same_bits(eso, ab)) << name(d) << " " << storage_name(s) << ", " << steps << " steps";
      }
  }
}

// Two cells per update give the bits of one: two rows (cell::update_esoteric_rows, FP32 and
// FP16S) and two cells of a row (cell::update_esoteric_pair, FP16S), both loaded before either is
// stored. Odd and even numbers of fluid rows and columns (the last update then has one fluid cell,
// or two of which only the second is next to the x wall), a single fluid column, one slab and
// slabs with the exchange.
TEST(Lbm, TwoCellsPerUpdateEqualOne) {
  for (const lbm::Duct& d : {lbm::Duct{7, 9, 5, 0.8, 2e-5}, lbm::Duct{6, 6, 3, 0.6, -1e-5}, lbm::Duct{3, 3, 2, 1.3, 3e-5},
                             lbm::Duct{4, 5, 2, 0.7, 1e-5}}) {
    const std::vector<float> state = random_state(d, 5);
    for (const std::vector<int>& split : {std::vector<int>{}, std::vector<int>{static_cast<int>(d.nz) - 1, 1}})
      for (std::size_t steps : {1U, 2U, 9U}) {
        const auto run = [&](auto tag, int cells) {
          Emulation<decltype(tag)> e(d, lbm::Pattern::esoteric, split);
          e.cells = cells;
          e.set(state);
          e.run(steps);
          return e.moments();
        };
        const std::string what = name(d) + ", " + std::to_string(split.size()) + " slabs, " + std::to_string(steps) + " steps";
        EXPECT_TRUE(same_bits(run(float{}, 2), run(float{}, 1))) << what << ", fp32, rows";
        const lbm::Moments one = run(__half{}, 1);
        EXPECT_TRUE(same_bits(run(__half{}, 2), one)) << what << ", fp16s, rows";
        EXPECT_TRUE(same_bits(run(__half{}, 3), one)) << what << ", fp16s, pairs";
      }
  }
}

// The slot offsets of the kernels (cell.hpp, esoteric_offsets): 32 and 64 bits give the same
// offsets where 32 fit, and where esoteric_offsets_fit_32 says they do, every address the update
// forms fits too (offset plus periodic wrap), up to its bound's last element; the 64-bit
// ones of a slab past the limit stay exact. (Which offset each cell adds, with the walls' flips and
// the z wrap, is what the bit-for-bit comparisons with A-B pull check, here and on the GPU.)
TEST(Lbm, EsotericOffsetsFit32BitsWhereTheySay) {
  lbm::Slab s;
  s.nx = 19;
  s.ny = 23;
  s.nz = 24;
  s.pitch = lbm::padded_pitch(19);
  const auto layer = static_cast<std::int64_t>(s.pitch) * s.ny;
  for (int parity : {0, 1}) {
    s.stride = round_up(s.pitch * 23 * 24, 64);
    ASSERT_TRUE(cell::esoteric_offsets_fit_32(s));
    const auto o32 = cell::esoteric_offsets<std::int32_t>(s, parity);
    const auto o64 = cell::esoteric_offsets<std::int64_t>(s, parity);
    std::int64_t largest = 0;
    for (int i = 0; i < lbm::kQ; ++i) {
      EXPECT_EQ(o32.store[i], o64.store[i]) << i;
      for (int w : {0, 1}) {
        EXPECT_EQ(o32.load[i][w], o64.load[i][w]) << i << " " << w;
        largest = std::max(largest, o64.load[i][w]);
      }
    }
    // The largest slot: population 18 (or 17) at a neighbour one layer and one row away.
    EXPECT_LE(largest, 18 * static_cast<std::int64_t>(s.stride) + layer + static_cast<std::int64_t>(s.pitch) + 1);
    // The stride at which the bound reaches INT32_MAX (a slab without ghosts: its z neighbours
    // reach across the wrap, nz layers), and one more.
    const std::int64_t limit = (std::int64_t{INT32_MAX} - layer * s.nz - static_cast<std::int64_t>(s.pitch) - 1) / 18;
    s.stride = static_cast<std::size_t>(limit);
    EXPECT_TRUE(cell::esoteric_offsets_fit_32(s));
    // Where it says they fit, so does every address update_esoteric forms: each offset plus the
    // periodic wrap of its z neighbour (the slab has no ghosts: the first and last layers wrap).
    const auto edge = cell::esoteric_offsets<std::int64_t>(s, parity);
    const std::int64_t wrap = layer * s.nz;
    const auto fits = [](std::int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
    for (int i = 0; i < lbm::kQ; ++i) {
      const auto with_wrap = [&](int dz, std::int64_t k) { return dz > 0 ? k - wrap : (dz < 0 ? k + wrap : k); };
      EXPECT_TRUE(fits(edge.store[i]) && fits(with_wrap(cell::store_z(i), edge.store[i]))) << "store " << i;
      for (int w : {0, 1})
        EXPECT_TRUE(fits(edge.load[i][w]) && fits(with_wrap(cell::load_z(i), edge.load[i][w]))) << "load " << i << " " << w;
    }
    s.stride = static_cast<std::size_t>(limit + 1);
    EXPECT_FALSE(cell::esoteric_offsets_fit_32(s));
    const auto big = cell::esoteric_offsets<std::int64_t>(s, parity);
    for (int i = 0; i < lbm::kQ; ++i) {
      const std::int64_t pop = (big.store[i] + 2 * layer) / static_cast<std::int64_t>(s.stride);
      EXPECT_EQ(big.store[i] - pop * static_cast<std::int64_t>(s.stride), o64.store[i] - pop * static_cast<std::int64_t>(round_up(s.pitch * 23 * 24, 64))) << i;
    }
  }
}

// The state moves (the comparison above is not between two untouched states), and FP16S differs
// from FP32 (the storage switch does something) but stays close.
TEST(Lbm, StatesEvolveAndFp16sStaysNearFp32) {
  const lbm::Duct d{7, 9, 5, 0.8, 2e-5};
  const std::vector<float> state = random_state(d, 11);
  const lbm::Moments m0 = run_storage(lbm::Storage::fp32, d, lbm::Pattern::ab, {}, 0, state);
  const lbm::Moments m32 = run_storage(lbm::Storage::fp32, d, lbm::Pattern::ab, {}, 50, state);
  const lbm::Moments m16 = run_storage(lbm::Storage::fp16s, d, lbm::Pattern::ab, {}, 50, state);
  EXPECT_FALSE(same_bits(m32, m0));
  EXPECT_FALSE(same_bits(m16, m32));
  double diff = 0;
  for (std::size_t n = 0; n < d.cells(); ++n) diff = std::max(diff, static_cast<double>(std::fabs(m16.uz[n] - m32.uz[n])));
  EXPECT_LT(diff, 1e-4);
}

// Mass: the sum of rho over the fluid cells stays to round-off over 200 steps (FP32), both
// patterns, from a random state with a force.
TEST(Lbm, MassIsConserved) {
  const lbm::Duct d{7, 9, 5, 0.7, 5e-5};
  const std::vector<float> state = random_state(d, 5);
  for (lbm::Pattern p : {lbm::Pattern::ab, lbm::Pattern::esoteric}) {
    const double m0 = fluid_mass(d, run_storage(lbm::Storage::fp32, d, p, {}, 0, state));
    const double m1 = fluid_mass(d, run_storage(lbm::Storage::fp32, d, p, {}, 200, state));
    EXPECT_NEAR(m1 / m0, 1.0, 2e-6) << (p == lbm::Pattern::ab ? "A-B" : "esoteric");
  }
}

// The steady duct against White's series (spec §2): L2 within 2 C(tau) / M^2 at M = 16
// (C = 0.95 at tau = 0.8, 0.44 at tau = 1), and second order from M = 8 to 16.
TEST(Lbm, SteadyDuctMatchesTheAnalyticProfile) {
  const double e16 = steady_error(16, 0.8);
  EXPECT_LT(e16, 2 * 0.95 / 256) << "tau 0.8";
  EXPECT_GT(e16, 0.2 * 0.95 / 256) << "tau 0.8: suspiciously exact";
  const double e16b = steady_error(16, 1.0);
  EXPECT_LT(e16b, 2 * 0.44 / 256) << "tau 1";
  const double e8 = steady_error(8, 0.8);
  EXPECT_GT(e8 / e16, 3.0) << "errors " << e8 << " (M = 8), " << e16 << " (M = 16)";
  EXPECT_LT(e8 / e16, 5.5) << "errors " << e8 << " (M = 8), " << e16 << " (M = 16)";
  std::printf("steady duct L2: M = 8, tau 0.8: %.3e; M = 16, tau 0.8: %.3e; M = 16, tau 1: %.3e\n", e8, e16, e16b);
}

// --- several slabs: the exchange of the multi-GPU variants ----------------------------------------

// z slabs with one ghost layer, exchanged as kernels.hpp says, equal one slab bit for bit: both
// patterns, both storages, 2 and 3 slabs of uneven thickness, slabs of one layer, and a ring of one
// slab (its ghosts filled from itself).
TEST(Lbm, SlabsWithTheExchangeEqualOneSlab) {
  const lbm::Duct d{7, 9, 5, 0.8, 2e-5};
  const std::vector<float> state = random_state(d, 7);
  const std::vector<std::vector<int>> splits = {{5}, {2, 3}, {3, 2}, {1, 2, 2}, {2, 1, 2}, {1, 1, 1, 1, 1}};
  for (lbm::Storage s : kStorages)
    for (lbm::Pattern p : {lbm::Pattern::ab, lbm::Pattern::esoteric}) {
      for (std::size_t steps : {1U, 2U, 31U}) {
        const lbm::Moments one = run_storage(s, d, p, {}, steps, state);
        for (const std::vector<int>& split : splits) {
          std::string what = std::string(p == lbm::Pattern::ab ? "A-B " : "esoteric ") + storage_name(s) + ", " +
                             std::to_string(steps) + " steps, slabs";
          for (int t : split) what += " " + std::to_string(t);
          EXPECT_TRUE(same_bits(run_storage(s, d, p, split, steps, state), one)) << what;
        }
      }
    }
}

// Every slot of every exchange set is needed: leaving any one out changes the result.
TEST(Lbm, EverySlotOfTheExchangeIsNeeded) {
  const lbm::Duct d{7, 9, 4, 0.8, 2e-5};
  const std::vector<float> state = random_state(d, 9);
  const std::size_t steps = 6;
  for (lbm::Pattern p : {lbm::Pattern::ab, lbm::Pattern::esoteric}) {
    const lbm::Moments one = run_storage(lbm::Storage::fp32, d, p, {}, steps, state);
    ASSERT_TRUE(same_bits(run_storage(lbm::Storage::fp32, d, p, {2, 2}, steps, state), one));
    std::vector<Drop> drops;
    if (p == lbm::Pattern::ab) {
      for (int i : lbm::kAbUp) drops.push_back({4, 0, i});
      for (int i : lbm::kAbDown) drops.push_back({5, 0, i});
    } else {
      for (int parity : {0, 1}) {
        const lbm::EsotericExchange e = lbm::esoteric_exchange(parity);
        for (int i : e.fill_up) drops.push_back({0, parity, i});
        for (int i : e.fill_down) drops.push_back({1, parity, i});
        for (int i : e.return_up) drops.push_back({2, parity, i});
        for (int i : e.return_down) drops.push_back({3, parity, i});
      }
    }
    for (const Drop& drop : drops)
      EXPECT_FALSE(same_bits(run_storage(lbm::Storage::fp32, d, p, {2, 2}, steps, state, drop), one))
          << (p == lbm::Pattern::ab ? "A-B" : "esoteric") << ": without slot " << drop.slot << " of set " << drop.table
          << " (parity " << drop.parity << ") the result does not change";
  }
}

// --- the duct's host part -------------------------------------------------------------------------

// White's series: the square duct's centre is 0.29469 G a^2 / mu (spec §2), a flat duct tends to
// plane Poiseuille flow, the profile is symmetric, and the summed form agrees with the series
// summed term by term.
TEST(Lbm, AnalyticProfile) {
  lbm::Duct sq{19, 19, 1, 0.8, 1e-5};  // 17 fluid cells: the centre is cell 9
  const double a = 8.5, mu = sq.viscosity();
  EXPECT_NEAR(lbm::analytic_uz(sq, 9, 9) * mu / (sq.force * a * a), 0.29469, 5e-6);
  const lbm::Duct flat{10, 2002, 1, 1.0, 2e-6};  // a = 4, b = 1000
  EXPECT_NEAR(lbm::analytic_uz(flat, 5, 1000) * flat.viscosity() / (flat.force * 16), 0.5 * (1 - 0.25 / 16), 1e-12);
  const lbm::Duct d{14, 23, 3, 0.7, 3e-6};
  for (std::size_t y = 1; y + 1 < d.ny; ++y)
    for (std::size_t x = 1; x + 1 < d.nx; ++x) {
      const double u = lbm::analytic_uz(d, x, y);
      EXPECT_GT(u, 0.0);
      EXPECT_NEAR(lbm::analytic_uz(d, d.nx - 1 - x, y), u, 1e-15 * u + 1e-300);
      EXPECT_NEAR(lbm::analytic_uz(d, x, d.ny - 1 - y), u, 1e-14 * u);
    }
  // Term by term at a few cells, n up to 2e5 (remaining tail below 1e-11 of the sum).
  const double aa = 6.0, bb = 10.5, pi = std::numbers::pi;
  for (const auto& [x, y] : std::vector<std::pair<std::size_t, std::size_t>>{{1, 1}, {3, 7}, {6, 11}, {12, 21}}) {
    const double X = static_cast<double>(x) - 6.5, Y = static_cast<double>(y) - 11.0;
    double s = 0;
    for (long n = 199999; n >= 1; n -= 2) {  // smallest terms first
      const double k = static_cast<double>(n) * pi / (2 * aa);
      const double sign = (n / 2) % 2 == 0 ? 1.0 : -1.0;
      // cosh(k Y) / cosh(k b), as e^(k (|Y| - b)) where cosh would overflow (relative error e^(-2 k |Y|)).
      const double ratio = k * bb > 700 ? std::exp(k * (std::fabs(Y) - bb)) : std::cosh(k * Y) / std::cosh(k * bb);
      s += sign * (1 - ratio) * std::cos(k * X) / (static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n));
    }
    const double direct = 16 * aa * aa * d.force / (d.viscosity() * pi * pi * pi) * s;
    EXPECT_NEAR(lbm::analytic_uz(d, x, y), direct, 1e-10 * direct) << x << ", " << y;
  }
  EXPECT_THROW((void)lbm::analytic_uz(d, 0, 5), std::invalid_argument);
  EXPECT_THROW((void)lbm::analytic_uz(d, 3, d.ny - 1), std::invalid_argument);
}

TEST(Lbm, ForceForGivesTheCentreVelocity) {
  for (const lbm::Duct& d0 : {lbm::Duct{19, 19, 1, 0.8, 0}, lbm::Duct{13, 41, 1, 1.0, 0}, lbm::Duct{3, 3, 1, 0.6, 0}}) {
    lbm::Duct d = d0;
    d.force = lbm::force_for(d, 0.05);
    EXPECT_GT(d.force, 0.0);
    EXPECT_NEAR(lbm::analytic_uz(d, d.nx / 2, d.ny / 2), 0.05, 1e-12) << name(d);
    d.force = lbm::force_for(d, -0.02);
    EXPECT_NEAR(lbm::analytic_uz(d, d.nx / 2, d.ny / 2), -0.02, 1e-12) << name(d);
  }
  // An even duct: the centre lies between cells, above every cell.
  lbm::Duct e{18, 18, 1, 0.8, 0};
  e.force = lbm::force_for(e, 0.05);
  EXPECT_LT(lbm::analytic_uz(e, 8, 8), 0.05);
  EXPECT_GT(lbm::analytic_uz(e, 8, 8), 0.049);
  EXPECT_THROW((void)lbm::force_for(e, NAN), std::invalid_argument);
}

TEST(Lbm, L2ErrorAndPhysics) {
  lbm::Duct d{9, 7, 3, 0.8, 0};
  d.force = lbm::force_for(d, 0.05);
  lbm::Moments m;
  m.uz.assign(d.cells(), 0.0f);
  for (std::size_t z = 0; z < d.nz; ++z)
    for (std::size_t y = 1; y + 1 < d.ny; ++y)
      for (std::size_t x = 1; x + 1 < d.nx; ++x)
        m.uz[x + d.nx * (y + d.ny * z)] = static_cast<float>(lbm::analytic_uz(d, x, y) * (z == 2 ? 1.01 : 1.0));
  EXPECT_LT(lbm::l2_error(d, m, 0), 1e-7);
  EXPECT_NEAR(lbm::l2_error(d, m, 2), 0.01, 1e-6);
  EXPECT_THROW((void)lbm::l2_error(d, m, 3), std::invalid_argument);
  m.uz.pop_back();
  EXPECT_THROW((void)lbm::l2_error(d, m, 0), std::invalid_argument);
  const lbm::Physics p = lbm::physics(d);
  EXPECT_EQ(p.omega, static_cast<float>(1 / 0.8));
  EXPECT_EQ(p.force_z, static_cast<float>(d.force));
  EXPECT_EQ(lbm::bytes_per_update(lbm::Storage::fp32), 152U);
  EXPECT_EQ(lbm::bytes_per_update(lbm::Storage::fp16s), 76U);
}

TEST(Lbm, BadDuctsAreRejected) {
  EXPECT_NO_THROW(lbm::check(lbm::Duct{3, 3, 1, 0.51, 0}));
  const auto rejects = [](lbm::Duct d, const std::string& word) {
    try {
      lbm::check(d);
      ADD_FAILURE() << "accepted a duct that should be rejected (" << word << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  rejects(lbm::Duct{2, 5, 4, 0.8, 0}, "nx = 2");
  rejects(lbm::Duct{5, 1, 4, 0.8, 0}, "ny = 1");
  rejects(lbm::Duct{5, 5, 0, 0.8, 0}, "nz = 0");
  rejects(lbm::Duct{5, 5, 4, 0.5, 0}, "tau = 0.5");
  rejects(lbm::Duct{5, 5, 4, NAN, 0}, "tau = nan");
  rejects(lbm::Duct{5, 5, 4, 0.8, INFINITY}, "force = inf");
  EXPECT_THROW((void)lbm::physics(lbm::Duct{5, 5, 4, 0.3, 0}), std::invalid_argument);
}
