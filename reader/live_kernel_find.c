/* SPDX-License-Identifier: MIT */
/*
 * live_kernel_find.c - the files behind the running kernel: its build-id
 * (an ELF note in /sys/kernel/notes), the vmlinux with that build-id in the
 * usual debug locations and the KASLR offset from its _stext, and the
 * modules: /proc/modules, where sysfs says each one's .text was loaded, and
 * its .ko file (or debug file) if one is found.
 *
 * Nothing here is an error when missing: a kernel without a vmlinux or a
 * module without a file is answered from kallsyms; only running out of
 * memory fails.  Every path comes from the options (struct lk_opts), so a
 * saved kernel or a test fixture can stand in for the running one.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <unistd.h>

#include "live_kernel.h"

#define NT_GNU_BUILD_ID_ 3
#define NOTES_MAX (1u << 20)
#define WALK_DEPTH 8 /* lib/modules/REL/kernel/drivers/net/ethernet/VENDOR/x.ko */

/* snprintf for paths and messages: a truncated one is only a name that
 * matches no file, or a shortened message. */
__attribute__((format(printf, 3, 4))) static int say(char *buf, size_t n, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int r = vsnprintf(buf, n, f, ap);
	va_end(ap);
	return r;
}

/* ---- the build-id ---------------------------------------------------------- */

/* ELF notes back to back: namesz, descsz, type (4 bytes each, native order),
 * then name and desc, each padded to 4 bytes (the layout of SHT_NOTE). */
int lk_notes_build_id(const unsigned char *p, size_t n, symdb_uuid *out)
{
	size_t off = 0;
	while (n - off >= 12) {
		uint32_t nsz, dsz, type;
		memcpy(&nsz, p + off, 4);
		memcpy(&dsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		size_t name = off + 12;
		size_t nsz4 = ((size_t)nsz + 3) & ~(size_t)3, dsz4 = ((size_t)dsz + 3) & ~(size_t)3;
		if (nsz4 > n - name || dsz4 > n - name - nsz4)
			break;
		size_t desc = name + nsz4;
		if (type == NT_GNU_BUILD_ID_ && nsz == 4 && !memcmp(p + name, "GNU", 4) && dsz > 0 &&
		    dsz <= SYMDB_UUID_MAX) {
			memset(out, 0, sizeof(*out));
			memcpy(out->bytes, p + desc, dsz);
			out->len = (uint8_t)dsz;
			out->kind = SYMDB_UUID_GNU_BUILD_ID;
			return 0;
		}
		off = desc + dsz4;
	}
	return SYMDB_E_NOT_FOUND;
}

static int read_notes(const char *path, symdb_uuid *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unsigned char *buf = malloc(NOTES_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	size_t n = 0;
	ssize_t r;
	while (n < NOTES_MAX && (r = read(fd, buf + n, NOTES_MAX - n)) > 0)
		n += (size_t)r;
	close(fd);
	int rc = lk_notes_build_id(buf, n, out);
	free(buf);
	return rc;
}

/* ---- the vmlinux ------------------------------------------------------------ */

/* The value of symbol name in path's .symtab: 0 and *v, or -1. */
static int elf_symbol(const char *path, const char *name, uint64_t *v)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL); /* pread: no SIGBUS if it shrinks */
	Elf_Scn *scn = NULL;
	while (e && rc && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		size_t cnt = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < cnt; i++) {
			GElf_Sym sym;
			const char *s;
			if (gelf_getsym(d, (int)i, &sym) &&
			    (s = elf_strptr(e, sh.sh_link, sym.st_name)) && !strcmp(s, name)) {
				*v = sym.st_value;
				rc = 0;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return rc;
}

/* path has the running kernel's build-id (and so is its vmlinux or debug
 * file): 1; 0 otherwise, with why in k->no_vmlinux when it was a file. */
static int matches(symdb_kernel *k, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	symdb_uuid id;
	if (symdb_file_uuid(path, NULL, &id) < 0)
		return 0;
	if (id.len == k->build_id.len && !memcmp(id.bytes, k->build_id.bytes, id.len))
		return 1;
	char a[2 * SYMDB_UUID_MAX + 1], b[2 * SYMDB_UUID_MAX + 1];
	symdb_uuid_format(&id, a);
	symdb_uuid_format(&k->build_id, b);
	say(k->no_vmlinux, sizeof k->no_vmlinux,
	         "%s: build-id %s is not the running kernel's (%s)", path, a, b);
	return 0;
}

/* Try DIR's candidates, in the order of symdb_kernel_opts.debug_dirs. */
static int try_debug_dir(symdb_kernel *k, const char *dir, char *path, size_t psz)
{
	char hex[2 * SYMDB_UUID_MAX + 1];
	symdb_uuid_format(&k->build_id, hex);
	const char *r = k->release;
	say(path, psz, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	if (matches(k, path))
		return 1;
	say(path, psz, "%s/boot/vmlinux-%s", dir, r);
	if (matches(k, path))
		return 1;
	say(path, psz, "%s/lib/modules/%s/vmlinux", dir, r);
	if (matches(k, path))
		return 1;
	say(path, psz, "%s/vmlinux-%s", dir, r);
	if (matches(k, path))
		return 1;
	say(path, psz, "%s/vmlinux", dir);
	return matches(k, path);
}

/* ROOT/boot/vmlinux-* other than the release's own (tried first). */
static int try_boot_dir(symdb_kernel *k, const char *root, char *path, size_t psz)
{
	char dir[4096];
	say(dir, sizeof dir, "%s/boot", root);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *de;
	int found = 0;
	while (!found && (de = readdir(d)))
		if (!strncmp(de->d_name, "vmlinux-", 8)) {
			say(path, psz, "%s/%s", dir, de->d_name);
			found = matches(k, path);
		}
	closedir(d);
	return found;
}

static int search_vmlinux(symdb_kernel *k, const struct lk_opts *o, char *path, size_t psz)
{
	for (const char *const *d = o->debug_dirs; d && *d; d++)
		if (try_debug_dir(k, *d, path, psz))
			return 1;
	char dir[4096];
	say(dir, sizeof dir, "%s/usr/lib/debug", o->root);
	if (try_debug_dir(k, dir, path, psz))
		return 1;
	for (int i = 0; i < 3; i++) {
		if (i == 0)
			say(path, psz, "%s/boot/vmlinux-%s", o->root, k->release);
		else
			say(path, psz, i == 1 ? "%s/lib/modules/%s/build/vmlinux"
			                      : "%s/lib/modules/%s/vmlinux", o->root, k->release);
		if (matches(k, path))
			return 1;
	}
	return try_boot_dir(k, o->root, path, psz);
}

int lk_find_vmlinux(symdb_kernel *k, const struct lk_opts *o)
{
	int rc = read_notes(o->notes, &k->build_id);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		say(k->no_vmlinux, sizeof k->no_vmlinux, "%s: %s", o->notes,
		         rc == SYMDB_E_NOT_FOUND ? "no GNU build-id note" : strerror(-rc));
		return 0;
	}
	char hex[2 * SYMDB_UUID_MAX + 1], path[4096];
	symdb_uuid_format(&k->build_id, hex);
	say(k->no_vmlinux, sizeof k->no_vmlinux,
	         "no vmlinux with build-id %s in the debug locations", hex);
	if (!search_vmlinux(k, o, path, sizeof path))
		return 0;
	/* KASLR moves the whole image by one offset: _stext's, as perf takes it
	 * (its ref_reloc_sym), or _text's when a kernel has no _stext. */
	uint64_t v;
	const char *ref = k->k_stext ? "_stext" : "_text";
	uint64_t run = k->k_stext ? k->k_stext : k->k_text;
	if (!run || elf_symbol(path, ref, &v) < 0) {
		say(k->no_vmlinux, sizeof k->no_vmlinux, "%s: no %s in %s", path, ref,
		         run ? "its symbol table" : "kallsyms");
		return 0;
	}
	if (!(k->vmlinux = strdup(path)))
		return -ENOMEM;
	k->kaslr = run - v;
	return 0;
}

/* ---- modules ------------------------------------------------------------- */

/* The hex number in file path ("0xffffffffc0a01000\n"): 0 when unreadable. */
static uint64_t read_hex_file(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	unsigned long long v = 0;
	if (fscanf(f, "%llx", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* m's .text and the end of it: the lowest other section above it. */
static void read_sections(struct lk_module *m, const char *sysfs)
{
	char dir[4096], path[4400];
	say(dir, sizeof dir, "%s/%s/sections", sysfs, m->name);
	say(path, sizeof path, "%s/.text", dir);
	if (!(m->text = read_hex_file(path)))
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".text") || !strcmp(de->d_name, ".") ||
		    !strcmp(de->d_name, ".."))
			continue;
		say(path, sizeof path, "%s/%s", dir, de->d_name);
		uint64_t a = read_hex_file(path);
		if (a > m->text && a < m->text_end)
			m->text_end = a;
	}
	closedir(d);
}

/* Module names compare with '-' and '_' equal, as modprobe does. */
static int same_module(const char *file, size_t len, const char *name)
{
	size_t i = 0;
	for (; i < len && name[i]; i++) {
		char a = file[i] == '-' ? '_' : file[i], b = name[i] == '-' ? '_' : name[i];
		if (a != b)
			return 0;
	}
	return i == len && !name[i];
}

/* The module whose file de is (NAME.ko or NAME.ko.debug), or NULL. */
static struct lk_module *module_of_file(symdb_kernel *k, const char *f)
{
	size_t n = strlen(f);
	size_t base = n > 3 && !strcmp(f + n - 3, ".ko")           ? n - 3
	              : n > 9 && !strcmp(f + n - 9, ".ko.debug") ? n - 9
	                                                           : 0;
	if (!base)
		return NULL;
	for (size_t i = 0; i < k->nmods; i++)
		if (same_module(f, base, k->mods[i].name))
			return &k->mods[i];
	return NULL;
}

/* Walk dir for module files; the first file found for a module wins (debug
 * trees are walked first). */
static int walk_modules(symdb_kernel *k, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *de;
	int rc = 0;
	char path[4096];
	while (rc == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if ((size_t)say(path, sizeof path, "%s/%s", dir, de->d_name) >= sizeof path)
			continue;
		struct stat st;
		if (stat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			/* build/ and source/ point into kernel trees, not modules */
			if (depth < WALK_DEPTH && strcmp(de->d_name, "build") &&
			    strcmp(de->d_name, "source"))
				rc = walk_modules(k, path, depth + 1);
			continue;
		}
		struct lk_module *m = S_ISREG(st.st_mode) ? module_of_file(k, de->d_name) : NULL;
		if (m && m->text && !m->file) {
			if (!(m->file = strdup(path)))
				rc = -ENOMEM;
			else
				k->nmod_files++;
		}
	}
	closedir(d);
	return rc;
}

static int read_modules_list(symdb_kernel *k, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char line[4096];
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		size_t n = strcspn(line, " \t\n");
		if (n == 0)
			continue;
		if (!lk_module_intern(k, line, n))
			rc = -ENOMEM;
		else
			k->nmods_listed++;
	}
	fclose(f);
	return rc;
}

int lk_find_modules(symdb_kernel *k, const struct lk_opts *o)
{
	int rc = read_modules_list(k, o->modules);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < k->nmods; i++)
		read_sections(&k->mods[i], o->sysfs_module);
	char dir[4096];
	for (const char *const *d = o->debug_dirs; rc == 0 && d && *d; d++) {
		say(dir, sizeof dir, "%s/lib/modules/%s", *d, k->release);
		rc = walk_modules(k, dir, 0);
	}
	if (rc == 0) {
		say(dir, sizeof dir, "%s/usr/lib/debug/lib/modules/%s", o->root, k->release);
		rc = walk_modules(k, dir, 0);
	}
	if (rc == 0) {
		say(dir, sizeof dir, "%s/lib/modules/%s", o->root, k->release);
		rc = walk_modules(k, dir, 0);
	}
	return rc;
}
