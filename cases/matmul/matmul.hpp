#pragma once
// Case "matmul": C = A B with cuBLAS, tiled over the GPUs by rows of C (seed 002 §2.6.3, Listings
// A.1/A.2). Host matrices are row-major: A is m x n, B n x p, C m x p. Each GPU computes a block of
// whole rows of C from the same rows of A and all of B: A's rows are scattered, B is broadcast and
// C's rows are gathered.
//
// Three variants with one interface, so one test checks all three and one benchmark times all
// three, end to end or on data already resident on the GPUs:
//
//     Variant<T> v(dims, gpus);   // allocates on the GPUs (a cases::Devices)
//     v.run(a, b, c);             // end to end: C = A B from and to host memory; returns when C
//                                 // is there
//     v.multiply();               // C = A B again on the resident A and B (asynchronous)
//     v.wait();                   // until every GPU is done
//     v.download(c);              // the resident C into host memory; returns when it is there
//
// `gpus` names the devices (devices.hpp); the single-GPU reference uses the first. T is float or double.
// The multi-GPU variants run in row blocks: B is broadcast, then block by block A's rows are
// uploaded, multiplied and C's rows downloaded, each on its own stream per GPU, so that the
// uploads, the products and the downloads of different blocks overlap. A third constructor
// argument fixes the number of blocks (block_count() chooses by default); on resident data one
// block, one cuBLAS call per GPU, is fastest. Shared by all variants, and left out of the
// complexity count: the cuBLAS call and the block rule in blas.cpp.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "cush/cush.hpp"
#include "devices.hpp"

namespace cases {
namespace matmul {

/// Matrix shape: A is m x n, B n x p, C m x p (row-major).
struct Dims {
  std::size_t m = 0;
  std::size_t n = 0;
  std::size_t p = 0;
};

/// The seed's problem for size multiplier k: A 400k x 800k, B 800k x 400k, C 400k x 400k.
Dims seed_dims(std::size_t k);
/// Floating-point operations of one product: 2 m n p (a multiply and an add per term). The
/// seed's eq. 2.3 counts m n p and so reports half of this rate.
double flops(Dims d);

// --- shared by all variants -------------------------------------------------------------------

/// How many row blocks the multi-GPU variants pipeline a product in: each GPU's rows are cut
/// into that many near-equal blocks. One block unless each block of A would still hold at least
/// 16 MiB per GPU; at most 8.
std::size_t block_count(Dims d, int gpus, std::size_t element_size);

/// The cuBLAS handle of CUDA device `device` for the variant's GPU at position `lane`, made on
/// first use and kept until release_blas_handles(). One handle per (GPU, position): with virtual
/// GPUs several positions share a GPU and multiply at once on their own streams, which must not
/// share a handle's workspace.
cublasHandle_t blas_handle(int device, std::size_t lane);
/// Destroys the handles made by blas_handle() (call at the end of a program, GPUs idle).
void release_blas_handles();
/// Rows [0, rows) of C = A B on the current device in `stream`, for the variant's GPU at position
/// `lane`: a_rows is rows x d.n, b is d.n x d.p, c_rows is rows x d.p, all row-major device
/// memory. Does nothing when rows == 0.
template <class T>
void gemm_rows(cudaStream_t stream, std::size_t lane, std::size_t rows, Dims d, const T* a_rows, const T* b, T* c_rows);
/// Throws cush::Error naming `what` unless `status` is CUBLAS_STATUS_SUCCESS.
void check_cublas(cublasStatus_t status, const char* what);
/// `d`, or cush::InvalidArgument for an empty matrix or a dimension cuBLAS cannot index.
Dims check_dims(Dims d, const char* where);

// --- the three variants -----------------------------------------------------------------------

/// Single-GPU CUDA reference on gpus.cuda[0].
template <class T>
class Single {
 public:
  Single(Dims d, const Devices& gpus, std::size_t blocks = 0);
  ~Single();
  Single(const Single&) = delete;
  Single& operator=(const Single&) = delete;
  void run(const T* a, const T* b, T* c);
  void multiply();
  void wait();
  void download(T* c);

 private:
  Dims d_;
  int device_;
  cudaStream_t stream_ = nullptr;
  T* a_ = nullptr;
  T* b_ = nullptr;
  T* c_ = nullptr;
};

/// Multi-GPU raw CUDA: per-GPU loops over cudaSetDevice, offsets, buffers, and an upload, a
/// compute and a download stream joined by events (Listing A.1, pipelined like the cush variant).
template <class T>
class MultiCuda {
 public:
  MultiCuda(Dims d, const Devices& gpus, std::size_t blocks = 0);
  ~MultiCuda();
  MultiCuda(const MultiCuda&) = delete;
  MultiCuda& operator=(const MultiCuda&) = delete;
  void run(const T* a, const T* b, T* c);
  void multiply();
  void wait();
  void download(T* c);

 private:
  // Block i of GPU g's rows: the first (rows mod blocks) blocks get one row more.
  [[nodiscard]] std::size_t block_first(int g, std::size_t i) const;
  [[nodiscard]] std::size_t block_rows(int g, std::size_t i) const;
  void product(int g, std::size_t block);
  Dims d_;
  std::vector<int> ids_;  // CUDA devices
  int gpus_;
  std::size_t blocks_;
  std::vector<std::size_t> rows_, first_row_;  // per GPU
  std::vector<cudaStream_t> up_, compute_, down_;
  std::vector<cudaEvent_t> uploaded_, computed_;
  std::vector<T*> a_, b_, c_;
};

/// Multi-GPU cush: A and C in row-partitioned plans, B in a replicated one (Listing A.2's shape);
/// each plan's streams are one lane of the pipeline: uploads, products, downloads.
template <class T>
class MultiCush {
 public:
  MultiCush(Dims d, const Devices& gpus, std::size_t blocks = 0);
  void run(const T* a, const T* b, T* c);
  void multiply();
  void wait();
  void download(T* c);

 private:
  void product(std::size_t block);
  Dims d_;
  std::size_t blocks_;
  cush::Plan<T> a_, c_, b_;  // b_ is destroyed first: the products run on its streams
};

/// cuBLASXt on the CUDA devices gpus.cuda (distinct GPUs: cuBLASXt takes no GPU twice) with
/// square tiles of `block_dim`: the library a user would pick instead. It works on host memory
/// and blocks the caller; its handle is made once.
template <class T>
class Xt {
 public:
  Xt(const Devices& gpus, int block_dim);
  ~Xt();
  Xt(const Xt&) = delete;
  Xt& operator=(const Xt&) = delete;
  /// C = A B from and to host memory; returns when C is there.
  void multiply(const T* a, const T* b, T* c, Dims d);

 private:
  void* handle_ = nullptr;
};

/// End to end from host memory: allocate, upload, multiply, download, free.
template <template <class> class Variant, class T>
void multiply(const T* a, const T* b, T* c, Dims d, const Devices& gpus) {
  Variant<T> v(d, gpus);
  v.run(a, b, c);
}

}  // namespace matmul
}  // namespace cases
