# Run by cushConfig.cmake at the end of a project's configuration when CUDA was not enabled at
# find_package(cush): if the project enabled it later, its .cu files that link cush::cush are
# compiled without the C++20 that cush's headers need. Says what to do.
get_property(_cush_languages_now GLOBAL PROPERTY ENABLED_LANGUAGES)
if("CUDA" IN_LIST _cush_languages_now)
  get_target_property(_cush_features cush::cush INTERFACE_COMPILE_FEATURES)
  if(NOT "cuda_std_20" IN_LIST _cush_features)
    message(WARNING "cush: CUDA was enabled after find_package(cush), so .cu files that link cush::cush "
                    "are not compiled as C++20, which cush's headers need (nvcc would fail with errors such "
                    "as \"namespace std has no member span\"). Enable CUDA first: project(<name> LANGUAGES "
                    "CXX CUDA), or enable_language(CUDA) before find_package(cush).")
  endif()
  unset(_cush_features)
endif()
unset(_cush_languages_now)
