/* SPDX-License-Identifier: MIT */
/*
 * cli_crash.h - the model behind `symdb symbolicate`: the images of an Apple
 * crash report (UUID and load address from its Binary Images / usedImages)
 * and its frames (runtime addresses), resolved from the database in one
 * sorted batch per image, and the text each symbolicated frame gets.
 */
#ifndef SYMDB_CLI_CRASH_H
#define SYMDB_CLI_CRASH_H

#include <stddef.h>
#include <stdint.h>

#include "cli_demangle.h"
#include "cli_util.h"
#include "symdb.h"

#define CRASH_NO_IMAGE UINT32_MAX

struct crash_image {
	char name[256];
	char arch[32];
	symdb_uuid uuid;
	uint64_t load, end; /* end 0: unknown */
	symdb_image *img;   /* NULL: not in the database */
	int nframes;        /* frames that use it */
};

struct crash_frame {
	uint32_t image; /* index into images, or CRASH_NO_IMAGE */
	uint64_t addr;  /* runtime address */
	uint64_t vaddr; /* file address, once resolved */
	symdb_result res;
};

struct crash {
	struct crash_image *im;
	size_t nim, cap_im;
	struct crash_frame *fr;
	size_t nfr, cap_fr;
	symdb_frame *sf; /* resolved frames of every image; res.first indexes it */
	size_t nsf, cap_sf;
};

CLI_HIDDEN void crash_init(struct crash *c);
CLI_HIDDEN void crash_free(struct crash *c);
/* Append an image / a frame; they return the new element (zeroed). */
CLI_HIDDEN struct crash_image *crash_add_image(struct crash *c);
CLI_HIDDEN struct crash_frame *crash_add_frame(struct crash *c);
/* The image whose [load, end] holds addr (end unknown: the nearest load
 * below addr), or CRASH_NO_IMAGE. */
CLI_HIDDEN uint32_t crash_image_of(const struct crash *c, uint64_t addr);

/* Opens every image found in db and resolves all frames, one batch per image.
 * Returns 0 or a negative code (reported). */
CLI_HIDDEN int crash_resolve(struct crash *c, symdb *db, const char *what);

/* Whether a frame was symbolicated (its image is indexed and something is
 * known at its address). */
CLI_HIDDEN int crash_known(const struct crash *c, const struct crash_frame *f);

/* What a symbolicated frame shows: name (demangled), offset from the symbol
 * start, and the outermost frame's file (basename) and line (0: none). */
struct crash_text {
	const char *name;
	uint64_t offset;
	const char *file;
	uint32_t line;
};
CLI_HIDDEN void crash_text(const struct crash *c, const struct crash_frame *f,
                           struct cli_demangler *dm, struct crash_text *t);
/* "name + offset (file:line)" or "name + offset". */
CLI_HIDDEN void crash_print_text(struct cli_out *o, const struct crash_text *t);

/* Lists images with frames that are not in the database on stderr. */
CLI_HIDDEN void crash_report_missing(const struct crash *c, const char *what);

#endif /* SYMDB_CLI_CRASH_H */
