/* SPDX-License-Identifier: MIT */
/*
 * `symdb info`: describe one index file (header facts, table counts,
 * BUILD_INFO counters) and verify it with symdb_image_verify(), which checks
 * every table checksum and invariant that a normal open skips.  The image is
 * named by an index file path (*.symdb, opened without any catalog), by the
 * binary it was built from, or by its UUID.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cli_fault.h"
#include "cli_maint.h"
#include "cli_slice.h"
#include "cli_target.h"
#include "cli_util.h"
#include "symdb.h"

static const char *uuid_kind_name(unsigned kind)
{
	switch (kind) {
	case SYMDB_UUID_GNU_BUILD_ID: return "GNU build-id";
	case SYMDB_UUID_MACHO: return "Mach-O LC_UUID";
	case SYMDB_UUID_FALLBACK: return "fallback hash";
	default: return "unknown kind";
	}
}

/* ELF e_type / Mach-O filetype (SPEC §5 Object_Type), by the name of the
 * constant in elf.h / mach-o/loader.h. */
static const char *object_type_name(unsigned fmt, unsigned type, char *buf, size_t bufsz)
{
	static const char *const elf[] = { "none (ET_NONE)", "relocatable object (ET_REL)",
		                           "executable (ET_EXEC)",
		                           "shared object or PIE (ET_DYN)", "core file (ET_CORE)" };
	static const char *const macho[] = {
		NULL, "object (MH_OBJECT)", "executable (MH_EXECUTE)", "fixed VM library (MH_FVMLIB)",
		"core file (MH_CORE)", "preloaded executable (MH_PRELOAD)", "dynamic library (MH_DYLIB)",
		"dynamic linker (MH_DYLINKER)", "bundle (MH_BUNDLE)", "dylib stub (MH_DYLIB_STUB)",
		"debug companion, dSYM (MH_DSYM)", "kernel extension (MH_KEXT_BUNDLE)",
		"file set (MH_FILESET)",
	};
	if (fmt == 2 && type < sizeof macho / sizeof macho[0] && macho[type])
		return macho[type];
	if (fmt != 2 && type < sizeof elf / sizeof elf[0])
		return elf[type];
	snprintf(buf, bufsz, "unknown (%s %u)", fmt == 2 ? "filetype" : "e_type", type);
	return buf;
}

/* Header flag names (SPEC §5.1), comma-separated; "none" for 0. */
static const char *flag_names(uint32_t flags, char *buf, size_t bufsz)
{
	static const char *const names[] = {
		"UUID_FALLBACK (the image had no build-id)", "HAS_DWARF (debug information indexed)",
		"PARTIAL (malformed DWARF units skipped)",
	};
	size_t len = 0;
	buf[0] = '\0';
	for (unsigned b = 0; b < 32 && len < bufsz; b++) {
		if (!(flags >> b & 1))
			continue;
		if (b < sizeof names / sizeof names[0])
			len += (size_t)snprintf(buf + len, bufsz - len, "%s%s", len ? ", " : "",
			                        names[b]);
		else /* reserved: a reader rejects them, so only a damaged file */
			len += (size_t)snprintf(buf + len, bufsz - len, "%sreserved bit %u",
			                        len ? ", " : "", b);
	}
	return flags ? buf : "none";
}

/* BUILD_INFO index 8 (SPEC §7.7): which symbol table was indexed. */
static const char *symbol_source_name(uint64_t v)
{
	switch (v) {
	case 0: return "none";
	case 1: return "ELF .symtab";
	case 2: return "ELF .dynsym only";
	case 3: return "Mach-O LC_SYMTAB";
	default: return "unknown";
	}
}

/* The BUILD_INFO counters (SPEC §7.7), each under its SPEC name. */
static void print_build_info(struct cli_out *o, const symdb_image_info *in)
{
	static const char *const labels[] = {
		"source file bytes", "symbol entries read", "symbols dropped",
		"DWARF units indexed", "DWARF units skipped",
	};
	static const char *const notes[] = { "", "", " (below the base address)", "",
		                             " (malformed)" };
	const uint64_t *bi = in->build_info;
	for (unsigned i = 0; i < in->nbuild_info && i < 16; i++) {
		if (i < 5) {
			cli_out_line(o, "%-20s %llu%s\n", labels[i], (unsigned long long)bi[i],
			             notes[i]);
		} else if (i == 5) {
			cli_out_line(o, "%-20s", "DWARF versions");
			int any = 0;
			for (unsigned v = 0; v < 64; v++)
				if (bi[5] >> v & 1) {
					cli_out_line(o, " %u", v);
					any = 1;
				}
			cli_out_str(o, any ? "\n" : " none\n");
		} else if (i == 6 || i == 7) {
			const char *label = i == 6 ? "source XXH3" : "debug file XXH3";
			if (bi[i])
				cli_out_line(o, "%-20s %016llx\n", label, (unsigned long long)bi[i]);
			else
				cli_out_line(o, "%-20s %s\n", label,
				             i == 6 ? "not recorded" : "none (no separate debug file)");
		} else if (i == 8) {
			cli_out_line(o, "%-20s %s\n", "symbol table", symbol_source_name(bi[8]));
		} else if (i == 9) { /* Alt_Symbol_Source: the ALT_SYMBOLS table (§7.2.2) */
			cli_out_line(o, "%-20s %s\n", "alt symbol table", symbol_source_name(bi[9]));
		} else {
			/* A counter a later writer added (SPEC §7.7: readers ignore
			 * the ones they do not know): still labelled by its index. */
			char label[32];
			snprintf(label, sizeof label, "BUILD_INFO[%u]", i);
			cli_out_line(o, "%-20s %llu (not known to this symdb)\n", label,
			             (unsigned long long)bi[i]);
		}
	}
}

/* Mach-O cpusubtype by its mach/machine.h name; the high byte holds
 * capability bits (CPU_SUBTYPE_LIB64), not the subtype. */
static const char *cpu_subtype_name(uint32_t cputype, uint32_t sub, char *buf, size_t bufsz)
{
	static const struct {
		uint32_t type, sub;
		const char *name;
	} names[] = {
		{ 0x01000007, 3, "CPU_SUBTYPE_X86_64_ALL" }, { 0x01000007, 8, "CPU_SUBTYPE_X86_64_H" },
		{ 7, 3, "CPU_SUBTYPE_I386_ALL" },            { 0x0100000c, 0, "CPU_SUBTYPE_ARM64_ALL" },
		{ 0x0100000c, 1, "CPU_SUBTYPE_ARM64_V8" },   { 0x0100000c, 2, "CPU_SUBTYPE_ARM64E" },
		{ 12, 0, "CPU_SUBTYPE_ARM_ALL" },            { 12, 9, "CPU_SUBTYPE_ARM_V7" },
		{ 0x0200000c, 0, "CPU_SUBTYPE_ARM64_32_ALL" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].type == cputype && names[i].sub == (sub & 0x00ffffffu)) {
			snprintf(buf, bufsz, "%s (%u)", names[i].name, sub & 0x00ffffffu);
			return buf;
		}
	snprintf(buf, bufsz, "unknown (cpusubtype %u)", sub & 0x00ffffffu);
	return buf;
}

static void print_object(struct cli_out *o, const symdb_image_info *in)
{
	char tbuf[64], mbuf[32];
	if (in->object_format == 2)
		cli_out_line(o, "%-20s Mach-O %u-bit, %s-endian\n", "object format", in->object_class,
		             in->object_endian == 2 ? "big" : "little");
	else
		cli_out_line(o, "%-20s ELF%u, %s-endian\n", "object format", in->object_class,
		             in->object_endian == 2 ? "big" : "little");
	cli_out_line(o, "%-20s %s\n", "object type",
	             object_type_name(in->object_format, in->object_type, tbuf, sizeof tbuf));
	cli_out_line(o, "%-20s %s\n", "machine",
	             cli_machine_name(in->object_format, in->machine, mbuf, sizeof(mbuf)));
	if (in->object_format == 2)
		cli_out_line(o, "%-20s %s\n", "cpu subtype",
		             cpu_subtype_name(in->machine, in->machine_sub, tbuf, sizeof tbuf));
}

/* One line: the bytes of each table present, by its SPEC §6.1 name. */
static void print_table_bytes(struct cli_out *o, const symdb_image_info *in)
{
	static const char *const names[] = {
		NULL, "STRINGS", "SEGMENTS", "SYMBOL_ADDRS", "SYMBOLS", "FILES", "FUNCTIONS",
		"INLINE_ADDRS", "INLINE_MAP", "INLINE_NODES", "LINE_ADDRS", "LINE_ROWS",
		"BUILD_INFO", "SYMBOL_FILES", "ALT_SYMBOL_ADDRS", "ALT_SYMBOLS", "ALT_SYMBOL_FILES",
		"FILE_SOURCES",
	};
	char line[1024];
	size_t len = 0;

	line[0] = 0;
	for (unsigned k = 1; k < sizeof names / sizeof names[0]; k++)
		if (in->table_bytes[k] && len < sizeof line)
			len += (size_t)snprintf(line + len, sizeof line - len, "%s%s %llu",
			                        len ? ", " : "", names[k],
			                        (unsigned long long)in->table_bytes[k]);
	cli_out_line(o, "%-20s %s\n", "table bytes", line);
}

static void print_info(struct cli_out *o, const symdb_image_info *in, const char *index_path,
                       const char *storage)
{
	char hex[2 * SYMDB_UUID_MAX + 1], fbuf[1024];
	symdb_uuid_format(&in->uuid, hex);
	cli_out_line(o, "%-20s %s (%s)\n", "uuid", hex, uuid_kind_name(in->uuid.kind));
	cli_out_line(o, "%-20s %s\n", "image name", in->image_name ? in->image_name : "");
	if (index_path)
		cli_out_line(o, "%-20s %s\n", "index file", index_path);
	if (storage[0])
		cli_out_line(o, "%-20s %s\n", "storage", storage);
	cli_out_line(o, "%-20s %u.%u\n", "format version", in->format_major, in->format_minor);
	print_object(o, in);
	cli_out_line(o, "%-20s %s\n", "flags", flag_names(in->flags, fbuf, sizeof fbuf));
	cli_out_line(o, "%-20s %u\n", "address size", in->address_size);
	cli_out_line(o, "%-20s 0x%llx\n", "base address", (unsigned long long)in->base_address);
	cli_out_line(o, "%-20s %llu\n", "index bytes", (unsigned long long)in->file_size);
	cli_out_line(o, "%-20s %llu\n", "symbols", (unsigned long long)in->nsymbols);
	cli_out_line(o, "%-20s %llu\n", "functions", (unsigned long long)in->nfunctions);
	cli_out_line(o, "%-20s %llu\n", "inline nodes", (unsigned long long)in->ninline_nodes);
	cli_out_line(o, "%-20s %llu\n", "line rows", (unsigned long long)in->nline_rows);
	cli_out_line(o, "%-20s %llu\n", "files", (unsigned long long)in->nfiles);
	cli_out_line(o, "%-20s %llu\n", "segments", (unsigned long long)in->nsegments);
	print_table_bytes(o, in);
	print_build_info(o, in);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* An index file's name: NAME.symdb, or its cold form NAME.symdb.lz4. */
static int is_index_name(const char *s)
{
	const char *idx = symdb_layout_name(SYMDB_LAYOUT_INDEX_EXT);
	const char *cold = symdb_layout_name(SYMDB_LAYOUT_COLD_EXT);
	size_t n = strlen(s), c = strlen(cold);

	if (ends_with(s, idx))
		return 1;
	if (n < c || strcmp(s + n - c, cold) != 0)
		return 0;
	return n - c >= strlen(idx) && strncmp(s + n - c - strlen(idx), idx, strlen(idx)) == 0;
}

/* Which forms are on disk (SPEC §12.8): "file", "cold" or both, and the
 * bytes they take. */
static void describe_storage(const struct cli_storage *sg, char *buf, size_t bufsz)
{
	const char *what = sg->forms == CLI_STORED_COLD ? "cold (LZ4, thawed on the next query)"
	                   : sg->forms == CLI_STORED_FILE ? "file"
	                   : sg->forms ? "file, and a redundant cold copy"
	                               : "missing";
	snprintf(buf, bufsz, "%s, %llu bytes on disk", what, (unsigned long long)sg->disk_bytes);
}

/* The index file shown: the path given, or DB/<file> from the catalog. */
static const char *index_path(symdb *db, const symdb_image_info *in, const char *target,
                              char *buf, size_t bufsz, char *storage, size_t storage_sz)
{
	symdb_entry e;
	struct cli_storage sg;
	char names[4096];
	storage[0] = 0;
	if (!db) {
		if (ends_with(target, symdb_layout_name(SYMDB_LAYOUT_COLD_EXT)))
			snprintf(storage, storage_sz, "cold (LZ4), decompressed in memory");
		return target;
	}
	e.sz = sizeof e;
	if (symdb_lookup(db, &in->uuid, &e, names, sizeof(names)) < 0 || !e.file)
		return NULL;
	if (cli_entry_storage(symdb_dir(db), e.file, &sg) == 0)
		describe_storage(&sg, storage, storage_sz);
	snprintf(buf, bufsz, "%s/%s", symdb_dir(db), e.file);
	return buf;
}

/* Open the image named by `target`; returns 0 or minus an exit code. */
static int open_target(const struct cli_global *g, const char *target, symdb **db,
                       symdb_image **img)
{
	char err[512] = "";
	/* info looks, it never thaws a cold image (SPEC §12.8) */
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_NO_THAW, .errbuf = err,
	           .errbuf_sz = sizeof(err));
	symdb_uuid id;
	int rc, is_file = access(target, F_OK) == 0;
	if (is_file && is_index_name(target)) {
		rc = symdb_image_open_file(target, &o, img);
		if (rc < 0)
			cli_err_lib(target, rc, err);
		return rc < 0 ? -cli_exit_for(rc) : 0;
	}
	/* "FILE:ARCH" picks a slice of a universal Mach-O file (cli_slice.c). */
	int slice = is_file || strchr(target, ':') != NULL;
	if (!slice && !cli_is_uuid_arg(target)) {
		cli_err(target, "no such file, and not a UUID");
		return -CLI_EXIT_FAILED;
	}
	rc = cli_open_db(g->db_dir, &o, db);
	if (rc < 0) {
		const char *dir = g->db_dir ? g->db_dir : "(default database)";
		if (rc == -ENOENT)
			cli_err(dir, "no symdb database here");
		else
			cli_err_lib(dir, rc, err);
		return -CLI_EXIT_DATABASE;
	}
	cli_fault_guard(*db); /* truncated while read: damaged, not SIGBUS */
	err[0] = '\0';
	char file[4096];
	const char *arch = slice ? cli_split_arch(target, file, sizeof file) : NULL;
	if (slice && (rc = cli_open_slice(*db, arch ? file : target, arch, &o, NULL, img, NULL, 0)) <= 0)
		return rc;
	if (slice && !is_file) {
		cli_err(target, "no such file, and not a UUID");
		return -CLI_EXIT_FAILED;
	}
	/* A UUID, or a unique prefix of one (cli_target.c). */
	if (!is_file && (rc = cli_uuid_resolve(*db, target, &id)) < 0)
		return rc;
	rc = is_file ? symdb_image_open_binary(*db, target, &o, img)
	             : symdb_image_open_uuid(*db, &id, &o, img);
	if (rc == SYMDB_E_NOT_INDEXED)
		cli_err(target, "not indexed in this database");
	else if (rc < 0)
		cli_err_lib(target, rc, err);
	return rc < 0 ? -cli_exit_for(rc) : 0;
}

int cli_cmd_info(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	const char *target = NULL;
	for (int i = 1; i < argc; i++) {
		int m = cli_opt_common(&g, "info", argc, argv, &i);
		if (m < 0)
			return CLI_EXIT_USAGE;
		if (m == CLI_OPT_HELP)
			return CLI_EXIT_OK;
		if (m == CLI_OPT_TAKEN) {
			continue;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_err(NULL, "info: unknown option '%s' (see 'symdb help info')", argv[i]);
			return CLI_EXIT_USAGE;
		} else if (target) {
			cli_err(NULL, "info: give one image (see 'symdb help info')");
			return CLI_EXIT_USAGE;
		} else {
			target = argv[i];
		}
	}
	if (!target) {
		cli_err(NULL, "info: which image? (see 'symdb help info')");
		return CLI_EXIT_USAGE;
	}
	symdb *db = NULL;
	symdb_image *img = NULL;
	int rc = open_target(&g, target, &db, &img);
	if (rc < 0) {
		cli_fault_unguard();
		symdb_close(db);
		return -rc;
	}
	symdb_image_info info;
	info.sz = sizeof info;
	symdb_image_get_info(img, &info);
	struct cli_out out;
	int ex = CLI_EXIT_OK;
	if (cli_out_init(&out, stdout, 16 * 1024) == 0) {
		char path[8192], storage[128];
		const char *ip = index_path(db, &info, target, path, sizeof(path), storage,
		                            sizeof(storage));
		print_info(&out, &info, ip, storage);
		char err[512] = "";
		rc = symdb_image_verify(img, CLI_EB_OPTS(err, sizeof(err)));
		/* Truncated while it was read (cli_fault.c): what was read and
		 * printed may be zeros. */
		if (symdb_image_fault_check(img) < 0) {
			snprintf(err, sizeof(err), "index file changed while in use (truncated?)");
			rc = SYMDB_E_CORRUPT;
		}
		if (rc == 0) {
			cli_out_line(&out, "%-20s ok\n", "verify");
		} else {
			cli_out_lib_line(&out, "%-20s DAMAGED: %s\n", "verify",
			             err[0] ? err : symdb_strerror(rc));
			ex = CLI_EXIT_DAMAGED;
		}
		if (cli_out_fini(&out) < 0 && ex == CLI_EXIT_OK)
			ex = CLI_EXIT_FAILED;
		if (rc < 0)
			cli_err_lib(target, rc, err);
	} else {
		ex = CLI_EXIT_FAILED;
	}
	symdb_image_close(img);
	cli_fault_unguard();
	symdb_close(db);
	return ex;
}
