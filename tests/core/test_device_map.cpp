// Logical devices over physical ones (virtual GPUs), as pure host code: the maps and their
// errors, and the rule that only core/cuda_devices.cpp hands device ids to CUDA.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "core/device_map.hpp"
#include "cush/error.hpp"

using cush::detail::DeviceMap;

TEST(DeviceMap, WithoutVirtualGpusEveryDeviceIsItself) {
  const DeviceMap m = DeviceMap::identity(3);
  EXPECT_EQ(m.logical_count(), 3);
  EXPECT_FALSE(m.is_virtual());
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(m.physical(d), d);
    EXPECT_EQ(m.sharing(d), 1);
  }
  EXPECT_EQ(DeviceMap::parse("", 2).logical_count(), 2);
  EXPECT_FALSE(DeviceMap::parse("0,1", 2).is_virtual()) << "a list that is the identity";
}

TEST(DeviceMap, ACountGoesRoundRobin) {
  const DeviceMap m = DeviceMap::parse("8", 3);
  EXPECT_EQ(m.logical_count(), 8);
  EXPECT_TRUE(m.is_virtual());
  for (int d = 0; d < 8; ++d) EXPECT_EQ(m.physical(d), d % 3) << d;
  EXPECT_EQ(m.sharing(0), 3);  // logical 0, 3, 6 on GPU 0
  EXPECT_EQ(m.sharing(2), 2);  // logical 2, 5 on GPU 2
  EXPECT_TRUE(m.same_gpu(1, 7));
  EXPECT_FALSE(m.same_gpu(1, 2));
  EXPECT_EQ(DeviceMap::parse("4", 1).describe(), "4 logical GPUs on 1: 0 0 0 0");
  EXPECT_FALSE(DeviceMap::parse("1", 4).is_virtual()) << "one logical device: GPU 0";
}

TEST(DeviceMap, AListNamesEachLogicalDevicesGpu) {
  const DeviceMap m = DeviceMap::parse("1,0,1", 2);
  EXPECT_EQ(m.logical_count(), 3);
  EXPECT_EQ(m.physical(0), 1);
  EXPECT_EQ(m.physical(1), 0);
  EXPECT_EQ(m.sharing(2), 2);
  EXPECT_EQ(DeviceMap::listed({0, 0}, 1).sharing(1), 2);
  EXPECT_THROW(DeviceMap::listed({0, 2}, 2), cush::InvalidArgument);
}

TEST(DeviceMap, MalformedTextNamesTheVariable) {
  for (const char* text : {"abc", "0", "65", "-1", "1,,2", "2,", " 2", "1.5", "0,5"}) {
    try {
      (void)DeviceMap::parse(text, 2);
      ADD_FAILURE() << "'" << text << "' was accepted";
    } catch (const cush::InvalidArgument& e) {
      EXPECT_EQ(e.argument(), "CUSH_VIRTUAL_GPUS") << text;
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  }
  std::string many = "0";
  for (int i = 0; i < 64; ++i) many += ",0";
  EXPECT_THROW((void)DeviceMap::parse(many, 1), cush::InvalidArgument);
}

TEST(DeviceMap, WithoutAGpuThereIsNothingToMap) {
  EXPECT_EQ(DeviceMap::parse("4", 0).logical_count(), 0);
  EXPECT_EQ(DeviceMap::parse("0,0", 0).logical_count(), 0);
  EXPECT_THROW((void)DeviceMap::parse("nonsense", 0), cush::InvalidArgument) << "still a malformed value";
}

// Every CUDA or NCCL call that names a device takes a physical id; only core/cuda_devices.cpp
// makes them, mapping the logical ids it is given (NCCL's communicator creation, in
// transports/nccl_communicator.cpp, takes the physical ids that file computes). A call anywhere
// else could pass a logical id. ncclCommInitRank takes no id but the current device: in
// mpi/rank_nccl.cpp it runs under a DeviceGuard, which sets the device through the map.
TEST(DeviceMap, OnlyOneFileHandsDeviceIdsToCuda) {
  const std::regex call(
      R"(\b(cudaSetDevice|cudaGetDevice|cudaGetDeviceCount|cudaGetDeviceProperties|cudaDeviceGetAttribute|)"
      R"(cudaDeviceCanAccessPeer|cudaDeviceEnablePeerAccess|cudaDeviceDisablePeerAccess|cudaDeviceGetP2PAttribute|)"
      R"(cudaDeviceGetPCIBusId|cudaDeviceGetByPCIBusId|cudaMemcpyPeerAsync|cudaMemcpyPeer|cudaMemcpy3DPeerAsync|)"
      R"(cudaMemcpy3DPeer|cudaStreamGetDevice|cudaMemPrefetchAsync|cudaMemAdvise|cudaInitDevice|cudaDeviceReset|)"
      R"(cudaSetValidDevices|cudaChooseDevice|ncclCommInitAll|ncclCommInitRank)\s*\()");
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(CUSH_SOURCE_DIR "/libcush")) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".cu" && ext != ".hpp" && ext != ".cuh") continue;
    const std::string rel = std::filesystem::relative(entry.path(), CUSH_SOURCE_DIR "/libcush").string();
    if (rel == "core/cuda_devices.cpp") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch m;
      if (!std::regex_search(line, m, call)) continue;
      if (rel == "transports/nccl_communicator.cpp" && m[1] == "ncclCommInitAll" && line.find("physical") != std::string::npos)
        continue;
      if (rel == "mpi/rank_nccl.cpp" && m[1] == "ncclCommInitRank") continue;
      ADD_FAILURE() << "libcush/" << rel << ":" << number << " calls " << m[1]
                    << " outside core/cuda_devices.cpp: " << line;
    }
  }
  EXPECT_GT(files, 40);
}
