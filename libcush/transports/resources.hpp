#pragma once
// What the transports keep for a plan between its operations: NCCL communicators and peer_kernel
// groups (shared with the other plans of the operations that used them), and the pinned slots of
// the host_staging transport into the plan. A plan destroys them after its streams are done.

#include <memory>
#include <vector>

namespace cush::detail {

class Communicator;   // nccl.hpp
class PeerGroup;      // peer_kernel.hpp
class StagingSlots;   // host_staging.hpp

struct TransportResources {
  std::vector<std::shared_ptr<Communicator>> communicators;
  std::vector<std::shared_ptr<PeerGroup>> peer_groups;
  std::shared_ptr<StagingSlots> staging;
};

/// Adds `item` to `held` unless it is there already.
template <class T>
void hold(std::vector<std::shared_ptr<T>>& held, const std::shared_ptr<T>& item) {
  for (const std::shared_ptr<T>& h : held)
    if (h == item) return;
  held.push_back(item);
}

}  // namespace cush::detail
