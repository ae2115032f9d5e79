// Device sets and topology on real GPUs.

#include <gtest/gtest.h>

#include "core/peer_access.hpp"
#include "cush/cush.hpp"
#include "support/gpu.hpp"

TEST(DeviceSetGpu, AllListsEveryGpuInOrdinalOrder) {
  CUSH_REQUIRE_GPUS(1);
  const cush::DeviceSet all = cush::DeviceSet::all();
  ASSERT_EQ(static_cast<int>(all.size()), cush::DeviceSet::available());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], static_cast<int>(i));
  EXPECT_EQ(cush::DeviceSet::first(1).size(), 1U);
  EXPECT_TRUE(cush::DeviceSet::unavailable_reason().empty());
}

TEST(DeviceSetGpu, KeepsTheOrderGiven) {
  CUSH_REQUIRE_GPUS(2);
  const cush::DeviceSet s{1, 0};
  EXPECT_EQ(s[0], 1);
  EXPECT_EQ(s[1], 0);
  EXPECT_EQ(s.position_of(0), 1);
  EXPECT_EQ(s.position_of(7), -1);
  EXPECT_EQ(s.topology().device(0).id, 1);
  EXPECT_EQ(s.topology().device(1).id, 0);
}

TEST(DeviceSetGpu, RejectsIdsThatDoNotExist) {
  CUSH_REQUIRE_GPUS(1);
  const int n = cush::DeviceSet::available();
  EXPECT_THROW((cush::DeviceSet{n}), cush::InvalidArgument);
  EXPECT_THROW((cush::DeviceSet{0, 0}), cush::InvalidArgument);
  EXPECT_THROW((cush::DeviceSet{-1}), cush::InvalidArgument);
  EXPECT_THROW((void)cush::DeviceSet::first(0), cush::InvalidArgument);
  EXPECT_THROW((void)cush::DeviceSet::first(n + 1), cush::InvalidArgument);
}

TEST(DeviceSetGpu, TopologyReportsMemoryBandwidthAndLinks) {
  CUSH_REQUIRE_GPUS(1);
  const cush::DeviceSet all = cush::DeviceSet::all();
  const cush::Topology& t = all.topology();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const cush::DeviceInfo& d = t.device(i);
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.total_memory, std::size_t{1} << 30);
    EXPECT_GT(d.memory_bandwidth, 1e11) << "theoretical bandwidth should be hundreds of GB/s or more";
    EXPECT_GT(d.multiprocessors, 0);
    EXPECT_FALSE(d.pci_bus_id.empty());
    const std::size_t free_bytes = all.free_memory(i);
    EXPECT_GT(free_bytes, 0U);
    EXPECT_LE(free_bytes, d.total_memory * static_cast<std::size_t>(d.shared_by) + d.shared_by);  // the GPU's
    EXPECT_TRUE(t.link(i, i).peer_access);
  }
  EXPECT_THROW((void)t.link(all.size(), 0), cush::InvalidArgument);
  const std::string text = t.describe();
  EXPECT_NE(text.find(t.device(0).name), std::string::npos) << text;
  std::printf("%s", text.c_str());
}

TEST(DeviceSetGpu, PeerAccessIsEnabledOncePerPair) {
  CUSH_REQUIRE_GPUS(2);
  const cush::DeviceSet s{1, 0};
  s.enable_peer_access();
  s.enable_peer_access();  // a second time is a no-op, not cudaErrorPeerAccessAlreadyEnabled
  const cush::DeviceSet t{0, 1};
  t.enable_peer_access();
  if (s.topology().link(0, 1).peer_access) EXPECT_TRUE(cush::detail::enable_peer_access_once(1, 0));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// The logical view: each device names its GPU, how many devices share it, and its share of the
// GPU's memory and bandwidth; two devices of one GPU are linked as the same GPU.
TEST(DeviceSetGpu, TopologyReportsTheLogicalView) {
  CUSH_REQUIRE_GPUS(1);
  const cush::DeviceSet all = cush::DeviceSet::all();
  const cush::Topology& t = all.topology();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const cush::DeviceInfo& d = t.device(i);
    EXPECT_EQ(d.id, all[i]);
    EXPECT_EQ(d.physical_id, cush::physical_device(d.id));
    EXPECT_EQ(all.physical(i), d.physical_id);
    int sharing = 0;
    for (std::size_t j = 0; j < all.size(); ++j) sharing += t.device(j).physical_id == d.physical_id ? 1 : 0;
    EXPECT_EQ(d.shared_by, sharing);
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, d.physical_id), cudaSuccess);
    EXPECT_EQ(d.total_memory, prop.totalGlobalMem / static_cast<std::size_t>(sharing));
    for (std::size_t j = 0; j < all.size(); ++j) {
      const cush::Link& l = t.link(i, j);
      EXPECT_EQ(l.same_gpu, i != j && t.device(j).physical_id == d.physical_id) << i << " -> " << j;
      if (l.same_gpu) EXPECT_TRUE(l.peer_access);
    }
  }
  EXPECT_EQ(cush::virtual_gpus_active(), cush_test::gpus_are_shared() || all.physical_ids() != all.ids());
  std::printf("%s\n%s", cush::describe_devices().c_str(), t.describe().c_str());
}
