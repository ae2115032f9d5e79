// The peer transport: copy engines over peer links, each copy pushed by the source's stream;
// reductions are kernels on the destination that read the peer's replica over the link.

#include <string>

#include "core/peer_access.hpp"
#include "transports/backend.hpp"
#include "transports/copy_engines.hpp"

namespace cush::detail {

namespace {

class Peer final : public TransportBackend {
 public:
  std::string refusal(const Operation& op) const override {
    for (const auto& [from, to] : op.links)
      if (!can_reach(from, to))
        return "devices " + std::to_string(from) + " and " + std::to_string(to) + " have no peer access";
    return {};
  }
  Transport fallback() const noexcept override { return Transport::host_staging; }
  void enqueue(const Operation& op, OpStreams& streams) const override {
    for (const auto& [from, to] : op.links) {
      enable_peer_access_once(to, from);  // the destination's stream reads the source
      enable_peer_access_once(from, to);
    }
    execute_copies(op, streams, nullptr);
  }
};

}  // namespace

const TransportBackend& peer_backend() {
  static const Peer instance;
  return instance;
}

}  // namespace cush::detail
