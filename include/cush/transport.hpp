#pragma once
/// @file transport.hpp
/// @brief How bytes move between GPUs, and how cush picks the way for each operation.
///
/// Four transports execute the GPU<->GPU operations of device_ops.hpp:
/// - `peer`: copy engines over peer links (peer access enabled), each copy pushed by the
///   source's stream; reductions read the peer's memory from a kernel. Fastest for large
///   messages on NVLink.
/// - `peer_kernel`: one cush kernel per device stores its pieces over the peer links, and the
///   devices order themselves through flags in each other's memory rather than cross-device
///   events: the fewest host calls, for small messages. An all-reduce of up to 512 KiB runs in
///   one shot (each device copies its replica into a scratch buffer of cush's and combines every
///   device's), a larger one in two (each device combines its share of every replica, then
///   copies the others' combined shares), a reduce in one (the root reads every replica; over three
///   or more devices each device combines its share of every replica into the root's). Lists this kernel cannot take (pieces that
///   must follow others, more than 16 pieces leaving one device, more than 16 devices) run on
///   `peer`. While its kernels wait for the other devices they spin on the GPU, as NCCL's do.
/// - `nccl`: NCCL collectives and grouped send/receive on one communicator per set of devices,
///   made at the set's first nccl operation and kept for the process (release_communicators()).
///   A failure that may leave some devices waiting in a collective for others aborts the
///   communicator (their kernels return; the operation throws NcclError) and the next operation
///   makes a fresh one.
/// - `host_staging`: device -> pinned host buffer -> device, pipelined in chunks; for GPUs that
///   cannot reach each other, or to keep peer links free.
///
/// `automatic` (the default) asks a TransportTable per operation and message size; where the
/// transport it names cannot run the operation, it falls back: `nccl` and `peer_kernel` to
/// `peer`, `peer` to `host_staging` (which runs anything). `peer` needs peer access between the
/// devices that exchange data, `peer_kernel` between every two devices taking part. A forced
/// transport (CommOptions) that cannot run the operation is an InvalidArgument saying why.
///
/// CUDA graph capture: `peer` and `host_staging` enqueue only copies, kernels and event records
/// and waits, and may be captured (tested, see docs/device_ops.md). `nccl` and `peer_kernel` may
/// not: cush refuses them while a plan's stream is being captured, and `automatic` then picks
/// `peer` instead (a replayed peer_kernel would reuse its epochs). cush never synchronizes the
/// host inside an operation.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cush {

/// @brief The way an operation moves bytes between GPUs.
enum class Transport { automatic, peer, nccl, host_staging, peer_kernel };

/// @brief The GPU<->GPU operations, as the transport table names them.
enum class Collective { copy, broadcast, scatter, gather, all_gather, all_to_all, reduce, all_reduce };

inline constexpr std::size_t collective_count = 8;

[[nodiscard]] const char* to_string(Transport t) noexcept;
[[nodiscard]] const char* to_string(Collective c) noexcept;
/// Parses the names to_string gives; throws InvalidArgument on anything else.
[[nodiscard]] Transport parse_transport(std::string_view name);
[[nodiscard]] Collective parse_collective(std::string_view name);

/// @brief Gives back the NCCL communicators the process keeps (one per set of devices that ran an
/// nccl operation; each holds GPU memory on its devices). One a live plan still holds is
/// destroyed with the last such plan; the next nccl operation on a set makes its communicator
/// again (a fraction of a second per set: docs/device_ops.md). Never needed for correctness:
/// what is left is destroyed when the process exits. Returns how many the process kept.
std::size_t release_communicators() noexcept;

/// @brief Options shared by the GPU<->GPU operations.
struct CommOptions {
  /// Force a transport, or let the TransportTable choose (automatic).
  Transport transport = Transport::automatic;
};

/// @brief Which transport to use for each operation and message size (bytes per device).
///
/// For each operation an ordered list of (from_bytes, transport) steps: the transport of the
/// last step whose from_bytes <= the message size applies. Stored as text, one step per line:
/// `<collective> <from_bytes> <transport>`; `#` starts a comment.
class TransportTable {
 public:
  /// The built-in choices, from the measurements in docs/results/device_ops.md.
  static TransportTable defaults();
  /// Parses the text form (see above); throws InvalidArgument naming the line at fault.
  static TransportTable parse(std::string_view text);
  /// The table in use: set_current()'s, else the file named by CUSH_TRANSPORTS, else defaults().
  static const TransportTable& current();
  /// Replaces the table in use for the rest of the process.
  static void set_current(TransportTable table);

  /// Sets the transport from `from_bytes` up (replacing a step at the same size). `automatic`
  /// is not a valid entry.
  void set(Collective c, std::size_t from_bytes, Transport t);
  /// The transport for `bytes` per device (never automatic).
  [[nodiscard]] Transport pick(Collective c, std::size_t bytes) const;
  [[nodiscard]] std::string to_text() const;
  /// Writes to_text() to `path`; throws Error if the file cannot be written.
  void save(const std::string& path) const;
  /// Reads a table written by save().
  static TransportTable load(const std::string& path);

  struct Step {
    std::size_t from_bytes = 0;
    Transport transport = Transport::peer;
    friend bool operator==(const Step&, const Step&) = default;
  };
  [[nodiscard]] const std::vector<Step>& steps(Collective c) const { return steps_.at(static_cast<std::size_t>(c)); }
  friend bool operator==(const TransportTable&, const TransportTable&) = default;

 private:
  std::array<std::vector<Step>, collective_count> steps_;
};

}  // namespace cush
