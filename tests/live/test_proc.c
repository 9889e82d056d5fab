/* SPDX-License-Identifier: MIT */
/*
 * test_proc.c - live processes through the public API (symdb_proc_*), on
 * this test's own process: its functions, libc, the vDSO, a library
 * dlopen()ed after the first call (the table is re-read), an address in no
 * mapping, anonymous executable memory named by a jit_lookup callback, the
 * same through caller-supplied mappings (and a build-id that does not
 * match), a loaded object's segments mapped as the kernel maps them (a
 * file page two segments share), an older caller's smaller where_sz, forget,
 * and bad arguments.
 * Expected virtual addresses come from dl_iterate_phdr's load biases
 * (runtime = bias + vaddr, the ELF definition), names from this source.
 *
 * usage: test_live_proc PLUGIN.so
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "symdb.h"

__attribute__((noinline)) int proc_probe_alpha(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int proc_probe_beta(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3;
}

/* The load bias of the object holding addr (dl_iterate_phdr). */
struct bias_q {
	uint64_t addr, bias;
	int found;
};

static int bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct bias_q *q = arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + p->p_vaddr;
		if (p->p_type == PT_LOAD && q->addr >= lo && q->addr < lo + p->p_memsz) {
			q->bias = info->dlpi_addr;
			q->found = 1;
			return 1;
		}
	}
	return 0;
}

static uint64_t want_vaddr(uint64_t addr)
{
	struct bias_q q = { .addr = addr };
	dl_iterate_phdr(bias_cb, &q);
	CHECK(q.found);
	return addr - q.bias;
}

static uint64_t jit_base;

static int jit_cb(void *arg, int pid, uint64_t addr, symdb_proc_jit *out)
{
	CHECK(arg == &jit_base);
	CHECK(pid == getpid());
	if (addr < jit_base || addr >= jit_base + 4096)
		return 0;
	out->name = "jitted_fn";
	out->start = jit_base;
	out->size = 64;
	return 1;
}

static const char *name0(const symdb_symbolized *r)
{
	return r->nframes && r->frames[0].name ? r->frames[0].name : "";
}

/* Every mapping of /proc/self/maps, as a profiler records them. */
static size_t self_maps(symdb_mapping *m, size_t max, char paths[][512])
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	size_t n = 0;
	while (f && n < max && fgets(line, sizeof line, f)) {
		unsigned long long s, e, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &pos) < 4)
			continue;
		snprintf(paths[n], 512, "%s", line + pos);
		paths[n][strcspn(paths[n], "\n")] = 0;
		m[n] = (symdb_mapping){ .start = s, .end = e, .file_offset = off,
			                .path = paths[n][0] ? paths[n] : NULL,
			                .prot = (perms[2] == 'x' ? SYMDB_MAP_EXEC : 0u) |
			                        (perms[0] == 'r' ? SYMDB_MAP_READ : 0u) };
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

/* The PT_LOADs of the first loaded object (the program, then its
 * libraries) two of whose segments share a file page, and its path. */
struct own_loads {
	ElfW(Phdr) ph[16];
	int n;
	char path[4096];
};

static int shared_pages(const ElfW(Phdr) *ph, int n, uint64_t pg)
{
	int shared = 0;
	for (int i = 1; i < n; i++)
		shared += (ph[i - 1].p_offset + ph[i - 1].p_filesz - 1) / pg == ph[i].p_offset / pg;
	return shared;
}

static int own_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct own_loads *o = arg;
	const uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	(void)size;
	o->n = 0;
	for (int i = 0; i < info->dlpi_phnum && o->n < 16; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD)
			o->ph[o->n++] = info->dlpi_phdr[i];
	if (o->n < 2 || !shared_pages(o->ph, o->n, pg))
		return 0; /* the next object */
	if (info->dlpi_name && info->dlpi_name[0] == '/') {
		snprintf(o->path, sizeof o->path, "%s", info->dlpi_name);
	} else { /* the program */
		ssize_t l = readlink("/proc/self/exe", o->path, sizeof o->path - 1);
		o->path[l > 0 ? l : 0] = 0;
	}
	return o->path[0] != 0;
}

/* Each answer of kernel_layout: vaddr want[i], or SYMDB_PROC_NO_SEGMENT
 * where want[i] is SYMDB_ADDR_INVALID. */
static void check_layout(const uint64_t *addrs, const uint64_t *want, const symdb_proc_addr *w,
                         size_t na)
{
	for (size_t i = 0; i < na; i++) {
		int ok = want[i] == SYMDB_ADDR_INVALID
		                 ? w[i].status == SYMDB_PROC_NO_SEGMENT
		                 : w[i].status == SYMDB_PROC_OK && w[i].vaddr == want[i];
		if (!ok)
			fprintf(stderr, "kernel layout: 0x%llx: status %d vaddr 0x%llx, want 0x%llx\n",
			        (unsigned long long)addrs[i], w[i].status,
			        (unsigned long long)w[i].vaddr, (unsigned long long)want[i]);
		CHECK(ok);
	}
}

/*
 * An object (the program, or the first library) with a file page two
 * segments share, mapped as the kernel maps it, at another bias, one mapping
 * per PT_LOAD (its pages of file bytes), and the first and last byte of
 * each mapping and of each segment asked: an address in a segment has
 * vaddr = address - bias, one in the page padding around it none
 * (SYMDB_PROC_NO_SEGMENT).  A file page that two segments share (the
 * read-only segment's end and the data segment's RELRO start, with ld's
 * default -z separate-code) is mapped twice, and only the bias tells the
 * two mappings apart: by file offset alone, padding was answered with the
 * other segment's vaddr and symbol.
 */
static void kernel_layout(symdb_proc_cache *c)
{
	struct own_loads o = { .n = 0 };
	const uint64_t bias = 0x500000000000, pg = (uint64_t)sysconf(_SC_PAGESIZE);
	symdb_mapping maps[16];
	uint64_t addrs[64], want[64];
	size_t na = 0;

	/* (ld's default layout gives most objects such a page; without one
	 * this case would test nothing) */
	CHECK(dl_iterate_phdr(own_cb, &o) == 1 && o.n >= 2);
	if (o.n < 2)
		return;
	const char *exe = o.path;
	fprintf(stderr, "kernel layout: %s, %d PT_LOADs, %d shared page(s)\n", exe, o.n,
	        shared_pages(o.ph, o.n, pg));
	for (int i = 0; i < o.n; i++) {
		const ElfW(Phdr) *p = &o.ph[i];
		uint64_t lo = bias + (p->p_vaddr & ~(pg - 1));
		uint64_t hi = bias + ((p->p_vaddr + p->p_filesz + pg - 1) & ~(pg - 1));
		maps[i] = (symdb_mapping){ .start = lo, .end = hi, .path = exe,
			                   .file_offset = p->p_offset & ~(pg - 1),
			                   .prot = SYMDB_MAP_READ |
			                           ((p->p_flags & PF_X) ? SYMDB_MAP_EXEC : 0) };
		uint64_t probe[4] = { lo, hi - 1, bias + p->p_vaddr,
			              bias + p->p_vaddr + p->p_memsz - 1 };
		for (int k = 0; k < 4 && na < 64; k++) {
			uint64_t a = probe[k], v = a - bias;
			if (a < lo || a >= hi)
				continue; /* (the .bss past the file's pages: anonymous) */
			addrs[na] = a;
			want[na++] = v >= p->p_vaddr && v - p->p_vaddr < p->p_memsz
			                     ? v : SYMDB_ADDR_INVALID;
		}
	}
	symdb_proc_addr w[64];
	SYMDB_OPTS(symdb_proc_call_opts, co);
	/* Each address alone (a table of its own each call, its modules looked
	 * up lazily: the mapping that tells the bias is not looked up before
	 * the ambiguous one), then all in one call from the last. */
	for (size_t i = 0; i < na; i++)
		CHECK_RC(symdb_proc_symbolize_maps(c, 0, maps, (size_t)o.n, &addrs[i], 1, &w[i],
		                                   NULL, &co));
	check_layout(addrs, want, w, na);
	uint64_t rev[64], rw[64];
	for (size_t i = 0; i < na; i++) {
		rev[i] = addrs[na - 1 - i];
		rw[i] = want[na - 1 - i];
	}
	CHECK_RC(symdb_proc_symbolize_maps(c, 0, maps, (size_t)o.n, rev, na, w, NULL, &co));
	check_layout(rev, rw, w, na);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_live_proc PLUGIN.so\n");
		return 2;
	}
	char err[512] = "";
	const char *tmp = getenv("TMPDIR");
	symdb_symbolizer *s = NULL;
	symdb_proc_cache *c = NULL;
	SYMDB_OPTS(symdb_symbolizer_opts, so, .flags = SYMDB_SYMBOLIZER_BUILD,
	           .indexer_path = SYMDB_TEST_INDEXER, .tmp_dir = tmp);
	CHECK_RC(symdb_symbolizer_create(NULL, &so, &s));
	unsigned char *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(jit != MAP_FAILED);
	jit_base = (uint64_t)(uintptr_t)jit;
	SYMDB_OPTS(symdb_proc_opts, po, .errbuf = err, .errbuf_sz = sizeof err, .tmp_dir = tmp,
	           .jit_lookup = jit_cb, .jit_arg = &jit_base);
	CHECK_RC(symdb_proc_cache_create(s, &po, &c));

	/* 1: this process, by pid */
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	uint64_t addrs[] = { (uint64_t)(uintptr_t)proc_probe_alpha + 2,
		             (uint64_t)(uintptr_t)proc_probe_beta,
		             (uint64_t)(uintptr_t)getpid,
		             0x10,
		             jit_base + 16,
		             vdso + 0x400 };
	enum { N = sizeof addrs / sizeof addrs[0] };
	symdb_proc_addr w[N];
	symdb_symbolized r[N];
	SYMDB_OPTS(symdb_proc_call_opts, co, .errbuf = err, .errbuf_sz = sizeof err);
	int rc = symdb_proc_symbolize(c, getpid(), addrs, N, w, r, &co);
	CHECK_RC(rc);
	if (rc < 0)
		fprintf(stderr, "%s\n", err);
	symdb_uuid self;
	CHECK_RC(symdb_file_uuid("/proc/self/exe", NULL, &self));
	for (int i = 0; rc == 0 && i < 3; i++) {
		CHECK(w[i].status == SYMDB_PROC_OK);
		CHECK(w[i].vaddr == want_vaddr(addrs[i]));
		CHECK(w[i].image != NULL);
		CHECK(r[i].status == SYMDB_SYM_OK);
	}
	if (rc == 0) {
		CHECK(strcmp(name0(&r[0]), "proc_probe_alpha") == 0);
		CHECK(strcmp(name0(&r[1]), "proc_probe_beta") == 0);
		CHECK(r[2].sym_name && strstr(r[2].sym_name, "getpid"));
		CHECK(w[0].id.len == self.len && !memcmp(w[0].id.bytes, self.bytes, self.len));
		CHECK(w[3].status == SYMDB_PROC_NO_MAPPING);
		CHECK(r[3].status == SYMDB_SYM_NO_IMAGE);
		CHECK(w[4].status == SYMDB_PROC_JIT);
		CHECK(w[4].jit.name && strcmp(w[4].jit.name, "jitted_fn") == 0);
		CHECK(w[5].status == SYMDB_PROC_OK);
		CHECK(w[5].module && strcmp(w[5].module, "[vdso]") == 0);
		CHECK(w[5].vaddr == want_vaddr(addrs[5]));
		CHECK(w[5].id.kind == SYMDB_UUID_GNU_BUILD_ID);
	}

	/* 2: a library loaded after the first call: the table is re-read */
	void *h = dlopen(argv[1], RTLD_NOW);
	void *probe = h ? dlsym(h, "plugin_probe") : NULL;
	CHECK(probe != NULL);
	if (probe) {
		uint64_t a = (uint64_t)(uintptr_t)probe;
		CHECK_RC(symdb_proc_symbolize(c, getpid(), &a, 1, w, r, &co));
		CHECK(w[0].status == SYMDB_PROC_OK);
		CHECK(w[0].vaddr == want_vaddr(a));
		CHECK(strcmp(name0(&r[0]), "plugin_probe") == 0);
	}

	/* 2b: one library mapped from 80 files (copies: other inodes, one
	 * build-id) is one module identity, opened once: every copy answers
	 * from the same image.  More than 64 paths in one context (it looped
	 * forever when its path table filled). */
	enum { NCOPY = 80 };
	uint64_t ca[NCOPY];
	symdb_proc_addr cw[NCOPY];
	symdb_symbolized cr[NCOPY];
	size_t ncopy = 0;
	for (int i = 0; probe && tmp && i < NCOPY; i++) {
		char cp[4200], cmd[8600];
		snprintf(cp, sizeof cp, "%s/test_live_proc-copy%d.so", tmp, i);
		snprintf(cmd, sizeof cmd, "cp '%s' '%s'", argv[1], cp);
		void *ch = system(cmd) == 0 ? dlopen(cp, RTLD_NOW | RTLD_LOCAL) : NULL;
		void *cprobe = ch ? dlsym(ch, "plugin_probe") : NULL;
		if (cprobe && cprobe != probe)
			ca[ncopy++] = (uint64_t)(uintptr_t)cprobe;
	}
	CHECK(ncopy == NCOPY);
	if (ncopy) {
		CHECK_RC(symdb_proc_symbolize(c, getpid(), ca, ncopy, cw, cr, &co));
		int same = 1;
		for (size_t i = 0; i < ncopy; i++) {
			same &= cw[i].status == SYMDB_PROC_OK && cw[i].image == cw[0].image;
			same &= strcmp(name0(&cr[i]), "plugin_probe") == 0;
			same &= cw[i].vaddr == want_vaddr(ca[i]);
		}
		CHECK(same);
		CHECK(cw[0].image == w[0].image); /* the original file's image too */
	}
	for (int i = 0; tmp && i < NCOPY; i++) {
		char cp[4200];
		snprintf(cp, sizeof cp, "%s/test_live_proc-copy%d.so", tmp, i);
		unlink(cp);
	}

	/* 3: caller-supplied mappings, files by path (pid 0) */
	static symdb_mapping maps[1024];
	static char paths[1024][512];
	size_t nm = self_maps(maps, 1024, paths);
	CHECK_RC(symdb_proc_symbolize_maps(c, 0, maps, nm, addrs, 2, w, r, &co));
	CHECK(w[0].status == SYMDB_PROC_OK && w[0].vaddr == want_vaddr(addrs[0]));
	CHECK(strcmp(name0(&r[0]), "proc_probe_alpha") == 0);
	CHECK(strcmp(name0(&r[1]), "proc_probe_beta") == 0);
	/* ... with a build-id that is not the file's: never its symbols */
	symdb_uuid other = self;
	other.bytes[0] ^= 0xff;
	for (size_t i = 0; i < nm; i++)
		if (maps[i].start <= addrs[0] && addrs[0] < maps[i].end)
			maps[i].build_id = &other;
	CHECK_RC(symdb_proc_symbolize_maps(c, getpid(), maps, nm, addrs, 1, w, r, &co));
	CHECK(w[0].status == SYMDB_PROC_NO_MODULE && w[0].error == -ESTALE);
	CHECK(r[0].status == SYMDB_SYM_NO_IMAGE);

	/* 3b: an object with a shared file page mapped elsewhere as the
	 * kernel maps it */
	kernel_layout(c);

	/* 4: an older caller's smaller struct: nothing written past it */
	struct {
		unsigned char w[offsetof(symdb_proc_addr, jit)];
		unsigned char guard[64];
	} small;
	memset(&small, 0xa5, sizeof small);
	SYMDB_OPTS(symdb_proc_call_opts, co2, .where_sz = sizeof small.w);
	CHECK_RC(symdb_proc_symbolize(c, getpid(), addrs, 1, (symdb_proc_addr *)&small, NULL,
	                              &co2));
	int guard_ok = 1;
	for (size_t i = 0; i < sizeof small.guard; i++)
		guard_ok &= small.guard[i] == 0xa5;
	CHECK(guard_ok);
	CHECK(((symdb_proc_addr *)&small)->status == SYMDB_PROC_OK);

	/* 5: forget; bad arguments */
	CHECK(symdb_proc_forget(c, getpid()) == 0);
	CHECK(symdb_proc_forget(c, getpid()) == SYMDB_E_NOT_FOUND);
	CHECK(symdb_proc_symbolize(c, -1, addrs, 1, w, NULL, NULL) == SYMDB_E_INVAL);
	SYMDB_OPTS(symdb_proc_call_opts, bad, .flags = 0x80);
	CHECK(symdb_proc_symbolize(c, getpid(), addrs, 1, w, NULL, &bad) == SYMDB_E_INVAL);
	CHECK(symdb_proc_cache_create(NULL, NULL, &(symdb_proc_cache *){ NULL }) == SYMDB_E_INVAL);

	symdb_proc_cache_free(c);
	symdb_symbolizer_free(s);
	munmap(jit, 4096);
	return check_exit();
}
