#pragma once
/// @file transpose.hpp
/// @brief The transpose of a matrix split over GPUs by rows: a local transpose and an
/// all-to-all in one pass over the data.
///
/// `src` holds a rows x cols matrix, row-major, each device a run of whole rows; after
/// `cush::transpose(src, dst, rows, cols)`, `dst` holds its cols x rows transpose the same way:
/// dst element (c, r), global index c * rows + r, is src element (r, c). Every device's kernel
/// reads its own rows once and stores each tile straight into the device that owns its place in
/// `dst` (peer stores over NVLink; plain stores between logical devices of one GPU), so the data
/// crosses memory once, with no packing buffer and no second copy. This is the global transpose
/// of a distributed FFT, or of a change of decomposition from x-slabs to y-slabs.
///
/// A pair of devices without peer access takes the staged path: the source's kernel writes the
/// target's tiles into a scratch buffer (stream-ordered allocation on the source), and a 2D
/// peer copy puts them in place. TransposeOptions::path forces either way (tests, comparisons).
///
/// Like the operations of device_ops.hpp it is asynchronous and stream-ordered: on every device
/// it starts after the earlier work of both plans there, and the later work of both plans there
/// sees its result; nothing blocks the host. Arguments are checked before anything is enqueued
/// (InvalidArgument).
///
/// @code
/// cush::Plan<float2> rows(gpus, n1 * n2);               // n1 x n2, split by rows
/// auto cols = cush::Plan<float2>::alike(rows, n1 * n2);  // n2 x n1, split by rows
/// cush::transpose(rows, cols, n1, n2);
/// @endcode
///
/// From a .cu file, `cush/transpose.cuh` adds an overload that applies a device function to
/// every element on the way (a twiddle factor, a scaling): the same single pass.
///
/// **Pipelined** (TransposeOptions::produce): when the rows are the output of work of your own
/// (a distributed FFT's row transforms), cush can cut each device's rows into chunks, call
/// `produce` for each chunk to enqueue that work, and start moving a chunk as soon as its rows
/// are written, on a second stream, while the next chunk is produced:
///
/// @code
/// cush::TransposeOptions o;
/// o.chunks = 4;  // 0: cush chooses
/// o.produce = [&](const cush::TransposeChunk& c) {
///   row_ffts(c.data, c.rows, c.stream);  // write rows [c.row0, c.row0 + c.rows) of the matrix
/// };
/// cush::transpose(rows, cols, n1, n2, o);
/// @endcode

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>

#include "cush/plan.hpp"

namespace cush {

/// @brief One chunk of a pipelined transpose, as TransposeOptions::produce sees it: rows
/// [row0, row0 + rows) of the source matrix, all on one device.
struct TransposeChunk {
  std::size_t pos = 0;            ///< the device's position in the source plan's device set
  int device = -1;                ///< its cush (logical) id, the current device while produce runs
  cudaStream_t stream = nullptr;  ///< enqueue the work that writes the chunk's rows here
  void* data = nullptr;           ///< the chunk's first element in the source's buffer
  std::size_t row0 = 0;           ///< its first row in the global matrix
  std::size_t rows = 0;           ///< its rows (at least 1)
  std::size_t index = 0;          ///< which chunk of this device's
  std::size_t count = 1;          ///< chunks on this device
};

/// @brief How cush::transpose moves the tiles bound for another device, and whether it is
/// pipelined with the work that writes the rows.
struct TransposeOptions {
  enum class Path {
    automatic,  ///< staged between two GPUs when the rows go in 4 or more chunks (with produce), else
                ///< direct where the two devices reach each other, staged otherwise
    direct,     ///< the kernel stores into the other device (InvalidArgument without peer access)
    staged,     ///< a scratch buffer on the source, then a 2D peer copy (for every other device)
  };
  Path path = Path::automatic;
  /// With `produce`: the chunks each source device's rows are cut into (as even as whole rows
  /// allow; a device with fewer rows gets a chunk a row). 0: cush chooses, 1 where every target
  /// of the device is on its own GPU, else the most of 2, 4 or 8 that divide its rows and leave
  /// at least 16 MiB a chunk. Without `produce` it must be 0 or 1 (InvalidArgument).
  std::size_t chunks = 0;
  /// Called on the host for every chunk, chunk 0 of every device first, then chunk 1, ..., with
  /// the chunk's device current: it enqueues on `chunk.stream` the work that writes the chunk's
  /// rows (and may touch no other rows of the source). The chunk's transpose runs after it, on a
  /// second stream when there are several chunks, so that it overlaps the next chunk's work. If
  /// it throws, what was enqueued is finished, dst is left unspecified and the exception
  /// propagates.
  std::function<void(const TransposeChunk&)> produce;
};

namespace detail {

/// Where one source device's kernel stores the columns [col0, col0 + cols) of its rows: element
/// (r, c) (r global) goes to data[(c - col0) * pitch + r - row_base].
struct TransposeTarget {
  void* data = nullptr;
  std::size_t col0 = 0, cols = 0, pitch = 0, row_base = 0;
};
inline constexpr int transpose_max_targets = 64;
struct TransposeTargets {
  int count = 0;
  std::size_t max_cols = 0;  ///< the widest target's columns
  TransposeTarget t[transpose_max_targets];
};
/// One source device's part: its rows [row0, row0 + rows) of the matrix, at `data`.
struct TransposeSource {
  int device = -1;  ///< cush's (logical) id
  cudaStream_t stream = nullptr;
  const void* data = nullptr;
  std::size_t row0 = 0, rows = 0;
  TransposeTargets targets;
};

/// The host side of one transpose: checks the arguments, orders the streams, lists what each
/// source device's kernel writes, calls the producer, and, after each launch, enqueues the
/// staged copies. Used as: construct; preload(the kernel); for k = 0 .. chunks() - 1, for each source i with
/// k < chunks(i): s = prepare(i, k), launch the kernel of s on s.stream with s.device current,
/// launched(i, k, s.stream); then finish().
class TransposeOp {
 public:
  TransposeOp(const PlanBase& src, PlanBase& dst, std::size_t rows, std::size_t cols, std::size_t element_size,
              const TransposeOptions& options, const char* where);
  ~TransposeOp();
  TransposeOp(const TransposeOp&) = delete;
  TransposeOp& operator=(const TransposeOp&) = delete;

  /// The source devices with rows (none is empty).
  [[nodiscard]] std::size_t sources() const noexcept;
  /// Loads `kernel` (the address of the __global__ function that will run) on every source
  /// device now, once per process: with CUDA's lazy loading a kernel's first launch may wait for
  /// all work on its device, which would stall a pipelined transpose behind its producer.
  void preload(const void* kernel) const;
  /// Source i's chunks, and the most of any source.
  [[nodiscard]] std::size_t chunks(std::size_t i) const;
  [[nodiscard]] std::size_t chunks() const noexcept;
  /// Chunk k of source i: runs the producer (with the device current), orders the stream the
  /// chunk's kernel goes on after it, and returns the chunk's rows and targets.
  TransposeSource prepare(std::size_t i, std::size_t k);
  /// After chunk k of source i is enqueued on `kernel` (prepare's stream): its staged copies,
  /// ordered after it (and after the last chunk the scratch buffers' release).
  void launched(std::size_t i, std::size_t k, cudaStream_t kernel);
  /// Orders both plans' streams after the transpose.
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// cush::transpose for elements of 1, 2, 4, 8 or 16 bytes, compiled in the library.
void transpose_bytes(const PlanBase& src, PlanBase& dst, std::size_t rows, std::size_t cols,
                     std::size_t element_size, const TransposeOptions& options, const char* where);

}  // namespace detail

/// @brief Gives back to the system the GPU memory cush keeps for staged transposes. A staged
/// pair's scratch buffer comes from a pool of cush's on the source device, which keeps the memory
/// when the buffer is freed, so that the next staged transpose takes it again without mapping it
/// (docs/guide.md, "Staging memory"); destroying the last plan alive gives it back as well. Memory whose
/// transpose has not finished on the GPU stays until the next call. Never needed for correctness.
void release_staging_memory() noexcept;

/// dst = the transpose of src, a rows x cols row-major matrix split by whole rows (see the top of
/// the file). Both plans have rows * cols elements; every segment of src holds whole rows (a
/// multiple of cols elements), every segment of dst whole rows of the transpose (a multiple of
/// rows); neither is replicated; they are two plans, on any devices. Elements of 1, 2, 4, 8 or
/// 16 bytes (cush/transpose.cuh takes any type).
template <class T>
void transpose(const Plan<T>& src, Plan<T>& dst, std::size_t rows, std::size_t cols,
               const TransposeOptions& options = {}) {
  detail::transpose_bytes(src, dst, rows, cols, sizeof(T), options, "cush::transpose");
}

}  // namespace cush
