# WEAKSCALE_SANITIZE=ON builds every target with ASan + UBSan; UB aborts instead of warning.
if(WEAKSCALE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # Open MPI's own leaks at MPI_Finalize, suppressed for programs that start MPI (see the source).
  add_library(weakscale_openmpi_under_lsan OBJECT ${CMAKE_CURRENT_LIST_DIR}/sanitizers/openmpi_under_lsan.cpp)
endif()

# weakscale_mpi_program(target): the target calls MPI_Init; in the sanitizer build it gets the
# Open MPI leak suppressions. No effect otherwise.
function(weakscale_mpi_program target)
  if(WEAKSCALE_SANITIZE)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:weakscale_openmpi_under_lsan>)
  endif()
endfunction()
