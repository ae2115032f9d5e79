#pragma once
// One step of an exchange program (grid/exchange_program.hpp) on the GPU: a linear copy (copy
// engine) where the step is one run on both sides, else the box-copy kernel. Shared by the
// exchange of a Field (grid/field_engine.cpp) and of a field over ranks (mpi/rank_exchange.cpp).

#include <cuda_runtime_api.h>

#include <cstddef>

#include "grid/box_copy.hpp"
#include "grid/exchange_program.hpp"

namespace cush::detail {

/// Runs `step` on `stream` (of the step's device, current): `src` and `dst` are the buffers its
/// sides name. A box copy uses at most `max_blocks` thread blocks.
void run_exchange_step(const ExchangeStep& step, void* src, void* dst, std::size_t element_size, cudaStream_t stream,
                       unsigned max_blocks = box_copy_max_blocks);

/// The address of a side's first cell in `base`, its buffer.
[[nodiscard]] void* side_address(void* base, const StepSide& side, std::size_t element_size);

}  // namespace cush::detail
