// The case studies, each variant on 1..all GPUs. Each case's rows live in its folder
// (cases/<name>/bench_<name>.cpp), with their names, counters and environment.

#include "cush/cush.hpp"
#include "harness.hpp"
#include "matmul.hpp"
#include "roofs.hpp"

void register_scale();      // cases/scale/bench_scale.cpp
void register_matmul();     // cases/matmul/bench_matmul.cpp
void register_advection();  // cases/advection/bench_advection.cpp
void register_lbm();        // cases/lbm/bench_lbm.cpp
void register_fft();        // cases/fft/bench_fft.cpp
void register_karst();      // cases/karst/bench_karst.cpp
void register_rbffd();      // cases/rbffd/bench_rbffd.cpp
void register_wave();       // cases/wave/bench_wave.cpp

namespace {
void register_cases() {
  cush_bench::register_roofs();  // the FMA and copy ceilings, for ratios within one run
  register_scale();
  register_matmul();
  register_advection();
  register_lbm();
  register_fft();
  register_karst();
  register_rbffd();
  register_wave();
}
}  // namespace

int main(int argc, char** argv) {
  const int status = cush_bench::run(argc, argv, "bench_cases", register_cases);
  cases::matmul::release_blas_handles();
  return status;
}
