#pragma once
// The interface every transport implements (peer.cpp, nccl.cpp, host_staging.cpp,
// peer_kernel.cpp): can it run this operation on these devices, and enqueue it. The GPU<->GPU
// operations (ops/device_ops.cpp) describe an operation once, pick a transport through this
// interface (transport.hpp: the user's choice or the TransportTable, with fallbacks) and hand it
// the operation; nothing outside a transport's file knows how that transport moves bytes.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cush/layout.hpp"
#include "cush/reduce.hpp"
#include "cush/transport.hpp"
#include "host/transfer.hpp"
#include "ops/op_streams.hpp"

namespace cush::detail {

/// One GPU<->GPU operation as the transports see it. `src` and `dst` are the two plans' sides;
/// broadcasts and reductions run within one plan, given as both.
class Operation {
 public:
  Collective kind = Collective::copy;
  Endpoint src;
  Endpoint dst;
  /// The elements that move (the whole extent but for copies of a part).
  Range part;
  /// The root's position in the plan of a broadcast or reduce.
  std::size_t root = 0;
  /// Of reductions.
  ElementType type = ElementType::uint8;
  ReduceOp op = ReduceOp::sum;
  /// The pairs of distinct devices (CUDA ids, source first) between which data moves.
  std::vector<std::pair<int, int>> links;

  /// `make_list` computes the transfer list on first use (a transport that runs the operation
  /// as one collective never needs it).
  explicit Operation(std::function<TransferList()> make_list) : make_list_(std::move(make_list)) {}
  /// An operation whose list is known already.
  explicit Operation(TransferList list) : list_(std::move(list)) {}

  [[nodiscard]] const TransferList& list() const;
  /// True if either plan's stream on some device is being captured into a graph (asked once).
  [[nodiscard]] bool capturing() const;
  [[nodiscard]] bool within_one_plan() const noexcept { return src.resources == dst.resources; }
  /// The devices taking part, once each: the destination's, then the source's others.
  [[nodiscard]] std::vector<int> devices() const;

 private:
  std::function<TransferList()> make_list_;
  mutable std::optional<TransferList> list_;
  mutable std::optional<bool> capturing_;
};

/// A way of moving an operation's bytes.
class TransportBackend {
 public:
  virtual ~TransportBackend() = default;
  /// Empty if this transport can run `op`; otherwise why not, in words that complete "<name>
  /// was asked for, but ..." (the InvalidArgument a forced choice raises).
  [[nodiscard]] virtual std::string refusal(const Operation& op) const = 0;
  /// The transport that `automatic` tries when this one refuses an operation.
  [[nodiscard]] virtual Transport fallback() const noexcept = 0;
  /// Enqueues `op` on `streams` (made from op.src and op.dst; the caller finishes them).
  virtual void enqueue(const Operation& op, OpStreams& streams) const = 0;
};

/// The backend of a transport (not `automatic`).
[[nodiscard]] const TransportBackend& backend(Transport t);

/// The transport of `op`: the one `options` forces if it can run it (else InvalidArgument from
/// `where`, saying why not), or the TransportTable's choice for the operation and `bytes`, then
/// its fallbacks where one refuses (host_staging refuses nothing). Without links between two
/// devices (copies within devices only): peer.
[[nodiscard]] const TransportBackend& choose_backend(const Operation& op, std::size_t bytes, const CommOptions& options,
                                                     const char* where);

/// True if `stream` is being captured into a graph.
[[nodiscard]] bool capturing(cudaStream_t stream);

/// Readies a device for the transports when a plan is made on it (see preload_peer_kernel).
void prepare_transports(int device);

}  // namespace cush::detail
