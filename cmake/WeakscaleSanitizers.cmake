# WEAKSCALE_SANITIZE=ON builds every target with ASan + UBSan; UB aborts instead of warning.
if(WEAKSCALE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # Open MPI's own leaks at MPI_Finalize, suppressed for programs that start MPI (see the source).
  add_library(weakscale_openmpi_under_lsan OBJECT ${CMAKE_CURRENT_LIST_DIR}/sanitizers/openmpi_under_lsan.cpp)
  add_library(weakscale_openmpi_under_lsan_when_launched OBJECT ${CMAKE_CURRENT_LIST_DIR}/sanitizers/openmpi_under_lsan.cpp)
  target_compile_definitions(weakscale_openmpi_under_lsan_when_launched PRIVATE WEAKSCALE_MPI_ONLY_UNDER_MPIRUN)
endif()

# weakscale_mpi_program(target [ONLY_UNDER_MPIRUN]): the target calls MPI_Init (ONLY_UNDER_MPIRUN:
# only when started by mpirun); in the sanitizer build it gets the Open MPI leak suppressions and,
# when it may start MPI, the slow unwinder they need. No effect otherwise.
function(weakscale_mpi_program target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "ONLY_UNDER_MPIRUN" "" "")
  if(WEAKSCALE_SANITIZE AND arg_ONLY_UNDER_MPIRUN)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:weakscale_openmpi_under_lsan_when_launched>)
  elseif(WEAKSCALE_SANITIZE)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:weakscale_openmpi_under_lsan>)
  endif()
endfunction()
