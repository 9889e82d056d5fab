/* SPDX-License-Identifier: MIT */
/*
 * `symdb export UUID... > BUNDLE` and `symdb import [BUNDLE] < BUNDLE`: move
 * indexed images between machines, so that a fleet builds each binary once
 * and distributes the index files (SPEC §12.7).
 *
 * A bundle is one LZ4 frame (content and block checksums on) holding the
 * magic "SYMDBBN1", then per image u8 UUID length, the UUID, u64 BE file
 * size and the index file's bytes, then a record of UUID length 0.
 *
 * Export reads only through the public API: each image is opened with every
 * checksum verified before a byte is written, so a damaged image is never
 * shipped.  Import streams the decompressed records into temporary files in
 * DB/tmp (memory stays bounded whatever sizes the bundle declares), requires
 * the frame's checksums and the end record, validates every image fully, and
 * only then publishes each through symdb_builder_import_file(), the build's
 * own atomic path (§12.5).  A damaged or truncated bundle publishes nothing.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fsync */
#include <errno.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_maint.h"
#include "cli_util.h"
#include "symdb.h"
#include "symdb_build.h"

#define BN_MAGIC "SYMDBBN1"
#define BN_CHUNK (64u * 1024u)
/* Import limits: a declared size or count past these is a damaged bundle,
 * not a reason to fill the disk. */
#define BN_MAX_FILE (16ull << 30)
#define BN_MAX_IMAGES 65536u

/* ---- export --------------------------------------------------------------- */

struct bn_writer {
	LZ4F_cctx *cctx;
	char *out;
	size_t out_cap;
	int failed;
};

static int bn_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Compress n bytes (n <= BN_CHUNK) to stdout. */
static int bn_put(struct bn_writer *w, const void *p, size_t n)
{
	size_t r = LZ4F_compressUpdate(w->cctx, w->out, w->out_cap, p, n, NULL);
	if (LZ4F_isError(r))
		return -EIO;
	return bn_write_all(1, w->out, r);
}

static int bn_put_u64(struct bn_writer *w, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (56 - 8 * i));
	return bn_put(w, b, 8);
}

/* One image record, from the image as a reader maps it: its index file, or
 * a compacted image's .lz4 decompressed in memory (SYMDB_OPEN_NO_THAW, SPEC
 * §12.8: exporting never thaws).  It must still be the file the catalog
 * describes, which open checks. */
static int bn_put_image(struct bn_writer *w, symdb *db, const symdb_uuid *id, const char *hex)
{
	char err[512] = "";
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_NO_THAW, .errbuf = err,
	           .errbuf_sz = sizeof err);
	symdb_image *img;
	const void *data;
	size_t size, off;
	int rc = symdb_image_open_uuid(db, id, &o, &img);

	if (rc < 0) {
		cli_err_lib(hex, rc, err);
		return rc;
	}
	symdb_image_data(img, &data, &size);
	uint8_t ulen = id->len;
	rc = bn_put(w, &ulen, 1);
	if (rc == 0)
		rc = bn_put(w, id->bytes, id->len);
	if (rc == 0)
		rc = bn_put_u64(w, size);
	for (off = 0; rc == 0 && off < size; off += BN_CHUNK)
		rc = bn_put(w, (const char *)data + off, size - off < BN_CHUNK ? size - off : BN_CHUNK);
	symdb_image_close(img);
	return rc;
}

/* Open every image with all checksums verified before writing anything. */
static int bn_check(symdb *db, const symdb_uuid *ids, int n, char **hex)
{
	for (int i = 0; i < n; i++) {
		char err[512] = "";
		SYMDB_OPTS(symdb_open_opts, o,
		           .flags = SYMDB_OPEN_VERIFY_CHECKSUMS | SYMDB_OPEN_NO_THAW,
		           .errbuf = err, .errbuf_sz = sizeof err);
		symdb_image *img;
		int rc = symdb_image_open_uuid(db, &ids[i], &o, &img);
		if (rc == 0) {
			rc = symdb_image_verify(img, err, sizeof err);
			symdb_image_close(img);
		}
		if (rc < 0) {
			cli_err_lib(hex[i], rc, err);
			return cli_exit_for(rc);
		}
	}
	return 0;
}

static int bn_export(symdb *db, const symdb_uuid *ids, int n, char **hex)
{
	LZ4F_preferences_t prefs;
	struct bn_writer w = { 0 };
	int rc = 0;

	memset(&prefs, 0, sizeof prefs);
	prefs.frameInfo.blockSizeID = LZ4F_max256KB;
	prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
	w.out_cap = LZ4F_compressBound(BN_CHUNK, &prefs) + LZ4F_HEADER_SIZE_MAX;
	w.out = malloc(w.out_cap);
	if (!w.out || LZ4F_isError(LZ4F_createCompressionContext(&w.cctx, LZ4F_VERSION)))
		rc = -ENOMEM;
	if (rc == 0) {
		size_t r = LZ4F_compressBegin(w.cctx, w.out, w.out_cap, &prefs);
		rc = LZ4F_isError(r) ? -EIO : bn_write_all(1, w.out, r);
	}
	if (rc == 0)
		rc = bn_put(&w, BN_MAGIC, 8);
	for (int i = 0; rc == 0 && i < n; i++)
		rc = bn_put_image(&w, db, &ids[i], hex[i]);
	if (rc == 0) {
		uint8_t end = 0;
		rc = bn_put(&w, &end, 1);
	}
	if (rc == 0) {
		size_t r = LZ4F_compressEnd(w.cctx, w.out, w.out_cap, NULL);
		rc = LZ4F_isError(r) ? -EIO : bn_write_all(1, w.out, r);
	}
	LZ4F_freeCompressionContext(w.cctx);
	free(w.out);
	return rc;
}

/* The images to export, in order; hex[i] names ids[i] in messages. */
struct bn_ids {
	symdb_uuid *ids;
	char **hex;
	int n, cap;
};

static int bn_add(struct bn_ids *l, const symdb_uuid *id)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		symdb_uuid *ids = realloc(l->ids, (size_t)cap * sizeof *ids);
		char **hex = ids ? realloc(l->hex, (size_t)cap * sizeof *hex) : NULL;
		if (ids)
			l->ids = ids;
		if (!hex)
			return -ENOMEM;
		l->hex = hex;
		l->cap = cap;
	}
	l->hex[l->n] = malloc(2 * SYMDB_UUID_MAX + 1);
	if (!l->hex[l->n])
		return -ENOMEM;
	l->ids[l->n] = *id;
	symdb_uuid_format(id, l->hex[l->n++]);
	return 0;
}

static int bn_add_entry(const symdb_entry *e, void *arg)
{
	return bn_add(arg, &e->uuid);
}

static void bn_ids_free(struct bn_ids *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->hex[i]);
	free(l->hex);
	free(l->ids);
}

/* Export the listed images (or every image with --all) from db. */
static int bn_export_db(const struct cli_global *g, struct bn_ids *l, int all)
{
	char err[512] = "", dir[4096];
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	symdb *db;
	int rc;

	cli_db_name(g, dir, sizeof dir);
	rc = symdb_open(g->db_dir, &o, &db);
	if (rc < 0) {
		cli_err_lib(dir, rc, err);
		return CLI_EXIT_DATABASE;
	}
	rc = all ? symdb_list(db, bn_add_entry, l) : 0;
	if (rc < 0) {
		cli_err(dir, "%s", symdb_strerror(rc));
		rc = CLI_EXIT_DATABASE;
	}
	if (rc == 0)
		rc = bn_check(db, l->ids, l->n, l->hex);
	if (rc == 0 && bn_export(db, l->ids, l->n, l->hex) < 0)
		rc = CLI_EXIT_FAILED;
	symdb_close(db);
	return rc;
}

int cli_cmd_export(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct bn_ids l = { 0 };
	symdb_uuid id;
	int all = 0, rc = -1;

	for (int i = 1; rc < 0 && i < argc; i++) {
		int m = cli_opt_common(&g, "export", argc, argv, &i);
		if (m < 0) {
			rc = CLI_EXIT_USAGE;
		} else if (m == CLI_OPT_HELP) {
			rc = CLI_EXIT_OK;
		} else if (m == CLI_OPT_TAKEN) {
			continue;
		} else if (!strcmp(argv[i], "--all")) {
			all = 1;
		} else if (symdb_uuid_parse(argv[i], &id) < 0) {
			cli_err(NULL, "export: '%s' is not a UUID (see 'symdb help export')", argv[i]);
			rc = CLI_EXIT_USAGE;
		} else if (bn_add(&l, &id) < 0) {
			rc = CLI_EXIT_FAILED;
		}
	}
	if (rc < 0 && (l.n == 0) == !all) {
		cli_err(NULL, all ? "export: --all takes no UUID (see 'symdb help export')"
		                  : "export: no UUID given (see 'symdb help export')");
		rc = CLI_EXIT_USAGE;
	}
	if (rc < 0 && isatty(1)) {
		cli_err(NULL, "export: refusing to write a bundle to a terminal");
		rc = CLI_EXIT_USAGE;
	}
	if (rc < 0)
		rc = bn_export_db(&g, &l, all);
	bn_ids_free(&l);
	return rc;
}

/* ---- import --------------------------------------------------------------- */

struct bn_staged {
	symdb_uuid uuid;
	char *path;
};

/* The record parser: fed decompressed bytes in any split. */
enum bn_state { BN_MAGIC_S, BN_LEN, BN_UUID, BN_SIZE, BN_DATA, BN_END };

struct bn_reader {
	enum bn_state st;
	uint8_t field[32];
	size_t have, need;  /* bytes of the current fixed field */
	uint64_t left;      /* BN_DATA: bytes still to copy */
	int fd;             /* BN_DATA: the temp file */
	char tmpl[4096];    /* DB/tmp/bundle.XXXXXX */
	struct bn_staged *img;
	size_t n, cap;
	char why[256];
	uint8_t hdr[5];     /* the frame's magic and FLG byte */
	size_t nhdr;
};

static void bn_expect(struct bn_reader *r, enum bn_state st, size_t need)
{
	r->st = st;
	r->have = 0;
	r->need = need;
}

static int bn_bad(struct bn_reader *r, const char *why)
{
	snprintf(r->why, sizeof r->why, "%s", why);
	return -1;
}

/* A fixed-size field is complete: act on it. */
static int bn_field(struct bn_reader *r)
{
	struct bn_staged *s;
	uint64_t size = 0;

	switch (r->st) {
	case BN_MAGIC_S:
		if (memcmp(r->field, BN_MAGIC, 8) != 0)
			return bn_bad(r, "not a symdb bundle (bad magic)");
		bn_expect(r, BN_LEN, 1);
		return 0;
	case BN_LEN:
		if (r->field[0] == 0) {
			bn_expect(r, BN_END, 0);
			return 0;
		}
		if (r->field[0] > SYMDB_UUID_MAX)
			return bn_bad(r, "UUID longer than 32 bytes");
		if (r->n == BN_MAX_IMAGES)
			return bn_bad(r, "more than 65536 images");
		if (r->n == r->cap) {
			size_t cap = r->cap ? 2 * r->cap : 16;
			s = realloc(r->img, cap * sizeof *s);
			if (!s)
				return bn_bad(r, "out of memory");
			r->img = s;
			r->cap = cap;
		}
		memset(&r->img[r->n], 0, sizeof r->img[r->n]);
		r->img[r->n].uuid.len = r->field[0];
		bn_expect(r, BN_UUID, r->field[0]);
		return 0;
	case BN_UUID:
		memcpy(r->img[r->n].uuid.bytes, r->field, r->need);
		bn_expect(r, BN_SIZE, 8);
		return 0;
	case BN_SIZE:
		for (int i = 0; i < 8; i++)
			size = size << 8 | r->field[i];
		if (size > BN_MAX_FILE)
			return bn_bad(r, "an image declares more than 16 GiB");
		r->img[r->n].path = strdup(r->tmpl);
		if (!r->img[r->n].path)
			return bn_bad(r, "out of memory");
		r->fd = mkstemp(r->img[r->n].path);
		if (r->fd < 0) {
			free(r->img[r->n].path);
			return bn_bad(r, "cannot create a temporary file in the database");
		}
		r->n++;
		r->left = size;
		r->st = BN_DATA;
		return size ? 0 : bn_field(r);
	case BN_DATA: /* all bytes copied */
		if (close(r->fd) < 0) {
			r->fd = -1;
			return bn_bad(r, "cannot write a temporary file");
		}
		r->fd = -1;
		bn_expect(r, BN_LEN, 1);
		return 0;
	case BN_END:
		break;
	}
	return bn_bad(r, "data after the end record");
}

static int bn_feed(struct bn_reader *r, const uint8_t *p, size_t n)
{
	while (n) {
		if (r->st == BN_END)
			return bn_bad(r, "data after the end record");
		if (r->st == BN_DATA) {
			size_t k = r->left < n ? (size_t)r->left : n;
			if (bn_write_all(r->fd, (const char *)p, k) < 0)
				return bn_bad(r, "cannot write a temporary file");
			p += k;
			n -= k;
			r->left -= k;
			if (r->left == 0 && bn_field(r) < 0)
				return -1;
			continue;
		}
		size_t k = r->need - r->have < n ? r->need - r->have : n;
		memcpy(r->field + r->have, p, k);
		r->have += k;
		p += k;
		n -= k;
		if (r->have == r->need && bn_field(r) < 0)
			return -1;
	}
	return 0;
}

/* Decompress the whole input through the parser.  0, or -1 with r->why. */
static int bn_read(struct bn_reader *r, int in)
{
	LZ4F_dctx *d;
	uint8_t *ibuf = malloc(BN_CHUNK), *obuf = malloc(BN_CHUNK);
	size_t ret = 1; /* 0 once the frame is complete and its checksum matched */
	int rc = 0;

	if (!ibuf || !obuf || LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION))) {
		free(ibuf);
		free(obuf);
		return bn_bad(r, "out of memory");
	}
	for (;;) {
		ssize_t got = read(in, ibuf, BN_CHUNK);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = bn_bad(r, "read error");
			break;
		}
		if (got == 0)
			break;
		if (ret == 0) {
			rc = bn_bad(r, "data after the end of the LZ4 frame");
			break;
		}
		for (size_t i = 0; r->nhdr < sizeof r->hdr && i < (size_t)got; i++)
			r->hdr[r->nhdr++] = ibuf[i];
		for (size_t off = 0; rc == 0 && off < (size_t)got;) {
			size_t isz = (size_t)got - off, osz = BN_CHUNK;
			ret = LZ4F_decompress(d, obuf, &osz, ibuf + off, &isz, NULL);
			if (LZ4F_isError(ret)) {
				snprintf(r->why, sizeof r->why, "LZ4 frame: %s", LZ4F_getErrorName(ret));
				rc = -1;
				break;
			}
			off += isz;
			rc = bn_feed(r, obuf, osz);
			if (rc == 0 && ret == 0 && off < (size_t)got)
				rc = bn_bad(r, "data after the end of the LZ4 frame");
			if (rc == 0 && isz == 0 && osz == 0 && ret != 0)
				rc = bn_bad(r, "LZ4 frame: the decoder made no progress");
		}
		if (rc)
			break;
	}
	/* Drain output the decoder still holds. */
	while (rc == 0 && ret != 0 && !LZ4F_isError(ret)) {
		size_t isz = 0, osz = BN_CHUNK;
		ret = LZ4F_decompress(d, obuf, &osz, ibuf, &isz, NULL);
		if (osz == 0)
			break;
		rc = bn_feed(r, obuf, osz);
	}
	if (rc == 0 && ret != 0)
		rc = bn_bad(r, "truncated (the LZ4 frame does not end)");
	if (rc == 0 && r->st != BN_END)
		rc = bn_bad(r, "truncated (no end record)");
	/* LZ4 frame FLG byte: Block_Checksum 0x10, Content_Checksum 0x04 (§12.7). */
	if (rc == 0 && (r->hdr[4] & 0x14) != 0x14)
		rc = bn_bad(r, "LZ4 frame without block and content checksums");
	LZ4F_freeDecompressionContext(d);
	free(ibuf);
	free(obuf);
	return rc;
}

/* Every staged image must be a valid index file of the UUID its record
 * names, before any is published. */
static int bn_validate(const struct bn_reader *r, const char *what)
{
	for (size_t i = 0; i < r->n; i++) {
		char err[512] = "", hex[2 * SYMDB_UUID_MAX + 1];
		SYMDB_OPTS(symdb_open_opts, o,
		           .flags = SYMDB_OPEN_VERIFY_CHECKSUMS | SYMDB_OPEN_NO_THAW,
		           .errbuf = err, .errbuf_sz = sizeof err);
		symdb_image *img;
		symdb_image_info info;
		int rc = symdb_image_open_file(r->img[i].path, &o, &img);

		symdb_uuid_format(&r->img[i].uuid, hex);
		if (rc == 0) {
			rc = symdb_image_verify(img, err, sizeof err);
			symdb_image_get_info(img, &info);
			if (rc == 0 && (info.uuid.len != r->img[i].uuid.len ||
			                memcmp(info.uuid.bytes, r->img[i].uuid.bytes, info.uuid.len)))
				rc = SYMDB_E_CORRUPT;
			if (rc == SYMDB_E_CORRUPT && !err[0])
				snprintf(err, sizeof err, "header UUID differs from the record's");
			symdb_image_close(img);
		}
		if (rc < 0) {
			cli_err(what, "bundle rejected, nothing imported: image %s: %s", hex,
			        err[0] ? err : symdb_strerror(rc));
			return -1;
		}
	}
	return 0;
}

static int bn_publish(const struct bn_reader *r, symdb_builder *b, unsigned flags, int quiet,
                      const char *what)
{
	symdb_build_result *res = malloc(sizeof *res);
	int failed = 0;

	if (!res)
		return -1;
	for (size_t i = 0; i < r->n; i++) {
		char err[512] = "", hex[2 * SYMDB_UUID_MAX + 1];
		SYMDB_OPTS(symdb_build_opts, o, .flags = flags, .errbuf = err,
		           .errbuf_sz = sizeof err);
		int rc = symdb_builder_import_file(b, r->img[i].path, &r->img[i].uuid, &o, res);

		symdb_uuid_format(&r->img[i].uuid, hex);
		if (rc < 0) {
			cli_err(what, "image %s: %s", hex, err[0] ? err : symdb_strerror(rc));
			failed = 1;
		} else if (!quiet) {
			printf(res->skipped ? "skipped %s (already indexed)\n" : "imported %s\n", hex);
		}
	}
	free(res);
	return failed ? -1 : 0;
}

static void bn_cleanup(struct bn_reader *r)
{
	if (r->st == BN_DATA && r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; i < r->n; i++) {
		unlink(r->img[i].path);
		free(r->img[i].path);
	}
	free(r->img);
}

int cli_cmd_import(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	const char *file = NULL;
	unsigned flags = 0;
	int quiet = 0;

	for (int i = 1; i < argc; i++) {
		int m = cli_opt_common(&g, "import", argc, argv, &i);
		if (m < 0)
			return CLI_EXIT_USAGE;
		if (m == CLI_OPT_HELP)
			return CLI_EXIT_OK;
		if (m == CLI_OPT_TAKEN)
			continue;
		else if (!strcmp(argv[i], "--force"))
			flags |= SYMDB_BUILD_FORCE;
		else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (!file && (argv[i][0] != '-' || !strcmp(argv[i], "-")))
			file = argv[i];
		else {
			cli_err(NULL, "import: unexpected argument '%s' (see 'symdb help import')",
			        argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	const char *what = file && strcmp(file, "-") ? file : "<stdin>";
	int in = file && strcmp(file, "-") ? open(file, O_RDONLY | O_CLOEXEC) : 0;
	if (in < 0) {
		cli_err(file, "%s", strerror(errno));
		return CLI_EXIT_FAILED;
	}
	char err[512] = "", dir[4096];
	cli_db_name(&g, dir, sizeof dir);
	SYMDB_OPTS(symdb_build_opts, bo, .errbuf = err, .errbuf_sz = sizeof err);
	symdb_builder *b;
	int rc = symdb_builder_open(g.db_dir, &bo, &b);
	if (rc < 0) {
		cli_err_lib(dir, rc, err);
		if (in > 0)
			close(in);
		return CLI_EXIT_DATABASE;
	}
	struct bn_reader *r = calloc(1, sizeof *r);
	if (!r) {
		symdb_builder_close(b);
		return CLI_EXIT_FAILED;
	}
	r->fd = -1;
	bn_expect(r, BN_MAGIC_S, 8);
	if ((size_t)snprintf(r->tmpl, sizeof r->tmpl, "%.4000s/tmp/bundle.XXXXXX", dir) >=
	    sizeof r->tmpl) {
		cli_err(dir, "path too long");
		rc = CLI_EXIT_FAILED;
	} else if (bn_read(r, in) < 0) {
		cli_err(what, "bundle rejected, nothing imported: %s", r->why);
		rc = CLI_EXIT_DAMAGED;
	} else if (bn_validate(r, what) < 0) {
		rc = CLI_EXIT_DAMAGED;
	} else {
		rc = bn_publish(r, b, flags, quiet, what) < 0 ? CLI_EXIT_FAILED : CLI_EXIT_OK;
	}
	fflush(stdout);
	bn_cleanup(r);
	free(r);
	symdb_builder_close(b);
	if (in > 0)
		close(in);
	return rc;
}
