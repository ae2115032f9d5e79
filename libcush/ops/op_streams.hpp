#pragma once
// The streams one GPU<->GPU operation runs on. Each device taking part gets one working stream
// (the destination plan's stream there, else the source plan's); the operation starts after
// the earlier work of both plans on that device and, when it is done, both plans' streams
// there are ordered after it.

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "cush/layout.hpp"
#include "host/executor.hpp"

namespace cush::detail {

struct TransportResources;  // transports/resources.hpp

/// One side of an operation: a plan's device ids, buffers, streams and lanes (by position), its
/// layout and element size, and what the transports keep for it.
struct Endpoint {
  std::span<const int> ids;
  std::span<void* const> data;
  std::span<const cudaStream_t> streams;
  Lanes* lanes = nullptr;
  const Layout* layout = nullptr;
  std::size_t element_size = 0;
  TransportResources* resources = nullptr;
};

class OpStreams {
 public:
  /// Orders the working stream of every device of `src` and `dst` after both plans' earlier
  /// work on that device. `src` and `dst` may be the same plan.
  OpStreams(const Endpoint& src, const Endpoint& dst);

  [[nodiscard]] std::size_t size() const noexcept { return parts_.size(); }
  /// Index of the participant on CUDA device `device` (which must take part).
  [[nodiscard]] std::size_t index_of(int device) const;
  [[nodiscard]] std::size_t of_src(std::size_t pos) const { return src_part_.at(pos); }
  [[nodiscard]] std::size_t of_dst(std::size_t pos) const { return dst_part_.at(pos); }
  [[nodiscard]] int device(std::size_t part) const { return parts_.at(part).device; }
  /// Device ids of the participants, destination's first, in their plans' order.
  [[nodiscard]] std::vector<int> devices() const;
  [[nodiscard]] cudaStream_t work(std::size_t part) const { return parts_.at(part).work; }
  /// The participant's auxiliary stream k (k < Lanes::aux_streams), forked from its working
  /// stream at first use.
  cudaStream_t aux(std::size_t part, std::size_t k = 0);
  /// A fresh event of the participant's device, for this operation only.
  cudaEvent_t event(std::size_t part);
  /// Records a fresh event in `stream` of participant `part` and returns it.
  cudaEvent_t record(std::size_t part, cudaStream_t stream);
  /// Makes `waiter`'s working stream wait for the start of `on`'s: everything enqueued on it
  /// before the first call with this `on` (one event per `on`, one wait per pair). Call it
  /// before enqueuing the operation's own work on `on`.
  void order(std::size_t waiter, std::size_t on);
  /// Joins the auxiliary streams, applies the cross-device orderings asked for with
  /// after_done(), and orders both plans' streams after the working streams.
  void finish();
  /// At finish(), `waiter`'s working stream also waits for the end of `on`'s (a device whose
  /// buffer another device reads must not overwrite it before the reader is done).
  void after_done(std::size_t waiter, std::size_t on);

 private:
  struct Part {
    int device = -1;
    cudaStream_t work = nullptr;
    std::vector<cudaStream_t> others;  // the other plan's stream on this device, if distinct
    Lanes* lanes = nullptr;
    std::size_t pos = 0;  // position in the lanes' plan
    std::size_t next_event = 0;
    std::array<bool, Lanes::aux_streams> aux_used{};
    cudaEvent_t start = nullptr;  // recorded at the first order() on this participant
  };
  std::vector<Part> parts_;
  std::vector<std::size_t> src_part_;
  std::vector<std::size_t> dst_part_;
  std::vector<std::pair<std::size_t, std::size_t>> joins_;
  std::vector<std::pair<std::size_t, std::size_t>> ordered_;
};

}  // namespace cush::detail
