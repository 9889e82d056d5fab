# SPDX-License-Identifier: MIT
# The warning set every symdb target links PRIVATE (house style §8).
add_library(symdb_warnings INTERFACE)
target_compile_options(symdb_warnings INTERFACE
  -Wall -Wextra -Wshadow -Wstrict-prototypes -Wcast-align -Wpointer-arith
  -Wundef -Wvla $<$<BOOL:${SYMDB_WERROR}>:-Werror>)
