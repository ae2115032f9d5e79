#pragma once
// The peer_kernel transport: one kernel per device moves the device's outgoing pieces with
// stores over the peer links, and the devices order themselves with flags in each other's
// memory instead of cross-device events (docs/device_ops.md, "Small messages").
//
// Per operation every participating device runs one kernel on its working stream, which
//   1. tells every other participant that its earlier work is done (arrival flag = epoch),
//   2. waits for the arrival of all the others (their buffers are free to be written),
//   3. copies its pieces (local ones too) with 16-byte stores where aligned,
//   4. when its last block is done, tells the others (done flag = epoch) and waits for theirs.
// The epoch is a host counter of the participant group; the group is keyed by the ordered
// (device, stream) list, so operations that use one group's flags are ordered by its streams.
//
// If a participant's kernel cannot be launched, the others would wait for it forever: the host
// then sets the group's abort word (pinned host memory every kernel polls while it waits), the
// waiting kernels return, and the group is retired (its flags no longer agree); the next
// operation on those devices and streams makes a fresh one.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace cush::detail {

inline constexpr std::size_t peer_kernel_max_devices = 16;
inline constexpr std::size_t peer_kernel_max_pieces = 16;  // outgoing pieces per device

struct PeerPiece {
  const void* src = nullptr;
  void* dst = nullptr;
  std::size_t bytes = 0;
};

// Flags of one device: arrival[j], done[j] and mid[j] written by participant j, then the block
// counters of the end and of the middle (an all-reduce's two halves).
struct PeerFlags {
  static constexpr std::size_t arrival = 0;
  static constexpr std::size_t done = peer_kernel_max_devices;
  static constexpr std::size_t mid = 2 * peer_kernel_max_devices;
  static constexpr std::size_t counter = 3 * peer_kernel_max_devices;
  static constexpr std::size_t mid_counter = counter + 1;
  static constexpr std::size_t words = mid_counter + 1;
};

/// The size of each of a participant's two scratch slots (PeerReduction::all_reduce_one_shot).
inline constexpr std::size_t peer_scratch_slot_bytes = std::size_t{2} << 20;

/// The largest all-reduce (bytes per replica) that runs in one shot among `group` participants.
/// One shot reads every other replica whole over the links, two shots read 2 (p - 1) / p of one:
/// with two participants that is the same traffic, and one shot has one barrier where two shots
/// have three, so it runs up to a whole slot (2 x H200: 10.4 µs against 19.9 µs at 1 MiB); with
/// more, two shots move less from 512 KiB on (vLLM's custom all-reduce draws the same line).
constexpr std::size_t peer_one_shot_max_bytes(std::size_t group) noexcept {
  return group <= 2 ? peer_scratch_slot_bytes : std::size_t{512} << 10;
}

// A reduction the kernels run in place on the participants' replicas, instead of pieces:
//  - all_reduce_one_shot (small parts): each participant copies its replica into its scratch
//    (the group's, one of two slots by the epoch's parity), tells the others, then combines every
//    participant's scratch into its own replica. One barrier: nobody reads another's replica, and
//    a slot is written again two operations later, when every participant has started the
//    operation in between and so has finished reading it;
//  - all_reduce (two-shot): participant k combines elements [share[k], share[k + 1]) of every
//    replica into its own (reading the others over the links); when every participant has done
//    so (the mid flags), each copies the others' combined shares into its replica;
//  - all_reduce_push (above the one-shot slot, from CUSH_PEER_ALL_REDUCE_PUSH_MIN_KIB, default
//    0; below that size, the two shots): participant k combines elements [share[k], share[k + 1])
//    of every replica and stores the result into every replica. Only participant k reads or
//    writes share k anywhere, and each thread reads its elements of every replica before it
//    stores them, so one pass between the arrival and end barriers does: the two shots' middle
//    barrier is gone, and half of the bytes cross the links as stores instead of loads. The same
//    bytes per port as the two shots;
//  - reduce (one-shot): the root combines every replica into its own; the others only wait;
//  - reduce_spread (three or more participants): participant k combines elements
//    [share[k], share[k + 1]) of every replica into the root's replica (stores over the links).
//    The root's own share is empty (peer_reduce_spread_shares): its port takes in one replica
//    (the others' stores) and gives out one (their reads), the others' about one each way, where
//    the one-shot reduce brings p - 1 replicas into the root's port. Only participant k reads or writes the
//    root's share k, and every thread reads its elements of every replica before it stores them:
//    no other order is needed. The other replicas are only read.
// Elements are counted from each replica's `data` pointer (the part's first element).
struct PeerReduction {
  enum Kind : unsigned { none = 0, all_reduce = 1, reduce = 2, all_reduce_one_shot = 3, reduce_spread = 4, all_reduce_push = 5 };
  unsigned kind = none;
  unsigned type = 0;  // ElementType
  unsigned op = 0;    // ReduceOp
  unsigned root = 0;  // reduce: the participant whose replica receives the result
  std::size_t count = 0;
  void* data[peer_kernel_max_devices] = {};                // each participant's replica, by position
  std::size_t share[peer_kernel_max_devices + 1] = {};     // all_reduce, reduce_spread: the shares' element bounds
  void* scratch[peer_kernel_max_devices] = {};             // all_reduce_one_shot: this epoch's slots
};

// The kernel's parameters (passed by value; well under the 4 KiB limit).
struct PeerKernelArgs {
  PeerPiece pieces[peer_kernel_max_pieces];
  unsigned count = 0;   // pieces used
  unsigned me = 0;      // this device's position in the group
  unsigned group = 0;   // participants
  unsigned epoch = 0;
  const unsigned* abort = nullptr;                      // the group's abort word (host memory)
  unsigned* flags = nullptr;                            // this device's (PeerFlags layout)
  unsigned* peer_flags[peer_kernel_max_devices] = {};  // every participant's, by position
  PeerReduction reduction;                             // kind none: the pieces above
};

/// The element bounds of an all-reduce's shares: `parts` shares of `count` elements, each but
/// the last a multiple of `granularity` elements (bounds[k] to bounds[k + 1] is share k).
[[nodiscard]] std::vector<std::size_t> peer_reduction_shares(std::size_t count, std::size_t parts,
                                                             std::size_t granularity);

/// The element bounds of a spread reduce's shares: as peer_reduction_shares over the `parts - 1`
/// participants other than `root`, whose own share is empty (bounds[root] == bounds[root + 1]).
/// The root then only receives the combined shares (one replica into its port) and its replica
/// is read once by the others: no NVLink port carries more than about one replica each way.
[[nodiscard]] std::vector<std::size_t> peer_reduce_spread_shares(std::size_t count, std::size_t parts, std::size_t root,
                                                                 std::size_t granularity);

/// Launches the kernel for one device on `stream` (the current device must be the stream's): the
/// pieces, or the reduction where args.reduction.kind is not none.
void launch_peer_kernel(const PeerKernelArgs& args, unsigned blocks, cudaStream_t stream);

/// Loads the kernel into `device`'s context now (once per device and process). With CUDA's lazy
/// module loading a kernel is otherwise loaded at its first launch, which may wait for all work
/// on the device, so the first peer_kernel operation would block the host until the device is
/// idle. Plans call it for their devices when they are made.
void preload_peer_kernel(int device);

/// The allocations (flags on each device, the abort word) that peer_kernel groups hold now, in
/// all the process: 0 once every plan that used the transport is gone (tests check this after
/// each run of a fault walk; a constructor that throws must free what it made).
[[nodiscard]] std::size_t peer_group_allocations() noexcept;

/// The flags and epoch of one participant group. Created on first use, shared by the plans that
/// used it, freed when the last of them is destroyed.
class PeerGroup {
 public:
  static std::shared_ptr<PeerGroup> of(std::span<const int> devices, std::span<const cudaStream_t> streams);
  PeerGroup(std::span<const int> devices, std::span<const cudaStream_t> streams);
  ~PeerGroup();
  PeerGroup(const PeerGroup&) = delete;
  PeerGroup& operator=(const PeerGroup&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return devices_.size(); }
  [[nodiscard]] unsigned* flags(std::size_t part) const { return flags_.at(part); }
  /// The scratch slot (peer_scratch_slot_bytes) of `part` for an operation of `epoch`: two per
  /// participant, beside its flags, used by turns.
  [[nodiscard]] void* scratch(std::size_t part, unsigned epoch) const {
    return reinterpret_cast<std::byte*>(flags_.at(part)) + scratch_offset + (epoch % 2) * peer_scratch_slot_bytes;
  }
  static constexpr std::size_t scratch_offset = 256;  // after the flags, 16-byte aligned
  [[nodiscard]] const unsigned* abort_word() const noexcept { return abort_; }
  /// The epoch of the next operation (never 0, which is the flags' initial value).
  unsigned next_epoch();
  /// Makes every kernel of the group that waits return, and retires the group: of() makes a
  /// new one for the same key. Plans keep a retired group until their next peer_kernel
  /// operation, when its kernels have returned.
  void abort() noexcept;
  [[nodiscard]] bool retired() const noexcept { return retired_; }

 private:
  void release() noexcept;
  std::vector<int> devices_;
  std::vector<unsigned*> flags_;
  unsigned* abort_ = nullptr;  // pinned, mapped: read by every participant's kernel
  unsigned epoch_ = 0;
  bool retired_ = false;
};

}  // namespace cush::detail
