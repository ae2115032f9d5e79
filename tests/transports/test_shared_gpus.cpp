// Which transports run an operation among logical devices that share one GPU (virtual GPUs):
// pure host code, on a process map of 4 logical devices over one GPU, which needs no GPU.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/device_map.hpp"
#include "cush/error.hpp"
#include "transports/backend.hpp"
#include "transports/resources.hpp"

namespace {

using cush::Collective;
using cush::Transport;
namespace detail = cush::detail;

class SharedGpus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { detail::set_device_map(detail::DeviceMap::round_robin(4, 1), "test"); }

  // An operation among the devices `ids` (one plan) that moves data between each two.
  detail::Operation operation(Collective kind, const std::vector<int>& devices) {
    ids = devices;
    detail::Operation op(cush::TransferList{});
    op.kind = kind;
    op.src = op.dst = detail::Endpoint{ids, {}, {}, nullptr, nullptr, 8, &resources};
    for (int a : ids)
      for (int b : ids)
        if (a != b) op.links.emplace_back(a, b);
    return op;
  }

  std::vector<int> ids;
  detail::TransportResources resources;
};

TEST_F(SharedGpus, NcclAndPeerKernelRefuseOneGpuTwice) {
  const detail::Operation op = operation(Collective::all_to_all, {0, 1, 2, 3});
  const std::string nccl = detail::backend(Transport::nccl).refusal(op);
  EXPECT_NE(nccl.find("devices 0 and 1 share GPU 0"), std::string::npos) << nccl;
  EXPECT_NE(nccl.find("NCCL cannot put one GPU twice in a communicator"), std::string::npos) << nccl;
  EXPECT_FALSE(detail::backend(Transport::peer_kernel).refusal(op).empty());
  EXPECT_EQ(detail::backend(Transport::peer).refusal(op), "") << "one GPU reaches itself";
  EXPECT_EQ(detail::backend(Transport::host_staging).refusal(op), "");
}

TEST_F(SharedGpus, AutomaticNeverPicksNcclOrThePeerKernel) {
  for (Collective kind : {Collective::copy, Collective::broadcast, Collective::scatter, Collective::gather,
                          Collective::all_gather, Collective::all_to_all, Collective::reduce, Collective::all_reduce}) {
    const detail::Operation op = operation(kind, {3, 1, 0});
    for (std::size_t bytes : {std::size_t{0}, std::size_t{4096}, std::size_t{1} << 20, std::size_t{1} << 30}) {
      const detail::TransportBackend& chosen = detail::choose_backend(op, bytes, {}, "test");
      EXPECT_EQ(&chosen, &detail::backend(Transport::peer)) << cush::to_string(kind) << " at " << bytes << " bytes";
    }
  }
}

TEST_F(SharedGpus, ForcingNcclOrThePeerKernelSaysWhy) {
  const detail::Operation op = operation(Collective::all_reduce, {0, 2});
  for (Transport forced : {Transport::nccl, Transport::peer_kernel}) {
    try {
      (void)detail::choose_backend(op, 1024, cush::CommOptions{forced}, "cush::all_reduce");
      ADD_FAILURE() << cush::to_string(forced) << " was accepted";
    } catch (const cush::InvalidArgument& e) {
      EXPECT_EQ(e.argument(), "options.transport");
      EXPECT_NE(std::string(e.what()).find("devices 0 and 2 share"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(&detail::choose_backend(op, 1024, cush::CommOptions{Transport::host_staging}, "test"),
            &detail::backend(Transport::host_staging));
}

TEST_F(SharedGpus, TheMapIsFixedOnceUsed) {
  (void)detail::device_map();
  EXPECT_THROW(detail::set_device_map(detail::DeviceMap::round_robin(2, 1), "cush::use_virtual_gpus"),
               cush::InvalidArgument);
}

}  // namespace
