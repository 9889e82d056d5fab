/* SPDX-License-Identifier: MIT */
/*
 * reader_uuid.c - the identity symdb keys an image by (SPEC §5, §5.2), and
 * its hex form.
 *
 * ELF: the descriptor of the first NT_GNU_BUILD_ID note named "GNU", looked
 * for in PT_NOTE segments (what a running process has mapped) and then in
 * SHT_NOTE sections (a separate .debug file keeps the note section even when
 * its segments are NOBITS).  Without one, the fallback is XXH3-128 over every
 * PT_LOAD's vaddr, filesz and file bytes.  Input files are untrusted: every
 * range is checked against the raw file size before it is read, and libelf's
 * note iterator does its own bounds checks.  Mach-O: the LC_UUID load command
 * of a thin image (SPEC §5 UUID_Kind 2), found by the same fmt_macho.c walk
 * the indexer uses; symdb_file_uuids() lists every slice of a universal file.
 */
#define _GNU_SOURCE /* O_CLOEXEC, madvise, PATH_MAX */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "fmt_macho.h"
#include "format_io.h"

#include "rd_uuid.h"
#include "reader_internal.h"
#include "symdb_endian.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/*
 * The GNU build-id note among the notes at [off, off + size) of the file at
 * fd (a PT_NOTE segment or an SHT_NOTE section; align: its alignment, 8 or
 * 4), read with pread and walked here: in ELF_C_READ mode libelf's
 * elf_getdata_rawchunk and elf_getdata of note sections leak their buffers
 * (elfutils 0.188, found by LeakSanitizer).  1 with id[0..*len) (at most
 * max bytes, else -1), 0 when there is none.
 */
static int find_build_id(int fd, uint64_t off, uint64_t size, uint64_t align, int msb,
                         uint8_t *id, size_t max, size_t *len)
{
	uint8_t buf[4096];
	uint64_t a = align == 8 ? 8 : 4, at = 0;
	ptrdiff_t n;

	if (size > sizeof buf)
		size = sizeof buf; /* (a build-id note comes first in practice) */
	n = fmt_pread_full(fd, buf, (size_t)size, (off_t)off);
	while (n > 0 && at + 12 <= (uint64_t)n) {
		uint32_t namesz = fmt_be32(buf + at), descsz = fmt_be32(buf + at + 4),
		         type = fmt_be32(buf + at + 8);
		if (!msb) {
			namesz = __builtin_bswap32(namesz);
			descsz = __builtin_bswap32(descsz);
			type = __builtin_bswap32(type);
		}
		uint64_t name = at + 12, desc = name + (((uint64_t)namesz + a - 1) & ~(a - 1));
		if (desc > (uint64_t)n || descsz > (uint64_t)n - desc)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name, "GNU", 4) &&
		    descsz) {
			if (descsz > max)
				return -1;
			memcpy(id, buf + desc, descsz);
			*len = descsz;
			return 1;
		}
		at = desc + (((uint64_t)descsz + a - 1) & ~(a - 1));
	}
	return 0;
}

/* find_build_id into a symdb_uuid: 1, 0, or SYMDB_E_TOO_BIG past SYMDB_UUID_MAX bytes. */
static int notes_uuid(int fd, uint64_t off, uint64_t size, uint64_t align, int msb,
                      symdb_uuid *out)
{
	uint8_t id[SYMDB_UUID_MAX];
	size_t len = 0;
	int rc = find_build_id(fd, off, size, align, msb, id, sizeof id, &len);

	if (rc < 0)
		return SYMDB_E_TOO_BIG;
	if (rc == 1) {
		memset(out, 0, sizeof *out);
		memcpy(out->bytes, id, len);
		out->len = (uint8_t)len;
		out->kind = SYMDB_UUID_GNU_BUILD_ID;
	}
	return rc;
}

static int note_in_segments(Elf *e, int fd, size_t raw_size, symdb_uuid *out)
{
	size_t i, n;
	GElf_Phdr ph;
	GElf_Ehdr eh;
	int rc;

	if (elf_getphdrnum(e, &n) != 0 || !gelf_getehdr(e, &eh))
		return 0;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (ph.p_offset > raw_size || ph.p_filesz > raw_size - ph.p_offset)
			continue;
		rc = notes_uuid(fd, ph.p_offset, ph.p_filesz, ph.p_align,
		                eh.e_ident[EI_DATA] == ELFDATA2MSB, out);
		if (rc)
			return rc;
	}
	return 0;
}

static int note_in_sections(Elf *e, int fd, symdb_uuid *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Ehdr eh;
	int rc;

	if (!gelf_getehdr(e, &eh))
		return 0;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		rc = notes_uuid(fd, sh.sh_offset, sh.sh_size, sh.sh_addralign,
		                eh.e_ident[EI_DATA] == ELFDATA2MSB, out);
		if (rc)
			return rc;
	}
	return 0;
}

/* A copy of the ELF header with its section-header fields zeroed (SPEC
 * §5.2): strip rewrites them, and the first PT_LOAD usually maps them. */
static size_t masked_ehdr(const char *raw, size_t raw_size, int cls, uint8_t *out)
{
	/* e_shoff, e_shentsize..e_shstrndx: ELF64 0x28+8, 0x3a+6; ELF32 0x20+4, 0x2e+6 */
	size_t n = cls == ELFCLASS64 ? 64 : 52;

	if (raw_size < n)
		n = raw_size;
	memcpy(out, raw, n);
	if (cls == ELFCLASS64 && n == 64) {
		memset(out + 0x28, 0, 8);
		memset(out + 0x3a, 0, 6);
	} else if (cls == ELFCLASS32 && n == 52) {
		memset(out + 0x20, 0, 4);
		memset(out + 0x2e, 0, 6);
	}
	return n;
}

/* Hash [off, off+len) of the file, the ELF header part from `eh`. */
static void hash_range(XXH3_state_t *st, const char *raw, const uint8_t *eh, size_t ehlen,
                       uint64_t off, uint64_t len)
{
	if (off < ehlen) {
		uint64_t k = ehlen - off < len ? ehlen - off : len;
		XXH3_128bits_update(st, eh + off, (size_t)k);
		off += k;
		len -= k;
	}
	XXH3_128bits_update(st, raw + off, (size_t)len);
}

/* SPEC §5.2: XXH3-128 over (BE vaddr, BE filesz, bytes) of each PT_LOAD, in
 * program-header order; over the whole file for an ET_REL object. */
static int fallback_uuid(Elf *e, const char *raw, size_t raw_size, symdb_uuid *out,
                         const char *path, char *eb, size_t ebsz)
{
	XXH3_state_t *st;
	XXH128_canonical_t c;
	uint8_t eh[64];
	size_t i, n, nload = 0, ehlen;
	GElf_Phdr ph;
	GElf_Ehdr ehdr;
	int rc = 0;

	st = XXH3_createState();
	if (!st)
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
	XXH3_128bits_reset(st);
	/* A relocatable object maps nothing: its identity is every byte of
	 * it (SPEC §5.2), since two objects may share their code bytes and
	 * differ only in symbols, relocations or debug information. */
	if (gelf_getehdr(e, &ehdr) && ehdr.e_type == ET_REL) {
		XXH3_128bits_update(st, raw, raw_size);
		n = 0;
		nload = 1;
	} else if (elf_getphdrnum(e, &n) != 0) {
		XXH3_freeState(st);
		return fmt_err(eb, ebsz, SYMDB_E_NO_UUID, "%s: no build-id and no program headers", path);
	}
	ehlen = masked_ehdr(raw, raw_size, gelf_getclass(e), eh);
	for (i = 0; i < n && rc == 0; i++) {
		uint8_t hdr[16];
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > raw_size || ph.p_filesz > raw_size - ph.p_offset) {
			rc = fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
			             "%s: PT_LOAD %zu ends past EOF (0x%llx > 0x%zx)", path, i,
			             (unsigned long long)(ph.p_offset + ph.p_filesz), raw_size);
			break;
		}
		fmt_put64(hdr, ph.p_vaddr);
		fmt_put64(hdr + 8, ph.p_filesz);
		XXH3_128bits_update(st, hdr, sizeof hdr);
		hash_range(st, raw, eh, ehlen, ph.p_offset, ph.p_filesz);
		nload++;
	}
	if (rc == 0 && nload == 0)
		rc = fmt_err(eb, ebsz, SYMDB_E_NO_UUID, "%s: no build-id and no PT_LOAD segment", path);
	if (rc == 0) {
		XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
		memset(out, 0, sizeof *out);
		memcpy(out->bytes, c.digest, 16);
		out->len = 16;
		out->kind = SYMDB_UUID_FALLBACK;
	}
	XXH3_freeState(st);
	return rc;
}

/* What a file that is not ELF is, from its first bytes: a Mach-O
 * container symdb cannot read says so (fmt_macho.h). */
static int not_elf(int fd, const char *path, char *eb, size_t ebsz)
{
	uint8_t head[4096];
	ptrdiff_t got = fmt_pread_full(fd, head, sizeof head, 0);
	const char *mo = got > 0 ? fmt_mo_misfit(head, (size_t)got) : NULL;

	return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: %s", path, mo ? mo : "not an ELF object");
}

/*
 * e was opened with ELF_C_READ: libelf reads what is asked with pread(2)
 * instead of mapping the file, so a file truncated or rewritten in place
 * while it is read gives short reads and an error, not SIGBUS (a server
 * named a path module that another process was rewriting died of it).
 * Only a binary without a build-id is read whole (its loaded bytes are its
 * identity), by pread here too.
 */
static int elf_uuid(Elf *e, int fd, const char *path, symdb_uuid *out, char *eb, size_t ebsz)
{
	size_t raw_size = 0;
	struct stat st;
	int rc;

	if (elf_kind(e) != ELF_K_ELF || gelf_getclass(e) == ELFCLASSNONE)
		return not_elf(fd, path, eb, ebsz);
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		return fmt_err(eb, ebsz, rc, "%s: %s", path, symdb_strerror(rc));
	}
	rc = note_in_segments(e, fd, (size_t)st.st_size, out);
	if (rc == 0)
		rc = note_in_sections(e, fd, out);
	if (rc == SYMDB_E_TOO_BIG)
		return fmt_err(eb, ebsz, rc, "%s: build-id longer than %d bytes", path, SYMDB_UUID_MAX);
	if (rc == 1)
		return 0;
	/* The whole file, read here: libelf's own whole-file read in
	 * ELF_C_READ mode (elf_rawfile) frees a pointer it did not allocate
	 * when the file changes under it (elfutils 0.188, AddressSanitizer). */
	raw_size = (size_t)st.st_size;
	char *buf = malloc(raw_size ? raw_size : 1);
	if (!buf)
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
	if (fmt_pread_full(fd, buf, raw_size, 0) != (ptrdiff_t)raw_size)
		rc = fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: changed while it was read", path);
	else
		rc = fallback_uuid(e, buf, raw_size, out, path, eb, ebsz);
	free(buf);
	return rc;
}

/* How every input is opened: a FIFO or a device must not block the open
 * (O_NONBLOCK), nor become a controlling terminal. */
#define RD_INPUT_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static unsigned elf_ok;

/* elf_version() sets libelf's process-wide version: call it exactly once. */
static void elf_init(void)
{
	elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

int rd_file_uuid_fd(int fd, const char *path, symdb_uuid *out, char *eb, size_t ebsz)
{
	uint8_t head[8];
	ssize_t got;
	Elf *e;
	int rc;

	got = fmt_pread_full(fd, head, sizeof head, 0);
	if (got < 0)
		return fmt_err(eb, ebsz, (int)got, "%s: %s", path, symdb_strerror((int)got));
	switch (fmt_mo_kind(head, (size_t)got)) {
	case 2:
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: universal Mach-O: name one architecture (FILE:ARCH, "
		               "symdb_file_uuids)", path);
	case 1: {
		symdb_file_image im; /* thin: LC_UUID, read with fmt_macho.c */
		rc = rd_file_images_fd(fd, path, &im, 1, eb, ebsz);
		if (rc == 1)
			*out = im.uuid;
		return rc == 1 ? 0 : rc;
	}
	}
	pthread_once(&elf_once, elf_init);
	if (!elf_ok)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: libelf unusable", path);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: not an object file: %s", path,
		               elf_errmsg(-1));
	rc = elf_uuid(e, fd, path, out, eb, ebsz);
	elf_end(e);
	return rc;
}

const char *rd_mode_name(unsigned m)
{
	if (S_ISFIFO(m))
		return "fifo";
	if (S_ISSOCK(m))
		return "socket";
	if (S_ISCHR(m))
		return "character device";
	if (S_ISBLK(m))
		return "block device";
	if (S_ISLNK(m))
		return "symbolic link";
	if (S_ISDIR(m))
		return "directory";
	return "unknown type";
}

/* path opened as an input (O_NONBLOCK: a FIFO does not block the open),
 * refused unless a regular file: a FIFO's pread says only "Illegal seek".
 * The descriptor, or the error with eb set. */
static int open_regular(const char *path, char *eb, size_t ebsz)
{
	struct stat st;
	int fd = open(path, RD_INPUT_FLAGS), rc;

	if (fd < 0) {
		rc = -errno;
		/* a socket cannot be opened (ENXIO): say what it is, as for a FIFO */
		if (rc == -ENXIO && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: not a regular file (%s)",
			               path, rd_mode_name(st.st_mode));
		return fmt_err(eb, ebsz, rc, "%s: %s", path, symdb_strerror(rc));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = fstat(fd, &st) < 0 ? -errno : SYMDB_E_BAD_OBJECT;
		close(fd);
		return rc == SYMDB_E_BAD_OBJECT
		               ? fmt_err(eb, ebsz, rc, "%s: not a regular file (%s)", path,
		                         rd_mode_name(st.st_mode))
		               : fmt_err(eb, ebsz, rc, "%s: %s", path, symdb_strerror(rc));
	}
	return fd;
}

int symdb_file_uuid(const char *path, const symdb_open_opts *opts, symdb_uuid *out)
{
	unsigned flags;
	char *eb;
	size_t ebsz;
	int fd, rc;

	rc = rd_opts(opts, ~0u, &flags, &eb, &ebsz);
	if (rc)
		return rc;
	if (!path || !out)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "no path or output");
	fd = open_regular(path, eb, ebsz);
	if (fd < 0)
		return fd;
	rc = rd_file_uuid_fd(fd, path, out, eb, ebsz);
	close(fd);
	return rc;
}

/* A .dSYM bundle stands for the first file (in name order) of its
 * Contents/Resources/DWARF/, as the indexer reads it. */
static int dsym_file(const char *dir, char *out, size_t out_sz)
{
	char sub[PATH_MAX], best[256] = "";
	struct dirent *de;
	DIR *dp;

	if ((size_t)snprintf(sub, sizeof sub, "%s/Contents/Resources/DWARF", dir) >= sizeof sub)
		return -ENAMETOOLONG;
	if (!(dp = opendir(sub)))
		return SYMDB_E_BAD_OBJECT;
	while ((de = readdir(dp)) != NULL)
		if (de->d_name[0] != '.' && (!best[0] || strcmp(de->d_name, best) < 0))
			snprintf(best, sizeof best, "%s", de->d_name);
	closedir(dp);
	if (!best[0])
		return SYMDB_E_BAD_OBJECT;
	return (size_t)snprintf(out, out_sz, "%s/%s", sub, best) >= out_sz ? -ENAMETOOLONG : 0;
}

/* Every slice of a mapped Mach-O file. */
static int macho_images(const uint8_t *p, size_t n, const char *path, symdb_file_image *out,
                        size_t max, char *eb, size_t ebsz)
{
	fmt_mo_slice sl[FMT_MO_MAX_SLICES];
	uint8_t seen[FMT_MO_MAX_SLICES][16];
	int count = fmt_mo_slices(p, n, sl, FMT_MO_MAX_SLICES, path, eb, ebsz);

	for (int i = 0; i < count; i++) {
		fmt_mo_header h;
		uint8_t *u = seen[i];
		const char *arch;
		if (fmt_mo_header_read(p + sl[i].offset, sl[i].size, &h, path, eb, ebsz))
			return SYMDB_E_BAD_OBJECT;
		if (!fmt_mo_uuid(&h, p + sl[i].offset, u))
			return fmt_err(eb, ebsz, SYMDB_E_NO_UUID, "%s: Mach-O image without LC_UUID",
			               path);
		/* Images are keyed by LC_UUID: two slices with one (the same
		 * architecture twice, which lipo and llvm refuse too) would be one
		 * image from two contents.  The indexer's words (ix_macho.c), so
		 * that query --no-build gives the reason build gives. */
		for (int k = 0; k < i; k++)
			if (!memcmp(seen[k], u, 16))
				return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
				               "%s: slices %d and %d have the same LC_UUID", path, k, i);
		if ((size_t)i >= max)
			continue;
		memset(&out[i], 0, sizeof out[i]);
		memcpy(out[i].uuid.bytes, u, 16);
		out[i].uuid.len = 16;
		out[i].uuid.kind = SYMDB_UUID_MACHO;
		out[i].cputype = h.cputype;
		out[i].cpusubtype = h.cpusubtype;
		arch = fmt_mo_arch_name(h.cputype, h.cpusubtype);
		snprintf(out[i].arch, sizeof out[i].arch, "%s", arch ? arch : "unknown");
	}
	return count;
}

/* Copy [off, off + len) of the file (clipped to its n bytes) to the same
 * offset of buf; a short read leaves zeros. */
static void read_at(int fd, uint8_t *buf, uint64_t n, uint64_t off, uint64_t len)
{
	if (off < n)
		(void)fmt_pread_full(fd, buf + off, (size_t)(len < n - off ? len : n - off),
		                     (off_t)off);
}

/* A thin image's header and load commands at off (a slice offset from the
 * file: any u64), into buf; nothing for a header past the file's end,
 * which fmt_mo_slices then refuses. */
static void read_thin(int fd, uint8_t *buf, uint64_t n, uint64_t off)
{
	if (off >= n || n - off < 28)
		return;
	read_at(fd, buf, n, off, 32);
	uint32_t m = fmt_mo_u32(buf + off, 0); /* as fmt_mo_header_read */
	int swap = m == __builtin_bswap32(FMT_MO_MAGIC) || m == __builtin_bswap32(FMT_MO_MAGIC_64);
	read_at(fd, buf, n, off, 32 + (uint64_t)fmt_mo_u32(buf + off + 20, swap));
}

/*
 * The parts of a Mach-O file its images are read from (the universal
 * header, each slice's header and load commands) are read with pread(2)
 * into an anonymous mapping of the file's size, the rest of it left zero
 * pages: a file truncated or rewritten in place while it is read gives
 * zeros and at worst a "malformed" error, where a mapping of the file gave
 * SIGBUS (a server reading path modules died of it).
 */
int rd_file_images_fd(int fd, const char *path, symdb_file_image *out, size_t max, char *eb,
                      size_t ebsz)
{
	struct stat st;
	uint8_t *p;
	uint64_t n;
	int rc;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 8)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: not a regular object file", path);
	n = (uint64_t)st.st_size;
	p = mmap(NULL, (size_t)n, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
	read_at(fd, p, n, 0, 8 + (uint64_t)FMT_MO_MAX_SLICES * 32);
	if (fmt_mo_kind(p, 8) == 1) {
		read_thin(fd, p, n, 0);
	} else if (fmt_mo_kind(p, 8) == 2) {
		uint32_t count = fmt_be32(p + 4), rec = fmt_be32(p) == FMT_MO_FAT_64 ? 32 : 20;
		for (uint32_t i = 0; i < count && i < FMT_MO_MAX_SLICES; i++) {
			const uint8_t *r = p + 8 + (uint64_t)i * rec;
			read_thin(fd, p, n, rec == 32 ? fmt_be64(r + 8) : fmt_be32(r + 8));
		}
	}
	rc = macho_images(p, (size_t)n, path, out, max, eb, ebsz);
	munmap(p, (size_t)n);
	return rc;
}

static int file_uuids(const char *path, const symdb_open_opts *opts, symdb_file_image *out,
                      size_t max)
{
	char file[PATH_MAX], *eb;
	uint8_t head[8];
	struct stat st;
	size_t ebsz;
	unsigned flags;
	int fd, rc;
	ssize_t got;

	rc = rd_opts(opts, ~0u, &flags, &eb, &ebsz);
	if (rc)
		return rc;
	if (!path || (!out && max))
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "no path or output");
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = dsym_file(path, file, sizeof file);
		if (rc)
			return fmt_err(eb, ebsz, rc, "%s: dSYM bundle has no DWARF file in "
			               "Contents/Resources/DWARF", path);
		path = file;
	}
	fd = open_regular(path, eb, ebsz);
	if (fd < 0)
		return fd;
	got = fmt_pread_full(fd, head, sizeof head, 0);
	if (got == (ssize_t)sizeof head && fmt_mo_kind(head, sizeof head))
		rc = rd_file_images_fd(fd, path, out, max, eb, ebsz);
	else if (max == 0)
		rc = 1;
	else {
		memset(out, 0, sizeof *out);
		rc = rd_file_uuid_fd(fd, path, &out->uuid, eb, ebsz);
		rc = rc ? rc : 1;
	}
	close(fd);
	return rc;
}

/* The images go through a library-sized array (a file holds at most
 * FMT_MO_MAX_SLICES), then min(elem_sz, sizeof(symdb_file_image)) bytes of each
 * into the caller's array of elem_sz-byte elements: an older, smaller element
 * is never overrun and a newer, larger one keeps its tail as it was. */
int symdb_file_uuids(const char *path, const symdb_open_opts *opts, symdb_file_image *out,
                     size_t max, size_t elem_sz)
{
	symdb_file_image im[FMT_MO_MAX_SLICES];
	size_t cap = max < FMT_MO_MAX_SLICES ? max : FMT_MO_MAX_SLICES;
	size_t n = elem_sz < sizeof im[0] ? elem_sz : sizeof im[0];
	unsigned flags;
	char *eb;
	size_t ebsz;
	int rc;

	rc = rd_opts(opts, ~0u, &flags, &eb, &ebsz);
	if (rc)
		return rc;
	if (!elem_sz)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "zero element size");
	if (!path || (!out && max))
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "no path or output");
	rc = file_uuids(path, opts, im, cap);
	for (int i = 0; i < rc && (size_t)i < cap; i++)
		memcpy((char *)out + (size_t)i * elem_sz, &im[i], n);
	return rc;
}

/* The indexer's reading of .gnu_debuglink (ix_sections.c read_debuglink):
 * a NUL-terminated name, padding to 4, then the CRC (checked there). */
static void debuglink_name(const uint8_t *p, size_t n, char *link, size_t link_sz,
                           uint32_t *crc)
{
	if (!p)
		return;
	size_t len = strnlen((const char *)p, n);
	size_t crc_off = (len + 4) & ~(size_t)3;

	if (len == 0 || len >= link_sz || len >= 256 || crc_off + 4 > n)
		return;
	memcpy(link, p, len);
	link[len] = 0;
	if (crc) /* little-endian here; elf_debug_scan turns a big-endian file's */
		*crc = (uint32_t)p[crc_off] | (uint32_t)p[crc_off + 1] << 8 |
		       (uint32_t)p[crc_off + 2] << 16 | (uint32_t)p[crc_off + 3] << 24;
}

/* rd_elf_debug_refs() (the first GNU build-id note of the SHT_NOTE
 * sections, as ix_sections.c takes it, at most RD_DEBUG_ID_MAX bytes), and
 * whether the file has DWARF (a .debug_info or
 * .zdebug_info section with contents) when has_dwarf is not NULL. */
static void elf_debug_scan(int fd, uint8_t id[RD_DEBUG_ID_MAX], size_t *id_len, char *link,
                           size_t link_sz, int *has_dwarf, uint32_t *crc)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *e;

	*id_len = 0;
	if (link_sz)
		link[0] = 0;
	if (has_dwarf)
		*has_dwarf = 0;
	pthread_once(&elf_once, elf_init);
	/* ELF_C_READ: pread, not a mapping (elf_uuid) */
	if (!elf_ok || !(e = elf_begin(fd, ELF_C_READ, NULL)))
		return;
	GElf_Ehdr eh;
	if (elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) != 0 ||
	    !gelf_getehdr(e, &eh)) {
		elf_end(e);
		return;
	}
	int msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (sh.sh_type == SHT_NOTE && !*id_len) {
			if (find_build_id(fd, sh.sh_offset, sh.sh_size, sh.sh_addralign, msb, id,
			                  RD_DEBUG_ID_MAX, id_len) != 1)
				*id_len = 0;
		} else if (sh.sh_type != SHT_NOBITS && !strcmp(name, ".gnu_debuglink") &&
		           sh.sh_size <= 4096) {
			uint8_t dl[4096];
			ptrdiff_t got = fmt_pread_full(fd, dl, (size_t)sh.sh_size, (off_t)sh.sh_offset);
			if (got > 0)
				debuglink_name(dl, (size_t)got, link, link_sz, crc);
		}
		else if (has_dwarf && sh.sh_type != SHT_NOBITS && sh.sh_size &&
		         (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			*has_dwarf = 1;
	}
	if (crc && msb)
		*crc = __builtin_bswap32(*crc); /* (read little-endian above) */
	elf_end(e);
}

void rd_elf_debug_refs(int fd, uint8_t id[RD_DEBUG_ID_MAX], size_t *id_len, char *link,
                       size_t link_sz, uint32_t *link_crc)
{
	elf_debug_scan(fd, id, id_len, link, link_sz, NULL, link_crc);
}

int rd_elf_dwarf_of(int fd, const symdb_uuid *of)
{
	uint8_t id[RD_DEBUG_ID_MAX];
	size_t len;
	int dwarf;

	if (of->kind != SYMDB_UUID_GNU_BUILD_ID)
		return 0;
	elf_debug_scan(fd, id, &len, NULL, 0, &dwarf, NULL);
	return dwarf && len == of->len && memcmp(id, of->bytes, len) == 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int symdb_uuid_parse(const char *hex, symdb_uuid *out)
{
	symdb_uuid id;
	unsigned nd = 0;
	int hi = -1, v;

	if (!hex || !out)
		return SYMDB_E_INVAL;
	memset(&id, 0, sizeof id);
	for (; *hex; hex++) {
		if (*hex == '-')
			continue;
		v = hexval(*hex);
		if (v < 0 || nd >= 2 * SYMDB_UUID_MAX)
			return SYMDB_E_INVAL;
		if (hi < 0) {
			hi = v;
		} else {
			id.bytes[nd / 2] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
		nd++;
	}
	if (nd < 2 || nd % 2)
		return SYMDB_E_INVAL;
	id.len = (uint8_t)(nd / 2);
	*out = id;
	return 0;
}

void symdb_uuid_format(const symdb_uuid *id, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	unsigned i, n = id->len > SYMDB_UUID_MAX ? SYMDB_UUID_MAX : id->len;

	for (i = 0; i < n; i++) {
		buf[2 * i] = digits[id->bytes[i] >> 4];
		buf[2 * i + 1] = digits[id->bytes[i] & 15];
	}
	buf[2 * n] = 0;
}
