// cush::transpose (include/cush/transpose.hpp): the host side that every instantiation of the
// kernel in cush/transpose.cuh shares (checks, stream ordering, targets, staged copies), and the
// plain transpose for elements of 1 to 16 bytes.
//
// Ordering: a source device's kernel writes into every target device's part of dst, so its
// stream first waits for the earlier work of each target (which may still read the old dst), and
// each target's stream finally waits for every source that wrote into it (OpStreams).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/kernel_preload.hpp"
#include "core/peer_access.hpp"
#include "cush/device_guard.hpp"
#include "core/cuda_devices.hpp"
#include "cush/error.hpp"
#include "cush/transpose.cuh"
#include "cush/virtual_gpus.hpp"
#include "host/plan_impl.hpp"
#include "ops/op_streams.hpp"
#include "ops/transpose_rules.hpp"

namespace cush::detail {

namespace {

using PlanImpl = PlanAccess::Impl;

void check_plans(const PlanImpl& src, const PlanImpl& dst, std::size_t rows, std::size_t cols, const char* where) {
  if (&src == &dst) throw InvalidArgument(where, "dst", "is the source plan; a transpose needs two plans");
  if (rows == 0 || cols == 0)
    throw InvalidArgument(where, rows == 0 ? "rows" : "cols", "is 0; the matrix needs at least one element");
  if (cols > src.layout.size() / rows || rows * cols != src.layout.size())
    throw InvalidArgument(where, "src", "holds " + std::to_string(src.layout.size()) + " elements, not rows * cols = " +
                                            std::to_string(rows) + " * " + std::to_string(cols));
  if (dst.layout.size() != src.layout.size())
    throw InvalidArgument(where, "dst", "holds " + std::to_string(dst.layout.size()) + " elements, src " +
                                            std::to_string(src.layout.size()));
  if (src.layout.is_replicated() || dst.layout.is_replicated())
    throw InvalidArgument(where, src.layout.is_replicated() ? "src" : "dst",
                          "is replicated; a transpose moves a matrix split by rows");
  if (src.element_size != dst.element_size)
    throw InvalidArgument(where, "dst", "has elements of " + std::to_string(dst.element_size) + " bytes, src of " +
                                            std::to_string(src.element_size));
  if (dst.devices.size() > static_cast<std::size_t>(transpose_max_targets))
    throw InvalidArgument(where, "dst", "spans " + std::to_string(dst.devices.size()) + " devices; at most " +
                                            std::to_string(transpose_max_targets));
  const auto whole_rows = [&](const PlanImpl& plan, std::size_t row, const char* name, const char* what) {
    for (std::size_t pos = 0; pos < plan.devices.size(); ++pos) {
      const Range& r = plan.layout.segment(pos);
      if (r.count % row != 0 || r.offset % row != 0)
        throw InvalidArgument(where, name, "segment " + std::to_string(pos) + " (elements " + std::to_string(r.offset) +
                                               " + " + std::to_string(r.count) + ") does not hold whole " + what +
                                               " of " + std::to_string(row) +
                                               " elements; use a distribution with that granularity");
    }
  };
  whole_rows(src, cols, "src", "rows");
  whole_rows(dst, rows, "dst", "rows of the transpose");
}

/// Whether source device `from` stores straight into device `to`; `chunks`: the source's rows go in
/// that many (transpose_rules.hpp: the automatic path stages between GPUs from 4 on).
bool direct(int from, int to, TransposeOptions::Path path, std::size_t chunks, const char* where) {
  if (from == to) return true;
  if (path == TransposeOptions::Path::staged) return false;
  if (path == TransposeOptions::Path::automatic && transpose_stages_pipelined(chunks, physical_device(from) == physical_device(to)))
    return false;
  const bool reach = can_access(from, to);
  if (path == TransposeOptions::Path::direct && !reach)
    throw InvalidArgument(where, "options", "path direct, but device " + std::to_string(from) +
                                                " cannot store into device " + std::to_string(to) + " (no peer access)");
  return reach;
}

}  // namespace

struct TransposeOp::Impl {
  Impl(const Endpoint& src, const Endpoint& dst) : ops(src, dst) {}
  OpStreams ops;
  struct Staged {
    int target = 0;  // its entry in the source's targets
    void* scratch = nullptr;
    cudaStream_t stream = nullptr;  // where the copies and the release go
    int device = -1;
    // The 2D copy into the target names both devices (a cudaMemcpy2DAsync inferring them from
    // the pointers was refused between two GPUs); between devices that reach each other (peer
    // access enabled, the scratch pool shared) it runs over the links, else through the host.
    void* dst = nullptr;  // where the source's first row lands
    int dst_device = -1;
    std::size_t dpitch = 0;
    bool released = false;
  };
  struct Source {
    TransposeSource whole;  // all its rows; staged targets point at the whole scratch buffer
    std::size_t part = 0;   // its participant in ops
    std::size_t pos = 0;    // its position in the source plan
    std::size_t chunks = 1;
    std::vector<Staged> staged;
  };
  std::vector<Source> sources;
  std::size_t cols = 0, element_size = 0;
  std::function<void(const TransposeChunk&)> produce;
  bool finished = false;  // finish() ran: the operation was enqueued whole

  /// The sources, their targets and staging buffers; `chunks[g]`: source device g's chunk count.
  void plan_sources(const PlanImpl& src, const PlanImpl& dst, std::size_t rows, const std::vector<char>& straight,
                    const std::vector<std::size_t>& chunks, const char* where);
  void abandon() noexcept;
  void release(Staged& s) noexcept {
    if (s.released || s.scratch == nullptr) return;
    s.released = true;
    // No DeviceGuard: the stream names the device, and a guard may throw (a noexcept function
    // would terminate; found by fault injection).
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFreeAsync(s.scratch, s.stream));
  }
  /// Rows [begin, end) of source i's chunk k, counted from its first row.
  [[nodiscard]] std::pair<std::size_t, std::size_t> chunk_rows(const Source& s, std::size_t k) const {
    return {k * s.whole.rows / s.chunks, (k + 1) * s.whole.rows / s.chunks};
  }
};

namespace {

/// Whether every target of source device g (every device of dst holding a part) is on g's GPU.
bool all_local(const PlanImpl& src, const PlanImpl& dst, std::size_t g) {
  for (std::size_t h = 0; h < dst.devices.size(); ++h)
    if (dst.layout.segment(h).count != 0 && physical_device(dst.devices[h]) != physical_device(src.devices[g])) return false;
  return true;
}

}  // namespace

TransposeOp::TransposeOp(const PlanBase& src_plan, PlanBase& dst_plan, std::size_t rows, std::size_t cols,
                         std::size_t element_size, const TransposeOptions& options, const char* where) {
  PlanImpl& src = PlanAccess::impl(src_plan);
  PlanImpl& dst = PlanAccess::impl(dst_plan);
  check_plans(src, dst, rows, cols, where);
  if (element_size != src.element_size)
    throw InvalidArgument(where, "src", "has elements of " + std::to_string(src.element_size) + " bytes, the kernel " +
                                            std::to_string(element_size));
  if (!options.produce && options.chunks > 1)
    throw InvalidArgument(where, "options", "chunks is " + std::to_string(options.chunks) +
                                                " without produce; chunks pipeline the transpose with the work that "
                                                "produce enqueues");
  // Every pair's way first (a direct path that cannot be is refused before any peer access is
  // enabled: enabled peer access slows later allocations), then peer access for the direct ones,
  // before anything is enqueued.
  const std::size_t nsrc = src.devices.size(), ndst = dst.devices.size();
  std::vector<char> straight(nsrc * ndst, 1);
  std::vector<std::size_t> chunks(nsrc, 1);  // each source's chunks, which the path depends on
  for (std::size_t g = 0; g < nsrc; ++g) {
    const Range& mine = src.layout.segment(g);
    if (options.produce && mine.count != 0)
      chunks[g] = transpose_chunks(options.chunks, mine.count / cols, mine.count * element_size, all_local(src, dst, g));
    for (std::size_t h = 0; h < ndst; ++h)
      if (mine.count != 0 && dst.layout.segment(h).count != 0)
        straight[g * ndst + h] = direct(src.devices[g], dst.devices[h], options.path, chunks[g], where) ? 1 : 0;
  }
  for (std::size_t g = 0; g < nsrc; ++g)
    for (std::size_t h = 0; h < ndst; ++h) {
      const int from = src.devices[g], to = dst.devices[h];
      if (src.layout.segment(g).count == 0 || dst.layout.segment(h).count == 0 || !straight[g * ndst + h] || from == to)
        continue;
      if (!enable_peer_access_once(from, to))
        throw Error(std::string(where) + ": enabling peer access from device " + std::to_string(from) + " to " +
                    std::to_string(to) + " failed");
    }

  impl_ = std::make_unique<Impl>(src.endpoint(), dst.endpoint());
  impl_->cols = cols;
  impl_->element_size = element_size;
  impl_->produce = options.produce;
  try {
    impl_->plan_sources(src, dst, rows, straight, chunks, where);
  } catch (...) {
    // A constructor that throws runs no destructor: free the staging buffers made so far, and
    // let what was enqueued finish (fault injection found both missing).
    impl_->abandon();
    throw;
  }
}

void TransposeOp::Impl::abandon() noexcept {
  try {
    finish_devices(ops.devices());
  } catch (...) {  // out of host memory listing the devices: the frees below still wait in order
  }
  for (auto& source : sources)
    for (auto& s : source.staged) release(s);
}

void TransposeOp::Impl::plan_sources(const PlanImpl& src, const PlanImpl& dst, std::size_t rows,
                                     const std::vector<char>& straight, const std::vector<std::size_t>& chunks,
                                     const char* where) {
  const std::size_t nsrc = src.devices.size(), ndst = dst.devices.size();
  for (std::size_t g = 0; g < nsrc; ++g) {
    const Range& mine = src.layout.segment(g);
    if (mine.count == 0) continue;
    // Listed before anything that may throw below, so that abandon() releases its buffers.
    Source& source = sources.emplace_back();
    source.part = ops.of_src(g);
    source.pos = g;
    TransposeSource& s = source.whole;
    s.device = src.devices[g];
    s.stream = ops.work(source.part);
    s.data = src.data[g];
    s.row0 = mine.offset / cols;
    s.rows = mine.count / cols;
    for (std::size_t h = 0; h < ndst; ++h) {
      const Range& theirs = dst.layout.segment(h);
      if (theirs.count == 0) continue;
      const std::size_t th = ops.of_dst(h);
      ops.order(source.part, th);  // h's earlier work is done with its part of dst
      ops.after_done(th, source.part);  // and its later work sees what g wrote
      TransposeTarget t;
      t.col0 = theirs.offset / rows;
      t.cols = theirs.count / rows;
      if (straight[g * ndst + h]) {
        t.data = dst.data[h];
        t.pitch = rows;
      } else {
        Staged& st = source.staged.emplace_back();
        st.target = s.targets.count;
        st.device = s.device;
        st.stream = s.stream;
        {
          DeviceGuard guard(s.device);
          // From cush's pool, which the destination may read (the application's default pool
          // gives no other device access: a copy from it to another device is refused).
          CUSH_CUDA_CHECK_AT(cudaMallocFromPoolAsync(&st.scratch, s.rows * t.cols * element_size,
                                                     shared_pool(s.device, dst.devices[h]), s.stream),
                             std::string(where) + ": the staging buffer for device " + std::to_string(dst.devices[h]));
        }
        t.data = st.scratch;
        t.pitch = s.rows;
        t.row_base = s.row0;
        st.dst = static_cast<char*>(dst.data[h]) + s.row0 * element_size;
        st.dst_device = dst.devices[h];
        if (can_reach(s.device, st.dst_device)) (void)enable_peer_access_once(s.device, st.dst_device);
        st.dpitch = rows * element_size;
      }
      s.targets.max_cols = std::max(s.targets.max_cols, t.cols);
      s.targets.t[s.targets.count++] = t;
    }
    source.chunks = chunks[g];
  }
}

TransposeOp::~TransposeOp() {
  if (!impl_) return;
  if (!impl_->finished) {
    impl_->abandon();  // a launch or the producer failed: finish what did start before freeing
    return;
  }
  for (auto& source : impl_->sources)
    for (auto& s : source.staged) impl_->release(s);
}

void TransposeOp::preload(const void* kernel) const {
  for (const auto& source : impl_->sources) preload_kernel(source.whole.device, "cush::transpose", kernel);
}

std::size_t TransposeOp::sources() const noexcept { return impl_->sources.size(); }

std::size_t TransposeOp::chunks(std::size_t i) const { return impl_->sources.at(i).chunks; }

std::size_t TransposeOp::chunks() const noexcept {
  std::size_t most = 0;
  for (const auto& s : impl_->sources) most = std::max(most, s.chunks);
  return most;
}

TransposeSource TransposeOp::prepare(std::size_t i, std::size_t k) {
  Impl::Source& source = impl_->sources.at(i);
  const auto [begin, end] = impl_->chunk_rows(source, k);
  const std::size_t elem = impl_->element_size;
  TransposeSource c = source.whole;
  c.row0 += begin;
  c.rows = end - begin;
  c.data = static_cast<const char*>(source.whole.data) + begin * impl_->cols * elem;
  for (const Impl::Staged& st : source.staged) {  // the chunk's block of each scratch buffer
    TransposeTarget& t = c.targets.t[st.target];
    t.data = static_cast<char*>(st.scratch) + begin * t.cols * elem;
    t.pitch = c.rows;
    t.row_base = c.row0;
  }
  if (!impl_->produce) return c;
  {
    DeviceGuard guard(c.device);
    TransposeChunk chunk;
    chunk.pos = source.pos;
    chunk.device = c.device;
    chunk.stream = c.stream;
    chunk.data = const_cast<void*>(c.data);
    chunk.row0 = c.row0;
    chunk.rows = c.rows;
    chunk.index = k;
    chunk.count = source.chunks;
    impl_->produce(chunk);
  }
  if (source.chunks > 1) {  // the chunk moves on a second stream, after its rows are written
    const cudaEvent_t written = impl_->ops.record(source.part, c.stream);
    c.stream = impl_->ops.aux(source.part, 0);
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(c.stream, written, 0));
    // Its staged copies on a third, so that the next chunk's kernel runs beside them.
    if (k == 0)
      for (Impl::Staged& st : source.staged) st.stream = impl_->ops.aux(source.part, 1);
  }
  return c;
}

void TransposeOp::launched(std::size_t i, std::size_t k, cudaStream_t kernel) {
  Impl::Source& source = impl_->sources.at(i);
  const auto [begin, end] = impl_->chunk_rows(source, k);
  const std::size_t elem = impl_->element_size;
  if (!source.staged.empty() && source.staged.front().stream != kernel) {  // the copies wait for the kernel
    const cudaEvent_t packed = impl_->ops.record(source.part, kernel);
    CUSH_CUDA_CHECK(cudaStreamWaitEvent(source.staged.front().stream, packed, 0));
  }
  for (Impl::Staged& s : source.staged) {
    const TransposeTarget& t = source.whole.targets.t[s.target];
    const std::size_t width = (end - begin) * elem;
    copy_2d_between_devices(static_cast<char*>(s.dst) + begin * elem, s.dpitch, s.dst_device,
                            static_cast<char*>(s.scratch) + begin * t.cols * elem, width, s.device, width, t.cols,
                            s.stream);
    if (k + 1 == source.chunks) impl_->release(s);
  }
}

void TransposeOp::finish() {
  impl_->ops.finish();
  impl_->finished = true;
}

namespace {
struct Same {
  template <class T>
  __device__ T operator()(T v, std::size_t, std::size_t) const {
    return v;
  }
};
}  // namespace

void transpose_bytes(const PlanBase& src, PlanBase& dst, std::size_t rows, std::size_t cols, std::size_t element_size,
                     const TransposeOptions& options, const char* where) {
  switch (element_size) {
    case 1: return transpose_with<std::uint8_t>(src, dst, rows, cols, Same{}, options, where);
    case 2: return transpose_with<std::uint16_t>(src, dst, rows, cols, Same{}, options, where);
    case 4: return transpose_with<std::uint32_t>(src, dst, rows, cols, Same{}, options, where);
    case 8: return transpose_with<uint2>(src, dst, rows, cols, Same{}, options, where);
    case 16: return transpose_with<uint4>(src, dst, rows, cols, Same{}, options, where);
    default:
      throw InvalidArgument(where, "src", "has elements of " + std::to_string(element_size) +
                                              " bytes; cush::transpose takes 1, 2, 4, 8 or 16 (cush/transpose.cuh "
                                              "takes any type)");
  }
}

}  // namespace cush::detail

namespace cush {

void release_staging_memory() noexcept { detail::trim_shared_pools(); }

}  // namespace cush
