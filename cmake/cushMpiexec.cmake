# cush_mpiexec_command(<var> <ranks>): the mpiexec command line that runs a test with <ranks>
# processes on this host: MPI's own pre-flags, and for Open MPI --oversubscribe (more ranks than
# cores: the tests wait in MPI, they do not compute) and, as root, --allow-run-as-root (CI
# containers run as root). The program and its arguments follow it.
function(cush_mpiexec_command var ranks)
  set(command ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE version ERROR_QUIET)
  if(version MATCHES "Open MPI|OpenRTE")
    list(APPEND command --oversubscribe)
    execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(uid STREQUAL "0")
      list(APPEND command --allow-run-as-root)
    endif()
  endif()
  set(${var} ${command} PARENT_SCOPE)
endfunction()
