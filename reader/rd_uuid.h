/* SPDX-License-Identifier: MIT */
/*
 * rd_uuid.h - the identity code of reader_uuid.c on a descriptor the caller
 * opened, for the builder (publish_build.c, build_spawn.c), which opens each
 * input once and must compute everything from that one open file (SPEC
 * §12.5).  The public symdb_file_uuid(s) open a path and call these.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_RD_UUID_H
#define SYMDB_RD_UUID_H

#include <stddef.h>
#include <stdint.h>

#include "symdb.h"

#ifndef RD_HIDDEN
#define RD_HIDDEN __attribute__((visibility("hidden")))
#endif

/* The UUID of the ELF or thin Mach-O file open at fd (named path in
 * messages), as symdb_file_uuid() computes it.  Returns 0 or a negative
 * code with "PATH: reason" in eb. */
RD_HIDDEN int rd_file_uuid_fd(int fd, const char *path, symdb_uuid *out, char *eb,
                              size_t ebsz);

/* Every slice of the Mach-O file open at fd, as symdb_file_uuids() lists
 * them: the count (at most max filled), or a negative code. */
RD_HIDDEN int rd_file_images_fd(int fd, const char *path, symdb_file_image *out, size_t max,
                                char *eb, size_t ebsz);

/* What the search for an ELF file's separate debug file needs (SPEC §12.5,
 * the indexer's rules: section headers only): the first NT_GNU_BUILD_ID
 * note of an SHT_NOTE section (1..64 bytes; *id_len 0 if none) and the
 * .gnu_debuglink name (link "" if none) and the CRC-32 it records (into
 * *link_crc, when not NULL and there is a link).  Never fails: an
 * unreadable file has neither. */
#define RD_DEBUG_ID_MAX 64
RD_HIDDEN void rd_elf_debug_refs(int fd, uint8_t id[RD_DEBUG_ID_MAX], size_t *id_len,
                                 char *link, size_t link_sz, uint32_t *link_crc);

/* Whether the ELF file open at fd is a debug file of image of (a GNU
 * build-id): its build-id note is of, and it has DWARF (a .debug_info or
 * .zdebug_info section with contents).  A debug file without DWARF, or one
 * left by an earlier build of the program, is not worth a build. */
RD_HIDDEN int rd_elf_dwarf_of(int fd, const symdb_uuid *of);

/* What a file that is not a regular file or directory is ("fifo",
 * "character device", ...), for "PATH: not a regular file (fifo)". */
RD_HIDDEN const char *rd_mode_name(unsigned mode);

#endif /* SYMDB_RD_UUID_H */
