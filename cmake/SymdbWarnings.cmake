# SPDX-License-Identifier: MIT
# The warning set every symdb target links PRIVATE (house style §8).
add_library(symdb_warnings INTERFACE)
target_compile_options(symdb_warnings INTERFACE
  -Wall -Wextra -Wshadow -Wstrict-prototypes -Wcast-align -Wpointer-arith
  -Wundef -Wvla $<$<BOOL:${SYMDB_WERROR}>:-Werror>)
# Static libraries carry their PRIVATE link items into the export set, so the
# (compile-option-only, LINK_ONLY for consumers) warnings target must be in it.
install(TARGETS symdb_warnings EXPORT symdbTargets)
