# WEAKSCALE_SANITIZE=ON builds every target with ASan + UBSan; UB aborts instead of warning.
if(WEAKSCALE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
