# Lets nvcc compile C++20 in CMake versions that do not know its flag for it (CMake 3.25 stops at
# C++17 for nvcc; nvcc takes -std=c++20 from CUDA 12 on). Included, not called: it sets, in the
# including directory's scope, what CMake's own NVIDIA module sets for the standards it knows, so
# that CUDA_STANDARD 20 and the compile feature cuda_std_20 both work. cush's build includes it,
# and so does cushConfig.cmake for a project that has enabled CUDA.
if(CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA" AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0
   AND NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
endif()
