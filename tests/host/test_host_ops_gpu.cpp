// Host<->GPU operations on real GPUs: scatter, gather, broadcast and their sub-range versions, for
// every distribution, device order, odd sizes and every kind of host memory. Every element checked.

#include <gtest/gtest.h>

#include <cmath>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>

#include "cush/cush.hpp"
#include "support/kernels.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace {

enum class HostKind { pageable, pinned, registered };
const char* name(HostKind k) {
  return k == HostKind::pageable ? "pageable" : k == HostKind::pinned ? "pinned" : "registered";
}
constexpr HostKind all_kinds[] = {HostKind::pageable, HostKind::pinned, HostKind::registered};

// A host array of one kind.
template <class T>
class HostArray {
 public:
  HostArray(std::size_t n, HostKind kind) {
    if (kind == HostKind::pinned) {
      pinned_ = cush::PinnedBuffer<T>(n);
      span_ = pinned_.span();
    } else {
      vector_.resize(n);
      span_ = vector_;
      if (kind == HostKind::registered) registration_.emplace(span_);
    }
  }
  std::span<T> span() const { return span_; }
  T& operator[](std::size_t i) const { return span_[i]; }

 private:
  std::vector<T> vector_;
  cush::PinnedBuffer<T> pinned_;
  std::optional<cush::HostRegistration> registration_;
  std::span<T> span_;
};

// Sets host-transfer options for one test and restores the previous ones.
class OptionsScope {
 public:
  explicit OptionsScope(const cush::HostTransferOptions& o) : saved_(cush::host_transfer_options()) {
    cush::set_host_transfer_options(o);
  }
  ~OptionsScope() { cush::set_host_transfer_options(saved_); }

 private:
  cush::HostTransferOptions saved_;
};

// Tiny staging chunks, so that small arrays go through many pipeline steps and slot reuse.
cush::HostTransferOptions small_staging() {
  cush::HostTransferOptions o = cush::host_transfer_options();
  o.staging_chunk = std::size_t{64} << 10;
  o.staging_slots = 2;
  o.direct_to_device_below = 0;
  o.direct_to_host_below = 0;
  o.registration_chunk = std::size_t{1} << 20;  // registered arrays > 1 MiB come in pieces
  return o;
}

std::vector<cush::Distribution> distributions(std::size_t p) {
  std::vector<double> weights(p);
  for (std::size_t i = 0; i < p; ++i) weights[i] = static_cast<double>((i * 7 + 3) % 5);  // includes a 0 when p > 2
  if (std::all_of(weights.begin(), weights.end(), [](double w) { return w == 0; })) weights[0] = 1;
  return {cush::Distribution::uniform(),
          cush::Distribution::memory_capacity(),
          cush::Distribution::memory_bandwidth(),
          cush::Distribution::weighted(weights),
          cush::Distribution::uniform().with_granularity(7),
          cush::Distribution::custom(
              [](std::size_t n, std::span<const cush::DeviceInfo> d) {
                std::vector<std::size_t> c(d.size(), 0);
                c.back() = n;  // everything on the last device
                return c;
              },
              "all-on-last")};
}

constexpr std::size_t sizes[] = {1, 2, 3, 7, 13, 1021, 4099, 65537, 300007};

std::vector<double> replica_of(const cush::Plan<double>& plan, std::size_t pos) {
  const cush::Segment<double> s = plan.segment(pos);
  std::vector<double> out(s.size());
  EXPECT_EQ(cudaMemcpy(out.data(), s.data(), s.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

}  // namespace

TEST(HostOps, ScatterKernelGatherRoundTripsEveryDistributionOrderSizeAndMemory) {
  CUSH_REQUIRE_GPUS(1);
  OptionsScope options(small_staging());
  std::size_t checked = 0;
  for (const auto& order : cush_test::device_orders()) {
    const cush::DeviceSet gpus(order);
    for (const auto& dist : distributions(order.size())) {
      for (std::size_t n : sizes) {
        for (HostKind kind : all_kinds) {
          SCOPED_TRACE(cush_test::to_string(order) + " " + dist.name() + " n=" + std::to_string(n) + " " + name(kind));
          HostArray<double> in(n, kind), out(n, kind);
          cush_test::fill_random(in.span());
          std::fill(out.span().begin(), out.span().end(), NAN);
          cush::Plan<double> plan(gpus, n, dist);
          plan.scatter(in.span());
          plan.for_each([](cush::Segment<double> s) { cush_test::add_index(s.data(), s.size(), s.offset(), s.stream()); });
          plan.gather(out.span());
          plan.wait();
          for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], in[i] + static_cast<double>(i)) << "element " << i;
          checked += n;
        }
      }
    }
  }
  std::printf("checked %zu elements\n", checked);
}

TEST(HostOps, BytesElementsAtOddSizesAndDefaultStaging) {
  CUSH_REQUIRE_GPUS(1);
  // Default options: large pageable arrays use the real chunk size, small ones the direct path.
  for (const auto& order : cush_test::device_orders()) {
    // 10 MiB + 8: per-copy sizes whose split over 16 threads once dropped the last bytes.
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{262147}, (std::size_t{10} << 20) + 8,
                          std::size_t{25'000'009}}) {
      for (HostKind kind : all_kinds) {
        SCOPED_TRACE(cush_test::to_string(order) + " n=" + std::to_string(n) + " " + name(kind));
        HostArray<std::uint8_t> in(n, kind), out(n, kind);
        cush_test::fill_random(in.span());
        cush::Plan<std::uint8_t> plan(cush::DeviceSet(order), n);
        plan.scatter(in.span());
        plan.for_each([](cush::Segment<std::uint8_t> s) { cush_test::xor_index(s.data(), s.size(), s.offset(), s.stream()); });
        plan.gather(out.span());
        plan.wait();
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(out[i], static_cast<std::uint8_t>(in[i] ^ (i & 0xFF))) << "element " << i;
      }
    }
  }
}

TEST(HostOps, SubRangesMoveOnlyTheirElements) {
  CUSH_REQUIRE_GPUS(1);
  OptionsScope options(small_staging());
  std::mt19937_64 g(3);
  for (const auto& order : cush_test::device_orders()) {
    for (HostKind kind : all_kinds) {
      SCOPED_TRACE(cush_test::to_string(order) + " " + name(kind));
      const std::size_t n = 100'003;
      cush::Plan<double> plan(cush::DeviceSet(order), n, cush::Distribution::uniform().with_granularity(11));
      HostArray<double> base(n, kind), whole(n, kind);
      cush_test::fill_random(base.span());
      plan.scatter(base.span());
      std::vector<double> expect(base.span().begin(), base.span().end());
      for (int k = 0; k < 6; ++k) {
        const std::size_t first = std::uniform_int_distribution<std::size_t>(0, n - 1)(g);
        const std::size_t count = std::uniform_int_distribution<std::size_t>(1, n - first)(g);
        HostArray<double> part(count, kind);
        cush_test::fill_random(part.span());
        plan.scatter(std::span<const double>(part.span()), first);
        for (std::size_t i = 0; i < count; ++i) expect[first + i] = part[i];
        HostArray<double> back(count, kind);
        plan.gather(back.span(), first);
        plan.wait();
        for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(back[i], part[i]) << "gathered part, element " << i;
      }
      plan.gather(whole.span());
      plan.wait();
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(whole[i], expect[i]) << "element " << i;
      std::vector<double> tiny(1);
      EXPECT_THROW(plan.scatter(std::span<const double>(tiny), n), cush::InvalidArgument);
      EXPECT_THROW(plan.gather(std::span<double>(tiny.data(), 0), 0), cush::InvalidArgument);
      EXPECT_THROW(plan.scatter(std::span<const double>(tiny)), cush::InvalidArgument) << "whole-extent size mismatch";
      EXPECT_THROW(plan.scatter(static_cast<const double*>(nullptr)), cush::InvalidArgument);
    }
  }
}

TEST(HostOps, BroadcastFillsEveryReplica) {
  CUSH_REQUIRE_GPUS(1);
  // 10M doubles: split broadcast with pipelined chunks when peers exist; 1021: direct copies.
  for (const auto& order : cush_test::device_orders()) {
    for (std::size_t n : {std::size_t{1}, std::size_t{1021}, std::size_t{10'000'019}}) {
      for (HostKind kind : all_kinds) {
        SCOPED_TRACE(cush_test::to_string(order) + " n=" + std::to_string(n) + " " + name(kind));
        HostArray<double> in(n, kind);
        cush_test::fill_random(in.span());
        cush::Plan<double> plan(cush::DeviceSet(order), n, cush::Distribution::replicated());
        plan.broadcast(in.span());
        plan.wait();
        for (std::size_t pos = 0; pos < order.size(); ++pos) {
          const std::vector<double> r = replica_of(plan, pos);
          for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(r[i], in[i]) << "replica " << pos << " element " << i;
        }
        // Gather from a replicated plan reads a share from each device.
        plan.for_each([](cush::Segment<double> s) { cush_test::add_index(s.data(), s.size(), s.offset(), s.stream()); });
        HostArray<double> out(n, kind);
        plan.gather(out.span());
        plan.wait();
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], in[i] + static_cast<double>(i)) << "element " << i;
      }
    }
  }
}

TEST(HostOps, BroadcastOfAPartAndOnPartitionedPlans) {
  CUSH_REQUIRE_GPUS(1);
  for (const auto& order : cush_test::device_orders()) {
    SCOPED_TRACE(cush_test::to_string(order));
    const std::size_t n = 1'500'007;  // 12 MB: the split path
    std::vector<double> in(n), part(700'001);
    cush_test::fill_random(std::span<double>(in));
    cush_test::fill_random(std::span<double>(part));
    cush::Plan<double> plan(cush::DeviceSet(order), n, cush::Distribution::replicated());
    plan.scatter(in);  // scatter on a replicated plan is a broadcast
    plan.broadcast(std::span<const double>(part), 123);
    plan.wait();
    for (std::size_t pos = 0; pos < order.size(); ++pos) {
      const std::vector<double> r = replica_of(plan, pos);
      for (std::size_t i = 0; i < n; ++i) {
        const double expect = i >= 123 && i < 123 + part.size() ? part[i - 123] : in[i];
        ASSERT_EQ(r[i], expect) << "replica " << pos << " element " << i;
      }
    }
    cush::Plan<double> partitioned(cush::DeviceSet(order), n);
    try {
      partitioned.broadcast(in);
      FAIL() << "broadcast needs a replicated plan";
    } catch (const cush::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("Distribution::replicated()"), std::string::npos) << e.what();
    }
  }
}

TEST(HostOps, OperationsAndKernelsStayInStreamOrderWithoutWaits) {
  CUSH_REQUIRE_GPUS(1);
  OptionsScope options(small_staging());
  for (const auto& order : cush_test::device_orders()) {
    for (HostKind kind : all_kinds) {
      SCOPED_TRACE(cush_test::to_string(order) + " " + name(kind));
      const std::size_t n = 500'009;
      HostArray<float> a(n, kind), b(n, kind), c(n, kind);
      cush_test::fill_random(a.span());
      cush::Plan<float> plan(cush::DeviceSet(order), n, cush::Distribution::memory_bandwidth());
      auto step = [](cush::Segment<float> s) { cush_test::affine(s.data(), s.size(), 2.0F, 1.0F, s.stream()); };
      plan.scatter(a.span());
      plan.for_each(step);
      plan.gather(b.span());
      plan.scatter(b.span());  // must read what the gather wrote
      plan.for_each(step);
      plan.gather(c.span());
      plan.wait();
      for (std::size_t i = 0; i < n; ++i) {
        const float once = 2.0F * a[i] + 1.0F;
        ASSERT_EQ(b[i], once) << i;
        ASSERT_EQ(c[i], 2.0F * once + 1.0F) << i;
      }
    }
  }
}

TEST(HostOps, RegistrationsArePinnedForTheirLifetimeOnly) {
  CUSH_REQUIRE_GPUS(1);
  OptionsScope options(small_staging());
  std::vector<double> v((std::size_t{5} << 20) / sizeof(double) + 13);
  cush_test::fill_random(std::span<double>(v));
  // The whole pages inside v: what a registration pins.
  const auto page_up = [](const void* p) {
    return reinterpret_cast<const char*>((reinterpret_cast<std::uintptr_t>(p) + 4095) / 4096 * 4096);
  };
  const char* inner = page_up(v.data());
  const std::size_t inner_bytes = (reinterpret_cast<std::uintptr_t>(v.data() + v.size()) / 4096 * 4096) -
                                  reinterpret_cast<std::uintptr_t>(inner);
  EXPECT_FALSE(cush::is_pinned(inner, inner_bytes));
  {
    cush::HostRegistration r{std::span<double>(v)};
    EXPECT_TRUE(cush::is_pinned(inner, inner_bytes));
    EXPECT_TRUE(cush::is_pinned(v.data() + 1000, 10));
    // Small neighbours that share pages can both be registered (nothing of either is pinned).
    std::vector<double> a(3), b(3);
    cush::HostRegistration ra{std::span<double>(a)};
    cush::HostRegistration rb{std::span<double>(b)};
    EXPECT_FALSE(cush::is_pinned(a.data(), sizeof(double) * 3));
    try {
      cush::HostRegistration twice{std::span<double>(v.data() + 100, 100'000)};
      FAIL() << "registering an overlapping range must fail";
    } catch (const cush::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("registered already"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(cush::is_pinned(inner, inner_bytes)) << "a failed registration must not undo the first";
    cush::HostRegistration moved = std::move(r);
    EXPECT_TRUE(cush::is_pinned(inner, 8));
  }
  EXPECT_FALSE(cush::is_pinned(inner, 8));
  EXPECT_THROW(cush::HostRegistration(nullptr, 8), cush::InvalidArgument);

  // pin_host: registered for the plan's lifetime; moves across registration pieces stay exact.
  std::vector<double> out(v.size(), NAN);
  {
    cush::Plan<double> plan(cush::DeviceSet::all(), v.size());
    plan.pin_host(v);
    plan.pin_host(out);
    EXPECT_TRUE(cush::is_pinned(inner, inner_bytes));
    plan.scatter(v);
    plan.gather(out);
    plan.wait();
  }
  EXPECT_FALSE(cush::is_pinned(inner, 8));
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(out[i], v[i]) << i;
  cush::PinnedBuffer<int> p(10);
  EXPECT_TRUE(cush::is_pinned(p.data(), 40));
}

TEST(HostOps, PageableMovesDoNotBlockOnEarlierWork) {
  CUSH_REQUIRE_GPUS(1);
  // A pageable cudaMemcpyAsync waits for the work already in its stream; cush's operations must
  // return at once and still deliver the right data. The 300 ms kernel against a 100 ms limit on
  // the call leaves room for a slow host (compute-sanitizer); this checks blocking, not speed.
  using Clock = std::chrono::steady_clock;
  auto seconds_of = [](auto&& f) {
    const auto t0 = Clock::now();
    f();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  for (const auto& order : cush_test::device_orders()) {
    for (std::size_t n : {std::size_t{1000}, std::size_t{3'000'001}}) {  // direct-sized and staged
      for (HostKind kind : {HostKind::pageable, HostKind::registered}) {
        SCOPED_TRACE(cush_test::to_string(order) + " n=" + std::to_string(n) + " " + name(kind));
        HostArray<float> in(n, kind), out(n, kind);
        cush_test::fill_random(in.span());
        cush::Plan<float> plan(cush::DeviceSet(order), n);
        auto busy = [&] { plan.for_each([](cush::Segment<float> s) { cush_test::spin(s.stream(), 300); }); };
        // Untimed warm-up through the staged path: the first staged move after an options change
        // (earlier tests in this process) reallocates the staging buffers, which synchronizes the
        // device once (documented at set_host_transfer_options).
        busy();
        plan.scatter(in.span());
        plan.gather(out.span());
        plan.wait();
        busy();
        // A CUDA tool runs the devices' spins one after another (virtual GPUs: several on one
        // GPU), which says nothing of blocking: the values are still checked below.
        const bool timed = !cush_test::under_cuda_tool();
        const double scatter_s = seconds_of([&] { plan.scatter(in.span()); });
        if (timed) EXPECT_LT(scatter_s, 0.1) << "scatter waited for the kernel";
        plan.for_each([](cush::Segment<float> s) { cush_test::affine(s.data(), s.size(), 2.0F, 1.0F, s.stream()); });
        busy();
        const double gather_s = seconds_of([&] { plan.gather(out.span()); });
        if (timed) EXPECT_LT(gather_s, 0.1) << "gather waited for the kernel";
        plan.wait();
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0F * in[i] + 1.0F) << i;
      }
    }
  }
}
