# SPDX-License-Identifier: MIT
# Debian's libdwarf-dev (20210528) ships no pkg-config file: find the header and
# the static archive by hand and expose LibDwarf::LibDwarf.  libdwarf itself
# needs zlib (it inflates SHF_COMPRESSED sections) and libelf on some builds.
find_path(LibDwarf_INCLUDE_DIR NAMES libdwarf.h PATH_SUFFIXES libdwarf)
find_library(LibDwarf_LIBRARY NAMES dwarf)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LibDwarf
  REQUIRED_VARS LibDwarf_LIBRARY LibDwarf_INCLUDE_DIR)
if(LibDwarf_FOUND AND NOT TARGET LibDwarf::LibDwarf)
  add_library(LibDwarf::LibDwarf UNKNOWN IMPORTED)
  set_target_properties(LibDwarf::LibDwarf PROPERTIES
    IMPORTED_LOCATION "${LibDwarf_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LibDwarf_INCLUDE_DIR}")
  find_package(PkgConfig QUIET)
  pkg_check_modules(_ld_zlib QUIET IMPORTED_TARGET zlib)
  pkg_check_modules(_ld_elf QUIET IMPORTED_TARGET libelf)
  if(TARGET PkgConfig::_ld_zlib)
    set_property(TARGET LibDwarf::LibDwarf APPEND PROPERTY
      INTERFACE_LINK_LIBRARIES PkgConfig::_ld_zlib)
  endif()
  if(TARGET PkgConfig::_ld_elf)
    set_property(TARGET LibDwarf::LibDwarf APPEND PROPERTY
      INTERFACE_LINK_LIBRARIES PkgConfig::_ld_elf)
  endif()
endif()
mark_as_advanced(LibDwarf_INCLUDE_DIR LibDwarf_LIBRARY)
