# FindNCCL
# --------
# Finds NCCL where our machines keep it: inside the CUDA toolkit (e.g. /usr/local/cuda-13.0/lib)
# or from the distribution packages (/usr/include, /usr/lib/x86_64-linux-gnu). Set NCCL_ROOT to
# point somewhere else.
#
# Result: target NCCL::nccl, NCCL_FOUND, NCCL_VERSION, NCCL_INCLUDE_DIR, NCCL_LIBRARY.

if(NOT CUDAToolkit_FOUND)
  find_package(CUDAToolkit QUIET)
endif()

set(_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR})

find_library(NCCL_LIBRARY NAMES nccl
  HINTS ${_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)

# Prefer the header that sits next to the library we found.
set(_nccl_header_hints ${_nccl_hints})
if(NCCL_LIBRARY)
  get_filename_component(_nccl_libdir "${NCCL_LIBRARY}" DIRECTORY)
  list(PREPEND _nccl_header_hints "${_nccl_libdir}/.." "${_nccl_libdir}/../..")
endif()
find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${_nccl_header_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_ver REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${_part} +([0-9]+)" _m "${_nccl_ver}")
    set(_nccl_${_part} "${CMAKE_MATCH_1}")
  endforeach()
  set(NCCL_VERSION "${_nccl_MAJOR}.${_nccl_MINOR}.${_nccl_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL
  REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
  VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_LIBRARY NCCL_INCLUDE_DIR)
