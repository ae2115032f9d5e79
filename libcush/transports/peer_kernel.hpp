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

// Flags of one device: arrival[j] and done[j] written by participant j, then a block counter.
struct PeerFlags {
  static constexpr std::size_t arrival = 0;
  static constexpr std::size_t done = peer_kernel_max_devices;
  static constexpr std::size_t counter = 2 * peer_kernel_max_devices;
  static constexpr std::size_t words = counter + 1;
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
};

/// Launches the kernel for one device on `stream` (the current device must be the stream's).
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
