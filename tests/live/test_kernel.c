/* SPDX-License-Identifier: MIT */
/*
 * test_kernel.c - the kernel source through the public API (symdb_kernel_*),
 * on kallsyms and notes files written here: perf's selection of types and
 * of one symbol per address, its inferred ends, malformed lines skipped and
 * counted, a table of zeros refused with one line, the build-id read from
 * ELF notes (after another note, and not from a truncated one), unknown
 * option bits refused, and batches without a symbolizer.  Every
 * expectation is written from the file text and perf's rules
 * (tools/perf/util/symbol.c), never from symdb's own output.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "symdb.h"

static char dir[4096];

static const char *write_file(const char *name, const void *data, size_t n)
{
	static char path[8][4200];
	static int next;
	char *p = path[next++ % 8];
	snprintf(p, sizeof path[0], "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fwrite(data, 1, n, f);
		fclose(f);
	}
	return p;
}

static const char *name_at(const symdb_kernel *k, uint64_t addr)
{
	const char *name = NULL;
	int rc = symdb_kernel_lookup(k, addr, &name, NULL, NULL, NULL);
	if (rc == SYMDB_E_NOT_FOUND)
		return "";
	CHECK_RC(rc);
	return rc == 0 ? name : "(error)";
}

#define CHECK_NAME(k, addr, want) do { const char *got_ = name_at(k, addr); \
	if (strcmp(got_, want)) { check_failures++; fprintf(stderr, \
	"%s:%d: 0x%llx: got '%s', want '%s'\n", __FILE__, __LINE__, \
	(unsigned long long)(addr), got_, want); } } while (0)

static const char kallsyms[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 t __pi_text\n"
	"ffffffff81000040 w weak_local\n"
	"ffffffff81000040 t local_fn\n"          /* both local: the longer name */
	"ffffffff81000080 W weak_global\n"
	"ffffffff81000080 t a_local\n"           /* non-weak beats weak */
	"ffffffff81000100 r rodata_sym\n"        /* not kept: no boundary */
	"ffffffff81000200 D data_sym\n"
	"ffffffff81000300 a absolute\n"          /* not kept */
	"ffffffff81000400 t $x\n"                /* ARM mapping symbol */
	"ffffffff81000500 T last_text\n"
	"garbage\n"
	"ffffffff81000600 T\n"
	"ffffffff8100060g T bad_hex\n"
	"ffffffff81000600 T name\ttrailing\n"
	"ffffffffc0000000 t m1\t[mod_a]\n"
	"ffffffffc0000800 t m2\t[mod_a]\n"
	"ffffffffc0001000 t b1\t[mod_b\n"
	"ffffffffc0001800 t b1\t[mod_b]\n";

static void test_table(void)
{
	char err[512] = "";
	SYMDB_OPTS(symdb_kernel_opts, o, .errbuf = err, .errbuf_sz = sizeof err,
	           .flags = SYMDB_KERNEL_NO_DWARF,
	           .kallsyms = write_file("kallsyms", kallsyms, sizeof kallsyms - 1));
	symdb_kernel *k = NULL;
	CHECK_RC(symdb_kernel_open(&o, &k));
	if (!k) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	SYMDB_OPTS(symdb_kernel_info, info);
	CHECK_RC(symdb_kernel_get_info(k, &info));
	CHECK(info.skipped_lines == 5);
	/* addresses 0x0, 0x40, 0x80, 0x200, 0x500, c0000000, c0000800, c0001800 */
	CHECK(info.nsyms == 8);
	CHECK(info.vmlinux == NULL);
	CHECK_NAME(k, 0xffffffff81000000, "_stext"); /* global; 1 underscore; longer */
	CHECK_NAME(k, 0xffffffff8100003f, "_stext");
	CHECK_NAME(k, 0xffffffff81000040, "weak_local");
	CHECK_NAME(k, 0xffffffff81000080, "a_local");
	CHECK_NAME(k, 0xffffffff81000150, "a_local"); /* rodata is no boundary */
	CHECK_NAME(k, 0xffffffff81000350, "data_sym");
	CHECK_NAME(k, 0xffffffff81000450, "data_sym");
	/* the last symbol of the image: roundup(0x500 + 4096, 4096) = 0x2000 */
	CHECK_NAME(k, 0xffffffff81001fff, "last_text");
	CHECK_NAME(k, 0xffffffff81002000, "");
	CHECK_NAME(k, 0xffffffff80000000, "");
	CHECK_NAME(k, 0xffffffffc00007ff, "m1");
	/* mod_a's last, up to the page past the next page but not into mod_b */
	CHECK_NAME(k, 0xffffffffc00017ff, "m2");
	CHECK_NAME(k, 0xffffffffc0001800, "b1");
	CHECK_NAME(k, 0xffffffffc0002fff, "b1");
	CHECK_NAME(k, 0xffffffffc0003000, "");
	const char *name, *mod;
	uint64_t start, size;
	CHECK_RC(symdb_kernel_lookup(k, 0xffffffffc0000900, &name, &start, &size, &mod));
	CHECK(start == 0xffffffffc0000800 && size == 0x1000 && mod && !strcmp(mod, "mod_a"));
	CHECK_RC(symdb_kernel_lookup(k, 0xffffffff81000081, &name, &start, &size, &mod));
	CHECK(start == 0xffffffff81000080 && size == 0x180 && mod == NULL);

	/* a batch without a symbolizer: kallsyms answers, input order */
	uint64_t addrs[] = { 0xffffffffc0000001, 0x10, 0xffffffff81000041 };
	symdb_kernel_result r[3];
	CHECK_RC(symdb_kernel_symbolize(k, NULL, addrs, 3, r, sizeof r[0], NULL));
	CHECK(r[0].status == SYMDB_SYM_OK && r[0].source == SYMDB_KERNEL_SRC_KALLSYMS &&
	      !strcmp(r[0].sym_name, "m1") && r[0].module && !strcmp(r[0].module, "mod_a") &&
	      r[0].nframes == 0 && r[0].debug_addr == SYMDB_ADDR_INVALID);
	CHECK(r[1].status == SYMDB_SYM_NO_SYMBOL && r[1].sym_name == NULL);
	CHECK(r[2].status == SYMDB_SYM_OK && !strcmp(r[2].sym_name, "weak_local") &&
	      r[2].sym_addr == 0xffffffff81000040 && r[2].sym_size == 0x40 && !r[2].module);
	/* an older caller's smaller result: only its bytes are written */
	struct {
		int status, error;
		uint32_t source;
	} small[3];
	memset(small, 0xee, sizeof small);
	CHECK_RC(symdb_kernel_symbolize(k, NULL, addrs, 3, (symdb_kernel_result *)(void *)small,
	                                sizeof small[0], NULL));
	CHECK(small[1].status == SYMDB_SYM_NO_SYMBOL && small[2].source == SYMDB_KERNEL_SRC_KALLSYMS);
	symdb_kernel_close(k);
}

static void test_refused(void)
{
	char err[512] = "";
	static const char zeros[] = "0000000000000000 T _text\n0000000000000000 t foo\n"
	                            "0000000000000000 t bar\t[m]\n";
	SYMDB_OPTS(symdb_kernel_opts, o, .errbuf = err, .errbuf_sz = sizeof err,
	           .kallsyms = write_file("zeros", zeros, sizeof zeros - 1));
	symdb_kernel *k = (symdb_kernel *)&o;
	CHECK(symdb_kernel_open(&o, &k) == -EACCES);
	CHECK(k == NULL);
	CHECK(strstr(err, "every address reads as 0: the kernel hides them") != NULL);
	CHECK(strchr(err, '\n') == NULL);

	static const char junk[] = "no\nsymbols here\n";
	o.kallsyms = write_file("junk", junk, sizeof junk - 1);
	CHECK(symdb_kernel_open(&o, &k) == SYMDB_E_BAD_OBJECT);
	CHECK(strstr(err, "no symbols (2 lines skipped)") != NULL);

	o.kallsyms = "/nonexistent/kallsyms";
	CHECK(symdb_kernel_open(&o, &k) == -ENOENT);
	o.flags = 0x80;
	CHECK(symdb_kernel_open(&o, &k) == SYMDB_E_INVAL);
	CHECK(symdb_kernel_open(NULL, NULL) == SYMDB_E_INVAL);
	symdb_kernel_close(NULL);
}

/* One ELF note: namesz, descsz, type, name and desc padded to 4. */
static size_t note(unsigned char *p, const char *name, uint32_t type, const void *desc,
                   uint32_t dsz)
{
	uint32_t nsz = (uint32_t)strlen(name) + 1, h[3] = { nsz, dsz, type };
	size_t n = 12, nsz4 = (nsz + 3u) & ~3u, dsz4 = (dsz + 3u) & ~3u;
	memcpy(p, h, 12);
	memset(p + 12, 0, nsz4 + dsz4);
	memcpy(p + 12, name, nsz);
	memcpy(p + 12 + nsz4, desc, dsz);
	return n + nsz4 + dsz4;
}

static void test_notes(void)
{
	static const char ks[] = "ffffffff81000000 T _stext\n";
	unsigned char buf[256], id[20];
	for (int i = 0; i < 20; i++)
		id[i] = (unsigned char)(0xa0 + i);
	size_t n = note(buf, "Xen", 6, "\1\0\0\0", 4);
	n += note(buf + n, "Linux", 0x100, "6.1.0\0\0", 7);
	size_t whole = n + note(buf + n, "GNU", 3, id, 20);
	char err[512] = "";
	SYMDB_OPTS(symdb_kernel_opts, o, .errbuf = err, .errbuf_sz = sizeof err,
	           .kallsyms = write_file("ks", ks, sizeof ks - 1),
	           .notes = write_file("notes", buf, whole), .root = dir, .release = "x",
	           .modules = "/nonexistent", .sysfs_module = "/nonexistent");
	symdb_kernel *k = NULL;
	CHECK_RC(symdb_kernel_open(&o, &k));
	SYMDB_OPTS(symdb_kernel_info, info);
	CHECK_RC(symdb_kernel_get_info(k, &info));
	CHECK(info.build_id.len == 20 && !memcmp(info.build_id.bytes, id, 20));
	CHECK(info.vmlinux == NULL && strstr(info.no_vmlinux, "no vmlinux with build-id a0a1a2"));
	symdb_kernel_close(k);
	/* the same cut inside the build-id's desc: no build-id, no crash */
	o.notes = write_file("notes-cut", buf, whole - 5);
	CHECK_RC(symdb_kernel_open(&o, &k));
	CHECK_RC(symdb_kernel_get_info(k, &info));
	CHECK(info.build_id.len == 0 && strstr(info.no_vmlinux, "no GNU build-id note"));
	symdb_kernel_close(k);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/live_kernel.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	test_table();
	test_refused();
	test_notes();
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_exit();
}
