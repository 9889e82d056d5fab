# SPDX-License-Identifier: MIT
# The warning set every symdb target links PRIVATE (house style §8).
add_library(symdb_warnings INTERFACE)
target_compile_options(symdb_warnings INTERFACE
  -Wall -Wextra -Wshadow -Wstrict-prototypes -Wcast-align -Wpointer-arith
  -Wundef -Wvla $<$<BOOL:${SYMDB_WERROR}>:-Werror>)
# Internal: never exported.  Static libraries carry their PRIVATE link items
# into the export set, so installed targets link it as
# $<BUILD_INTERFACE:symdb_warnings> (see SYMDB_WARNINGS below).
set(SYMDB_WARNINGS $<BUILD_INTERFACE:symdb_warnings>)
