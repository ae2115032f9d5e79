// Injected faults (docs/reliability.md): every checked CUDA and NCCL call that a plan, a field and
// each GPU<->GPU operation makes fails once, and each failure must end in a typed error naming
// the call, with the objects that outlive it still working and no GPU memory left allocated
// (support/faults.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "support/faults.hpp"
#include "support/gpu.hpp"
#include "support/kernels.hpp"
#include "support/piece_counts.hpp"
#include "support/random.hpp"
#include "transports/peer_kernel.hpp"

namespace {

using cush::CommOptions;
using cush::DeviceSet;
using cush::Distribution;
using cush::Plan;
using cush::Transport;
using cush_test::piece_counts;
using cush_test::plus_index;
using cush_test::random_values;
using cush_test::require_equal;

void walk(const std::string& name, const std::function<void()>& action, const std::function<void()>& recheck = {}) {
  (void)cush_test::walk_faults(name, action, recheck);
}

// `scope(walking)` makes objects, uses them (walking: walks faults over their use) and destroys
// them. Run once without faults (kernels load, NCCL sets itself up), then walking: afterwards
// every GPU's free memory is what it was between the two (what the objects kept after a failure
// is freed with them).
void freed_at_end(const std::string& what, const std::function<void(bool walking)>& scope) {
  cush_test::load_process_caches();
  scope(false);
  if (cush_test::under_cuda_tool()) return scope(true);  // the tool's leak check stands in
  const std::vector<std::size_t> before = cush_test::gpu_free_memory();
  scope(true);
  EXPECT_EQ(cush_test::gpu_free_memory(), before) << what << ": GPU memory left after the objects were destroyed";
}

// A plan's whole life: built, filled, a kernel on its segments, gathered, waited for, destroyed.
void plan_life(const DeviceSet& gpus, std::size_t n, const Distribution& d, bool pinned) {
  const std::vector<double> host = random_values<double>(n);
  std::vector<double> out(n);
  std::optional<cush::HostRegistration> registration;
  if (pinned) registration.emplace(out.data(), out.size() * sizeof(double));
  Plan<double> plan(gpus, n, d);
  if (pinned) plan.pin_host(std::span<const double>(host));
  plan.scatter(host.data());
  plan.for_each([](const cush::Segment<double>& s) { cush_test::add_index(s.data(), s.size(), s.offset(), s.stream()); });
  plan.gather(out.data());
  plan.wait();
  require_equal(out, plus_index(host), "plan");
}

}  // namespace

TEST(Faults, PlanLife) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  std::vector<double> w(gpus.size(), 1.0);
  w.back() = 3.0;
  walk("plan, uniform, pageable", [&] { plan_life(gpus, 10007, Distribution::uniform(), false); });
  walk("plan, weighted, pinned", [&] { plan_life(gpus, 10007, Distribution::weighted(w), true); });
  walk("plan, memory bandwidth, pageable, staged in chunks",
       [&] { plan_life(gpus, (std::size_t{6} << 20) + 3, Distribution::memory_bandwidth(), false); });
  walk("plan, replicated", [&] {
    const std::vector<double> host = random_values<double>(777);
    Plan<double> plan(gpus, host.size(), Distribution::replicated());
    plan.broadcast(host.data());
    std::vector<double> out(host.size());
    plan.gather(out.data());
    plan.wait();
    require_equal(out, host, "replicated plan");
  });
}

// A plan that outlives failed operations: afterwards it moves data as before.
TEST(Faults, PlanSurvivesFailedOperations) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  for (std::size_t n : {std::size_t{4099}, (std::size_t{5} << 20) + 1}) {
    freed_at_end("plan", [&](bool walking) {
      Plan<double> plan(gpus, n);
      const std::vector<double> host = random_values<double>(n);
      const auto round_trip = [&] {
        std::vector<double> out(n);
        plan.scatter(host.data());
        plan.for_each([](const cush::Segment<double>& s) { cush_test::add_index(s.data(), s.size(), s.offset(), s.stream()); });
        plan.gather(out.data());
        plan.wait();
        require_equal(out, plus_index(host), "plan round trip");
      };
      if (walking) walk("plan round trip, n " + std::to_string(n), round_trip, round_trip);
      else round_trip();
    });
  }
}

namespace {

// Where an all-to-all with `counts` puts a's elements, as a global array of b.
std::vector<double> all_to_all_of(const std::vector<double>& x, const Plan<double>& a, const Plan<double>& b,
                                  const std::vector<std::size_t>& counts) {
  const std::size_t p = a.devices().size(), q = b.devices().size();
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < p; ++i)
    for (std::size_t j = 0, from = a.segment(i).offset(); j < q; ++j) {
      std::size_t to = b.segment(j).offset();
      for (std::size_t i2 = 0; i2 < i; ++i2) to += counts[i2 * q + j];
      for (std::size_t k = 0; k < counts[i * q + j]; ++k) y[to + k] = x[from + k];
      from += counts[i * q + j];
    }
  return y;
}

// Every GPU<->GPU operation once, each result checked: copy and all-to-all between two plans of
// different layouts, reductions and a broadcast on a replicated plan, all-gather, device scatter
// and gather through another.
void device_ops(Plan<double>& a, Plan<double>& b, Plan<double>& replicas, Plan<double>& all, const CommOptions& o) {
  const std::size_t n = a.size();
  const std::vector<double> host = random_values<double>(n);
  std::vector<double> out(n);
  a.scatter(host.data());
  cush::copy(a, b, o);
  b.gather(out.data());
  b.wait();
  require_equal(out, host, "copy");

  const std::vector<std::size_t> counts = piece_counts(a, b);
  cush::all_to_all(a, b, std::span<const std::size_t>(counts), o);
  b.gather(out.data());
  b.wait();
  require_equal(out, all_to_all_of(host, a, b, counts), "all_to_all");

  std::vector<double> small = random_values<double>(replicas.size());
  for (double& x : small) x = std::round(x * 8);  // exact sums in any order
  replicas.broadcast(small.data());
  const std::size_t root = replicas.devices().size() - 1;
  cush::all_reduce(replicas, cush::ReduceOp::sum, o);
  cush::reduce(replicas, cush::ReduceOp::max, root, o);
  cush::broadcast(replicas, root, o);
  std::vector<double> reduced(small.size());
  replicas.gather(reduced.data());
  replicas.wait();
  for (double& x : small) x *= static_cast<double>(replicas.devices().size());
  require_equal(reduced, small, "all_reduce, reduce, broadcast");

  cush::all_gather(a, all, o);
  cush::scatter(all, b, 0, o);
  b.for_each([](const cush::Segment<double>& s) { cush_test::add_index(s.data(), s.size(), s.offset(), s.stream()); });
  const std::size_t last = all.devices().size() - 1;
  cush::gather(b, all, last, o);
  all.wait();
  const cush::Segment<double> r = all.segment(last);
  if (cudaMemcpy(out.data(), r.data(), n * sizeof(double), cudaMemcpyDefault) != cudaSuccess)
    throw std::logic_error("reading the gathered replica");
  require_equal(out, plus_index(host), "all_gather, scatter, gather");
}

}  // namespace

// Each operation on each transport that can run here; the plans outlive the failures.
TEST(Faults, DeviceOperations) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  std::vector<int> reversed(gpus.begin(), gpus.end());
  std::reverse(reversed.begin(), reversed.end());
  std::vector<double> w(gpus.size(), 1.0);
  w.front() = 2.5;
  const std::size_t n = 6007;
  for (Transport t : {Transport::automatic, Transport::peer, Transport::host_staging, Transport::nccl, Transport::peer_kernel}) {
    if ((t == Transport::nccl || t == Transport::peer_kernel) && cush_test::gpus_are_shared()) continue;
    freed_at_end(cush::to_string(t), [&](bool walking) {
      Plan<double> a(gpus, n);
      Plan<double> b(DeviceSet(reversed), n, Distribution::weighted(w));
      Plan<double> replicas(gpus, 513, Distribution::replicated());
      Plan<double> all(gpus, n, Distribution::replicated());
      const CommOptions o{t};
      const auto ops = [&] { device_ops(a, b, replicas, all, o); };
      if (walking) walk(std::string("device operations, ") + cush::to_string(t), ops, ops);
      else ops();
    });
  }
}

namespace {

// Scatter, exchange, gather: the owned cells come back as they went.
template <class T>
void exchange_round_trip(cush::Field<T>& f, const std::vector<T>& host, const std::string& what) {
  std::vector<T> out(host.size());
  f.scatter(host.data());
  f.exchange();
  f.gather(out.data());
  f.wait();
  require_equal(out, host, what);
}

// A field's whole life on an odd, periodic grid: scattered, exchanged (whole, split in start and
// finish, staged), gathered.
void field_life(const DeviceSet& gpus, std::size_t halo) {
  const cush::Extent3 e{37, 29, 23};
  cush::GridOptions options;
  options.periodic = {true, false, true};
  options.halo = halo;
  const std::vector<double> host = random_values<double>(e[0] * e[1] * e[2]);
  std::vector<double> out(host.size());
  cush::Field<double> f(gpus, e, 3, options);
  f.scatter(host.data());
  f.exchange();
  f.exchange_start();
  f.exchange_finish();
  f.set_halo_transport(cush::HaloTransport::staged);
  f.exchange();
  f.gather(out.data());
  f.wait();
  require_equal(out, host, "field");
}

}  // namespace

TEST(Faults, FieldLife) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  walk("field, halo 1", [&] { field_life(gpus, 1); });
  walk("field, halo 2", [&] { field_life(gpus, 2); });
}

// A field that outlives failed exchanges: afterwards its ghosts are filled as before.
TEST(Faults, FieldSurvivesFailedExchanges) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  const cush::Extent3 e{31, 17, 41};
  cush::GridOptions options;
  options.periodic = {true, true, true};
  freed_at_end("field", [&](bool walking) {
    cush::Field<float> f(gpus, e, 3, options);
    const std::vector<double> values = random_values<double>(e[0] * e[1] * e[2]);
    const std::vector<float> host(values.begin(), values.end());
    const auto exchange = [&] { exchange_round_trip(f, host, "field round trip"); };
    if (walking) walk("field exchange", exchange, exchange);
    else exchange();
  });
}

// A device set made and asked about its devices, their topology and free memory; peer access.
TEST(Faults, DeviceSet) {
  CUSH_REQUIRE_GPUS(1);
  walk("device set", [] {
    const DeviceSet gpus = DeviceSet::all();
    for (std::size_t i = 0; i < gpus.size(); ++i) (void)gpus.free_memory(i);
    gpus.enable_peer_access();
    if (gpus.topology().devices().size() != gpus.size()) throw std::logic_error("device set: topology");
  });
}

// A broadcast large enough to be split among the devices and spread over the peer links
// (auxiliary lanes, transfers that wait for others).
TEST(Faults, LargeBroadcastThroughPeers) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  const std::vector<double> host = random_values<double>((std::size_t{4} << 20) + 5);
  walk("plan, replicated, large broadcast", [&] {
    Plan<double> plan(gpus, host.size(), Distribution::replicated());
    plan.broadcast(host.data());
    std::vector<double> out(host.size());
    for (std::size_t pos = 0; pos < gpus.size(); ++pos) {
      const cush::Segment<double> s = plan.segment(pos);
      plan.wait();
      if (cudaMemcpy(out.data(), s.data(), out.size() * sizeof(double), cudaMemcpyDefault) != cudaSuccess)
        throw std::logic_error("reading a replica");
      require_equal(out, host, "replica " + std::to_string(pos));
    }
  });
}

// Plans made in every run: what each transport sets up for a plan on first use (NCCL
// communicators, peer_kernel flags, host staging slots) fails too.
TEST(Faults, DeviceOperationsOnNewPlans) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  std::vector<double> w(gpus.size(), 1.0);
  w.back() = 2.0;
  const std::vector<double> host = random_values<double>((std::size_t{3} << 20) + 7);
  for (Transport t : {Transport::peer, Transport::host_staging, Transport::nccl, Transport::peer_kernel}) {
    if ((t == Transport::nccl || t == Transport::peer_kernel) && cush_test::gpus_are_shared()) continue;
    const CommOptions o{t};
    walk(std::string("device operations on new plans, ") + cush::to_string(t), [&] {
      Plan<double> a(gpus, host.size());
      Plan<double> b(gpus, host.size(), Distribution::weighted(w));
      Plan<double> sums(gpus, 1000, Distribution::replicated());
      // Declared after the plans: when a call fails, unwinding frees these buffers before the
      // plans' destructors wait, so a copy still running then would write freed memory (each
      // failing operation, and a failing wait(), finishes its devices' work first, promise 2).
      // A failed b.wait() once left sums's staged gather writing `ones` after it was freed
      // (docs/reliability.md, "Found and fixed: heap corruption in a walk").
      std::vector<double> ones(sums.size(), 1.0), out(host.size());
      a.scatter(host.data());
      cush::copy(a, b, o);
      sums.broadcast(ones.data());
      cush::all_reduce(sums, cush::ReduceOp::sum, o);
      b.gather(out.data());
      sums.gather(ones.data());
      b.wait();
      sums.wait();
      require_equal(out, host, "copy");
      require_equal(ones, std::vector<double>(sums.size(), static_cast<double>(gpus.size())), "all_reduce");
    }, [] {
      // The plans are gone, and with them every peer_kernel group: a group whose constructor
      // failed half way must have freed its flags and abort word too (too small for the free
      // memory check: memcheck's leak check found it).
      if (const std::size_t held = cush::detail::peer_group_allocations(); held != 0)
        throw std::logic_error(std::to_string(held) + " peer_kernel group allocations outlive the plans");
    });
  }
}

// The transpose, direct (stores into the other device) and staged (a scratch buffer, then a 2D
// copy), whole and pipelined in 3 chunks with a producer (whose rows are already there): every
// path it takes between two plans of different layouts, and a failure between one chunk's copies
// and the next chunk's kernel.
TEST(Faults, Transpose) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  std::vector<int> reversed(gpus.begin(), gpus.end());
  std::reverse(reversed.begin(), reversed.end());
  const std::size_t rows = 96, cols = 130;
  const std::vector<double> in = random_values<double>(rows * cols);
  std::vector<double> want(in.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) want[c * rows + r] = in[r * cols + c];
  for (auto path : {cush::TransposeOptions::Path::automatic, cush::TransposeOptions::Path::staged})
    for (std::size_t chunks : {std::size_t{1}, std::size_t{3}}) {
      Plan<double> src(gpus, in.size(), Distribution::uniform().with_granularity(cols));
      Plan<double> dst(DeviceSet(reversed), in.size(), Distribution::uniform().with_granularity(rows));
      cush::TransposeOptions options{path};
      if (chunks > 1) {
        options.chunks = chunks;
        options.produce = [](const cush::TransposeChunk&) {};
      }
      const auto transpose = [&] {
        std::vector<double> out(in.size());
        src.scatter(in.data());
        cush::transpose(src, dst, rows, cols, options);
        dst.gather(out.data());
        dst.wait();
        require_equal(out, want, "transpose");
      };
      walk(std::string("transpose, ") + (path == cush::TransposeOptions::Path::staged ? "staged" : "automatic") +
               (chunks > 1 ? ", 3 chunks" : ""),
           transpose, transpose);
    }
}

// A field with ghosts along z only (walls on x and y, as the lattice-Boltzmann case has): its
// blocks move to and from the host row by row.
TEST(Faults, FieldWithGhostsAlongOneAxis) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  const cush::Extent3 e{19, 13, 4 * gpus.size() + 3};
  cush::GridOptions options;
  options.periodic = {false, false, true};
  options.ghosts = {false, false, true};
  const std::vector<double> host = random_values<double>(e[0] * e[1] * e[2]);
  walk("field, ghosts along z", [&] {
    cush::Field<double> f(gpus, e, 3, options);
    exchange_round_trip(f, host, "field");
  });
}

// A plan on the caller's streams (checked for their devices), and a field on a 1D grid (blocks
// move to and from the host as single rows).
TEST(Faults, PlanOnTheCallersStreamsAndAOneDimensionalField) {
  CUSH_REQUIRE_GPUS(1);
  const DeviceSet gpus = DeviceSet::all();
  std::vector<cush::Stream> streams;
  for (std::size_t i = 0; i < gpus.size(); ++i) streams.emplace_back(gpus[i]);
  const std::vector<cush::StreamRef> refs(streams.begin(), streams.end());
  const std::vector<double> host = random_values<double>(3001);
  walk("plan on the caller's streams", [&] {
    Plan<double> plan(gpus, host.size(), Distribution::uniform(), refs);
    std::vector<double> out(host.size());
    plan.scatter(host.data());
    plan.gather(out.data());
    plan.wait();
    require_equal(out, host, "plan");
  });
  walk("field, 1D", [&] {
    cush::GridOptions options;
    options.periodic = {true, false, false};
    cush::Field<double> f(gpus, cush::Extent3{host.size(), 1, 1}, 1, options);
    exchange_round_trip(f, host, "field");
  });
}
