/* SPDX-License-Identifier: MIT */
/*
 * live_proc_module.c - the module behind a mapping: the file the process
 * really mapped (or its vDSO), its ELF segments (to normalise addresses),
 * its identity and its image, opened (or indexed on first sight) through
 * the cache's symbolizer context.
 *
 * Which file: /proc/PID/root/PATH resolves PATH in the process's own mount
 * namespace, and is used when its inode is the one /proc/PID/maps names.
 * Otherwise (the file was deleted, replaced by rename, or the inode does
 * not match) /proc/PID/map_files/START-END is the mapped file itself; the
 * kernel lets only CAP_SYS_ADMIN / CAP_CHECKPOINT_RESTORE open it, so an
 * unprivileged caller gets SYMDB_PROC_NO_ACCESS for such files rather than
 * answers from a different file.  An image is named after its file's base
 * name (SPEC Image_Name), so a map_files entry is handed to the context
 * through a symlink with the library's name in a private directory,
 * removed right after.
 *
 * The vDSO has no file: its bytes are read from /proc/PID/mem, its build-id
 * looked up among the modules seen, and only a new one is written to a
 * private file for the indexer.  Every process of one kernel shares it, so
 * that happens once per cache.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live_proc_internal.h"

#define DELETED_SUFFIX " (deleted)"
#define PH_MAX (64 * 1024)

/* ---- ELF: segments and the build-id note, from bytes in memory ------------ */

struct elf_view {
	int is64, swap;
};

static uint64_t rd(const struct elf_view *v, const uint8_t *p, unsigned n)
{
	uint64_t x = 0;
	for (unsigned i = 0; i < n; i++)
		x |= (uint64_t)p[v->swap ? n - 1 - i : i] << (8 * i);
	return x;
}

/* 0 and v filled for an ELF header this reader understands. */
static int elf_ident(const uint8_t *h, size_t len, struct elf_view *v)
{
	if (len < EI_NIDENT || memcmp(h, ELFMAG, SELFMAG) != 0)
		return -1;
	if (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64)
		return -1;
	if (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB)
		return -1;
	v->is64 = h[EI_CLASS] == ELFCLASS64;
	v->swap = h[EI_DATA] == ELFDATA2MSB; /* rd() reads little-endian unless swap */
	return len < (v->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)) ? -1 : 0;
}

/* Where the program headers are: offset, count, entry size. */
static void elf_ph_table(const struct elf_view *v, const uint8_t *h, uint64_t *off, unsigned *n,
                         unsigned *ent)
{
	if (v->is64) {
		*off = rd(v, h + offsetof(Elf64_Ehdr, e_phoff), 8);
		*n = (unsigned)rd(v, h + offsetof(Elf64_Ehdr, e_phnum), 2);
		*ent = (unsigned)rd(v, h + offsetof(Elf64_Ehdr, e_phentsize), 2);
	} else {
		*off = rd(v, h + offsetof(Elf32_Ehdr, e_phoff), 4);
		*n = (unsigned)rd(v, h + offsetof(Elf32_Ehdr, e_phnum), 2);
		*ent = (unsigned)rd(v, h + offsetof(Elf32_Ehdr, e_phentsize), 2);
	}
}

struct elf_ph {
	uint32_t type, flags;
	uint64_t off, vaddr, filesz, memsz;
};

static void elf_ph_get(const struct elf_view *v, const uint8_t *p, struct elf_ph *o)
{
	if (v->is64) {
		o->type = (uint32_t)rd(v, p + offsetof(Elf64_Phdr, p_type), 4);
		o->flags = (uint32_t)rd(v, p + offsetof(Elf64_Phdr, p_flags), 4);
		o->off = rd(v, p + offsetof(Elf64_Phdr, p_offset), 8);
		o->vaddr = rd(v, p + offsetof(Elf64_Phdr, p_vaddr), 8);
		o->filesz = rd(v, p + offsetof(Elf64_Phdr, p_filesz), 8);
		o->memsz = rd(v, p + offsetof(Elf64_Phdr, p_memsz), 8);
	} else {
		o->type = (uint32_t)rd(v, p + offsetof(Elf32_Phdr, p_type), 4);
		o->flags = (uint32_t)rd(v, p + offsetof(Elf32_Phdr, p_flags), 4);
		o->off = rd(v, p + offsetof(Elf32_Phdr, p_offset), 4);
		o->vaddr = rd(v, p + offsetof(Elf32_Phdr, p_vaddr), 4);
		o->filesz = rd(v, p + offsetof(Elf32_Phdr, p_filesz), 4);
		o->memsz = rd(v, p + offsetof(Elf32_Phdr, p_memsz), 4);
	}
}

/* The GNU build-id in the notes at n[0..len), into id (len 0 when none). */
static void elf_note_build_id(const struct elf_view *v, const uint8_t *n, size_t len,
                              symdb_uuid *id)
{
	size_t off = 0;
	while (len - off >= 12) {
		uint64_t nsz = rd(v, n + off, 4), dsz = rd(v, n + off + 4, 4);
		uint64_t type = rd(v, n + off + 8, 4);
		uint64_t name_end = off + 12 + ((nsz + 3) & ~3ull);
		uint64_t desc_end = name_end + ((dsz + 3) & ~3ull);
		if (name_end > len || name_end + dsz > len)
			return;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && memcmp(n + off + 12, "GNU", 4) == 0 &&
		    dsz >= 1 && dsz <= SYMDB_UUID_MAX) {
			memcpy(id->bytes, n + name_end, dsz);
			id->len = (uint8_t)dsz;
			id->kind = SYMDB_UUID_GNU_BUILD_ID;
			return;
		}
		off = desc_end;
	}
}

/* PT_LOADs of the phdrs at ph[0..n*ent) into mod; with mem (the whole
 * image in memory: the vDSO) also its build-id.  0, or -1 when not ELF. */
static int elf_segments(const struct elf_view *v, const uint8_t *ph, unsigned n, unsigned ent,
                        const uint8_t *mem, size_t mem_len, struct lp_module *mod)
{
	if (ent < (v->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return -1;
	mod->nseg = 0;
	for (unsigned i = 0; i < n; i++) {
		struct elf_ph p;
		elf_ph_get(v, ph + (size_t)i * ent, &p);
		if (p.type == PT_LOAD && mod->nseg < LP_MAX_SEGS)
			mod->seg[mod->nseg++] = (struct lp_seg){ .off = p.off, .filesz = p.filesz,
				                                 .memsz = p.memsz, .vaddr = p.vaddr,
				                                 .exec = !!(p.flags & PF_X) };
		if (p.type == PT_NOTE && mem && p.off < mem_len && !mod->id.len)
			elf_note_build_id(v, mem + p.off,
			                  p.filesz < mem_len - p.off ? p.filesz : mem_len - p.off,
			                  &mod->id);
	}
	return 0;
}

/* The segments of the ELF file fd.  0, or SYMDB_E_BAD_OBJECT. */
static int file_segments(int fd, struct lp_module *mod)
{
	uint8_t h[sizeof(Elf64_Ehdr)];
	struct elf_view v;
	ssize_t got = pread(fd, h, sizeof h, 0);
	if (got < 0)
		return -errno;
	if (elf_ident(h, (size_t)got, &v) < 0)
		return SYMDB_E_BAD_OBJECT;
	uint64_t off;
	unsigned n, ent;
	elf_ph_table(&v, h, &off, &n, &ent);
	size_t bytes = (size_t)n * ent;
	if (!n || bytes > PH_MAX)
		return SYMDB_E_BAD_OBJECT;
	uint8_t *ph = malloc(bytes);
	if (!ph)
		return -ENOMEM;
	int rc = pread(fd, ph, bytes, (off_t)off) == (ssize_t)bytes &&
	                         elf_segments(&v, ph, n, ent, NULL, 0, mod) == 0
	                 ? 0
	                 : SYMDB_E_BAD_OBJECT;
	free(ph);
	return rc;
}

/* Whether segment s's file bytes meet mapping m's file range. */
static int seg_meets(const struct lp_map *m, const struct lp_seg *s)
{
	uint64_t len = m->end - m->start;
	return s->off < m->pgoff + len && m->pgoff < s->off + (s->filesz ? s->filesz : 1);
}

/* The load bias mapping m has if it shows segment s: within a segment's
 * mapping, address minus file offset is the bias plus vaddr minus offset. */
static uint64_t seg_bias(const struct lp_map *m, const struct lp_seg *s)
{
	return m->start - m->pgoff - s->vaddr + s->off;
}

/* The one segment of mod whose file bytes m shows, or NULL when none or
 * several do. */
static const struct lp_seg *only_seg(const struct lp_module *mod, const struct lp_map *m)
{
	const struct lp_seg *one = NULL;
	for (unsigned i = 0; i < mod->nseg; i++) {
		if (!seg_meets(m, &mod->seg[i]))
			continue;
		if (one)
			return NULL;
		one = &mod->seg[i];
	}
	return one;
}

/* Whether mappings a and b of table t show one file: the same device and
 * inode, or for caller mappings (no inode) the same path. */
static int same_file(const struct lp_table *t, const struct lp_map *a, const struct lp_map *b)
{
	if (a->dev || a->ino || b->dev || b->ino)
		return a->dev == b->dev && a->ino == b->ino;
	const char *pa = lp_map_path(t, a), *pb = lp_map_path(t, b);
	return pa && pb && !strcmp(pa, pb);
}

/*
 * Which segment m shows when its file page holds bytes of several (a page
 * shared by the read-only segment and the RELRO start of the data segment,
 * mapped twice; or text and data, by an old linker): the one whose load
 * bias is that of another mapping of the same file that shows one segment
 * only (the first segment's, at file offset 0, as a rule).  That mapping is
 * judged with m's module (the same file: the same segments), whether or not
 * its own module was looked up yet.  1 with *seg (NULL: that bias puts no
 * segment here) when the mapping decides; 0 when it cannot.
 */
static int mapping_seg(const struct lp_table *t, const struct lp_map *m,
                       const struct lp_seg **seg)
{
	const struct lp_module *mod = m->mod;
	if ((*seg = only_seg(mod, m)) != NULL)
		return 1;
	for (size_t k = 0; t && k < t->nmap; k++) {
		const struct lp_seg *o;
		if (&t->map[k] == m || !same_file(t, &t->map[k], m) ||
		    !(o = only_seg(mod, &t->map[k])))
			continue;
		uint64_t bias = seg_bias(&t->map[k], o);
		for (unsigned i = 0; i < mod->nseg; i++)
			if (seg_meets(m, &mod->seg[i]) && seg_bias(m, &mod->seg[i]) == bias) {
				*seg = &mod->seg[i];
				return 1;
			}
		return 1; /* (no segment with the module's bias: padding) */
	}
	return 0;
}

/* Without a mapping that decides: as before, the segment whose file bytes
 * hold fo, of the mapping's kind when two do. */
static const struct lp_seg *seg_by_offset(const struct lp_map *m, uint64_t fo)
{
	const struct lp_seg *best = NULL;
	for (unsigned i = 0; i < m->mod->nseg; i++) {
		const struct lp_seg *s = &m->mod->seg[i];
		if (fo < s->off || fo - s->off >= (s->filesz ? s->filesz : 1))
			continue;
		if (!best || (s->exec && (m->prot & SYMDB_MAP_EXEC) && !best->exec))
			best = s;
	}
	return best;
}

void lp_normalise(const struct lp_table *t, struct lp_map *m, uint64_t addr, uint64_t *fileoff,
                  uint64_t *vaddr)
{
	uint64_t fo = addr - m->start + m->pgoff;
	const struct lp_seg *s;
	*fileoff = fo;
	*vaddr = SYMDB_ADDR_INVALID;
	if (!m->mod)
		return;
	/* The segment this mapping shows, chosen once per mapping (the table
	 * is read again when the process's mappings change; a sibling found
	 * later does not undo a choice by offset, made per address); fo in its
	 * file bytes, or in the zero-filled tail past them (.bss) in their
	 * last page, up to p_memsz.  Elsewhere in the mapping (page padding
	 * before or after the segment) fo has no vaddr. */
	if (!m->seg_state)
		m->seg_state = mapping_seg(t, m, &m->seg) ? 1 : 2;
	s = m->seg_state == 1 ? m->seg : seg_by_offset(m, fo);
	if (!s)
		return;
	/* (a mapping the kernel merged from two segments with that bias:
	 * the one that holds fo) */
	uint64_t bias = seg_bias(m, s);
	for (unsigned i = 0; i < m->mod->nseg; i++) {
		const struct lp_seg *o = &m->mod->seg[i];
		if (seg_bias(m, o) == bias && fo >= o->off && fo - o->off < o->memsz) {
			*vaddr = fo - o->off + o->vaddr;
			return;
		}
	}
}

/* ---- the module table ------------------------------------------------------ */

static struct lp_module *module_new(struct symdb_proc_cache *c)
{
	if (c->nmods == c->mods_cap) {
		size_t nc = c->mods_cap ? c->mods_cap * 2 : 64;
		struct lp_module **nm = realloc(c->mods, nc * sizeof *nm);
		if (!nm)
			return NULL;
		c->mods = nm;
		c->mods_cap = nc;
	}
	struct lp_module *mod = calloc(1, sizeof *mod);
	if (mod)
		c->mods[c->nmods++] = mod;
	return mod;
}

static struct lp_module *module_by_file(struct symdb_proc_cache *c, const struct stat *st)
{
	uint64_t mt = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
	for (size_t i = 0; i < c->nmods; i++) {
		struct lp_module *m = c->mods[i];
		if (m->ino == (uint64_t)st->st_ino && m->dev == (uint64_t)st->st_dev &&
		    m->size == (uint64_t)st->st_size && m->mtime_ns == mt)
			return m;
	}
	return NULL;
}

static struct lp_module *module_by_id(struct symdb_proc_cache *c, const symdb_uuid *id)
{
	for (size_t i = 0; i < c->nmods; i++) {
		struct lp_module *m = c->mods[i];
		if (!m->ino && !m->dev && m->id.len == id->len &&
		    memcmp(m->id.bytes, id->bytes, id->len) == 0)
			return m;
	}
	return NULL;
}

static int fail(struct lp_map *m, int status, int error)
{
	m->mod_state = -status;
	m->mod_error = error;
	return error;
}

/* Open the image of path through the context; the result is the module's. */
static void module_image(struct symdb_proc_cache *c, struct lp_module *mod, const char *path)
{
	SYMDB_OPTS(symdb_symbolize_opts, so);
	int rc = symdb_symbolizer_image(c->sym, path, &so, &mod->img);
	if (rc == 0) {
		mod->status = SYMDB_PROC_OK;
		return;
	}
	mod->img = NULL;
	mod->status = rc == -EACCES || rc == -EPERM ? SYMDB_PROC_NO_ACCESS : SYMDB_PROC_NO_MODULE;
	mod->error = rc;
}

/*
 * A private directory under tmp_dir holding NAME: a symlink to target
 * (data NULL) or a file of data[0..len).  The caller indexes dir/NAME and
 * then calls private_done().
 */
static int private_make(const struct symdb_proc_cache *c, const char *name, const char *target,
                        const void *data, size_t len, char *dir, size_t dsz, char *path,
                        size_t psz)
{
	snprintf(dir, dsz, "%s/symdb-live-XXXXXX", c->tmp_dir);
	if (!mkdtemp(dir))
		return -errno;
	snprintf(path, psz, "%s/%s", dir, name);
	int rc = 0;
	if (target) {
		rc = symlink(target, path) < 0 ? -errno : 0;
	} else {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, data, len) != (ssize_t)len)
			rc = -errno ? -errno : -EIO;
		if (fd >= 0)
			close(fd);
	}
	if (rc < 0) {
		unlink(path);
		rmdir(dir);
	}
	return rc;
}

static void private_done(const char *dir, const char *path)
{
	unlink(path);
	rmdir(dir);
}

/* The base name of a maps path, without " (deleted)". */
static void base_name(const char *path, char *out, size_t osz)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b), ds = sizeof DELETED_SUFFIX - 1;
	if (n > ds && strcmp(b + n - ds, DELETED_SUFFIX) == 0)
		n -= ds;
	if (n == 0 || n >= osz)
		n = 0;
	memcpy(out, b, n);
	out[n] = 0;
	if (!n)
		snprintf(out, osz, "mapped-file");
}

/* The process is gone when its stat cannot be read any more. */
static int process_gone(const struct symdb_proc_cache *c, int pid, const struct lp_table *t)
{
	uint64_t st;
	return pid > 0 && (lp_read_start_time(c->proc_dir, pid, &st) < 0 || st != t->start_time);
}

/* Record why reading m's contents failed with rc (-errno): the process
 * exited, was not ours to read, or the module is missing. */
static void fail_read(const struct symdb_proc_cache *c, int pid, const struct lp_table *t,
                      struct lp_map *m, int rc)
{
	/* ESRCH: a zombie's map_files, readable /proc/PID/stat or not */
	if (rc == -ESRCH || process_gone(c, pid, t))
		fail(m, SYMDB_PROC_GONE, -ESRCH);
	else
		fail(m, rc == -EACCES || rc == -EPERM ? SYMDB_PROC_NO_ACCESS
		                                      : SYMDB_PROC_NO_MODULE, rc);
}

/* Open the mapped file: fd and the path it was opened by (mf: 1 when
 * through map_files).  0 or -errno. */
static int open_mapped(const struct symdb_proc_cache *c, int pid, const struct lp_table *t,
                       const struct lp_map *m, char *path, size_t psz, int *mf, int *fd_out,
                       struct stat *st)
{
	const char *mp = lp_map_path(t, m);
	size_t n = strlen(mp), ds = sizeof DELETED_SUFFIX - 1;
	int deleted = n > ds && strcmp(mp + n - ds, DELETED_SUFFIX) == 0 && m->ino;
	int rc = -ENOENT;
	*mf = 0;
	if (!deleted) {
		if (pid > 0)
			snprintf(path, psz, "%s/%d/root%s", c->proc_dir, pid, mp);
		else
			snprintf(path, psz, "%s", mp);
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0 && fstat(fd, st) == 0 && S_ISREG(st->st_mode) &&
		    (!m->ino || (uint64_t)st->st_ino == m->ino)) {
			*fd_out = fd;
			return 0;
		}
		rc = fd < 0 ? -errno : -ESTALE; /* another file there now */
		if (fd >= 0)
			close(fd);
		if (pid <= 0)
			return rc;
		/* A caller's mapping of a process that may be gone: the path
		 * as given (its build-id, when given, is checked). */
		if (!m->ino && (fd = open(mp, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) >= 0) {
			if (fstat(fd, st) == 0 && S_ISREG(st->st_mode)) {
				snprintf(path, psz, "%s", mp);
				*fd_out = fd;
				return 0;
			}
			close(fd);
		}
	}
	if (pid <= 0 || !m->ino)
		return rc;
	snprintf(path, psz, "%s/%d/map_files/%llx-%llx", c->proc_dir, pid,
	         (unsigned long long)m->start, (unsigned long long)m->end);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	*mf = 1;
	*fd_out = fd;
	return 0;
}

/* The module of a file mapping. */
static void file_module(struct symdb_proc_cache *c, int pid, struct lp_table *t, struct lp_map *m)
{
	char path[4200];
	struct stat st;
	int fd = -1, mf = 0;
	int rc = open_mapped(c, pid, t, m, path, sizeof path, &mf, &fd, &st);
	if (rc < 0) {
		fail_read(c, pid, t, m, rc);
		return;
	}
	struct lp_module *mod = module_by_file(c, &st);
	if (!mod) {
		if (!(mod = module_new(c))) {
			close(fd);
			fail(m, SYMDB_PROC_NO_MODULE, -ENOMEM);
			return;
		}
		mod->dev = (uint64_t)st.st_dev;
		mod->ino = (uint64_t)st.st_ino;
		mod->size = (uint64_t)st.st_size;
		mod->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
		                (uint64_t)st.st_mtim.tv_nsec;
		rc = file_segments(fd, mod);
		if (rc == 0)
			rc = symdb_file_uuid(path, NULL, &mod->id);
		if (rc < 0) {
			mod->status = SYMDB_PROC_NO_MODULE;
			mod->error = rc;
		} else if (mf) {
			char dir[4200], name[256], link[4500];
			base_name(lp_map_path(t, m), name, sizeof name);
			rc = private_make(c, name, path, NULL, 0, dir, sizeof dir, link, sizeof link);
			if (rc == 0) {
				module_image(c, mod, link);
				private_done(dir, link);
			} else {
				module_image(c, mod, path);
			}
		} else {
			module_image(c, mod, path);
		}
	}
	close(fd);
	m->mod = mod;
	m->mod_state = 1;
}

/* The module of the vDSO mapping: its bytes read from the process. */
static void vdso_module(struct symdb_proc_cache *c, int pid, struct lp_table *t, struct lp_map *m)
{
	char path[4200];
	size_t len = (size_t)(m->end - m->start);
	if (pid <= 0 || len > (64u << 20)) {
		fail(m, SYMDB_PROC_ANON, 0);
		return;
	}
	if (len > c->vdso_cap) {
		unsigned char *nb = realloc(c->vdso_buf, len);
		if (!nb) {
			fail(m, SYMDB_PROC_NO_MODULE, -ENOMEM);
			return;
		}
		c->vdso_buf = nb;
		c->vdso_cap = len;
	}
	snprintf(path, sizeof path, "%s/%d/mem", c->proc_dir, pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd < 0 ? -1 : pread(fd, c->vdso_buf, len, (off_t)m->start);
	int rc = got == (ssize_t)len ? 0 : got < 0 ? -errno : -EIO;
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		fail_read(c, pid, t, m, rc);
		return;
	}
	struct lp_module probe = { 0 };
	struct elf_view v;
	uint64_t phoff;
	unsigned n, ent;
	if (elf_ident(c->vdso_buf, len, &v) < 0) {
		fail(m, SYMDB_PROC_NO_MODULE, SYMDB_E_BAD_OBJECT);
		return;
	}
	elf_ph_table(&v, c->vdso_buf, &phoff, &n, &ent);
	if (phoff > len || (uint64_t)n * ent > len - phoff ||
	    elf_segments(&v, c->vdso_buf + phoff, n, ent, c->vdso_buf, len, &probe) < 0 ||
	    !probe.id.len) {
		fail(m, SYMDB_PROC_NO_MODULE, SYMDB_E_BAD_OBJECT);
		return;
	}
	struct lp_module *mod = module_by_id(c, &probe.id);
	if (!mod) {
		if (!(mod = module_new(c))) {
			fail(m, SYMDB_PROC_NO_MODULE, -ENOMEM);
			return;
		}
		*mod = probe;
		char dir[4200], file[4500];
		rc = private_make(c, "linux-vdso.so.1", NULL, c->vdso_buf, len, dir, sizeof dir,
		                  file, sizeof file);
		if (rc == 0) {
			module_image(c, mod, file);
			private_done(dir, file);
		} else {
			mod->status = SYMDB_PROC_NO_MODULE;
			mod->error = rc;
		}
	}
	m->mod = mod;
	m->mod_state = 1;
}

void lp_module_find(struct symdb_proc_cache *c, int pid, struct lp_table *t, struct lp_map *m)
{
	const char *p = lp_map_path(t, m);
	if (p && strcmp(p, "[vdso]") == 0)
		vdso_module(c, pid, t, m);
	else
		file_module(c, pid, t, m);
	if (m->mod_state > 0 && m->want_id &&
	    (m->mod->id.len != m->want_id->len ||
	     memcmp(m->mod->id.bytes, m->want_id->bytes, m->want_id->len) != 0))
		fail(m, SYMDB_PROC_NO_MODULE, -ESTALE); /* not the file the caller saw */
}
