/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_split.h - split DWARF (-gsplit-dwarf): the .dwo files and the
 * .dwp package the builder opened for an input, and the view of one split
 * unit's sections in them (ix_dwarf_split.c).  Internal.
 */
#ifndef SYMDB_IX_DWARF_SPLIT_H
#define SYMDB_IX_DWARF_SPLIT_H

#include <pthread.h>

#include "ix_dwarf_internal.h"

/* The sections a split unit reads (DWARF 5 §7.3.5; a .dwp's DW_SECT_*). */
#define IX_DWO_NSECS 16

/* One split unit's sections, named as in a .dwo file (".debug_info.dwo"):
 * a .dwo file's own, or the unit's contributions to a .dwp. */
typedef struct ix_dwo_view {
	ix_sections s;
	ix_debug_section secs[IX_DWO_NSECS];
} ix_dwo_view;

/* What the walk knows of split DWARF, shared read-only by its threads
 * except the list of missing files (under mu). */
typedef struct ix_split {
	ix_sections *dwo;      /* opened --dwo files, by path (names[i]) */
	const char **names;
	size_t ndwo;
	ix_sections dwp;       /* the .dwp package, when has_dwp */
	int has_dwp;
	/* The .dwp's .debug_cu_index, parsed (0 units: unusable). */
	uint32_t idx_version, ncols, nunits, nslots;
	const uint8_t *hashes, *rows, *cols, *offs, *sizes;
	pthread_mutex_t mu;
	char **missing;        /* skeleton paths not found, first-seen order */
	uint64_t *missing_id;
	size_t nmissing, capmissing;
} ix_split;

/* Opens the .dwo files and the .dwp of opts into sp (a file that is not
 * ELF or has no .debug_info.dwo is left out, as LLVM leaves it).  Returns
 * 0 or -ENOMEM. */
IX_HIDDEN int ix_split_open(ix_split *sp, const ix_opts *opts);
IX_HIDDEN void ix_split_close(ix_split *sp);

/* The sections of the split unit with DWO id `id` that a skeleton names by
 * `path` (LLVM's comp_dir + dwo_name): from the .dwp when there is one
 * (LLVM 14 then never opens a .dwo), else from the .dwo file opened for
 * that exact path.  Returns 0, or -1 when there is none (the path is then
 * recorded as missing, once, unless a .dwp was given). */
IX_HIDDEN int ix_split_view(ix_split *sp, const char *path, uint64_t id, int version,
			    ix_dwo_view *v);

/* LLVM 14's DWARFUnit::parseDWO path: dwo_name alone when it is absolute
 * or comp_dir is missing or empty, else comp_dir and dwo_name joined as
 * sys::path::append joins them.  Returns 0, or -1 when it does not fit. */
IX_HIDDEN int ix_split_path(char *out, size_t sz, const char *comp_dir, const char *dwo_name);

/* The .debug_info.dwo bytes of every split file of sp. */
IX_HIDDEN uint64_t ix_split_info_bytes(const ix_split *sp);

/* Reports each missing path on opts->want_fd as a want record (SPEC
 * §12.5), unless the job is the builder's second pass or there is no
 * descriptor.  Returns 0 or a negative code. */
IX_HIDDEN int ix_split_report(const ix_split *sp, const ix_opts *opts);

#endif /* SYMDB_IX_DWARF_SPLIT_H */
