# Warning flags applied per target (never globally) through weakscale_set_warnings().
function(weakscale_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
    -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual)
  if(WEAKSCALE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
