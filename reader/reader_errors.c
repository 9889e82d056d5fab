/* SPDX-License-Identifier: MIT */
/*
 * reader_errors.c - error strings, version queries and the default database
 * directory: the small, stateless corners of the public API.
 *
 * symdb_strerror() must be thread-safe and return static strings, so -errno
 * texts come from a table of our own, then glibc's strerrordesc_np(3),
 * rather than strerror(3), whose buffer for unknown values is shared (and
 * whose result may change with the locale under our feet).
 */
#define _GNU_SOURCE /* O_CLOEXEC, madvise, PATH_MAX */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

#define RD_STR_(x) #x
#define RD_STR(x) RD_STR_(x)

unsigned symdb_version_number(void)
{
	return SYMDB_VERSION_NUMBER;
}

const char *symdb_version_string(void)
{
	return RD_STR(SYMDB_VERSION_MAJOR) "." RD_STR(SYMDB_VERSION_MINOR) "." RD_STR(
		SYMDB_VERSION_PATCH);
}

/* The errno values a filesystem + mmap + LMDB library can plausibly return. */
#define RD_LIST_ERRNOS(X)                                      \
	X(EPERM, "Operation not permitted")                    \
	X(ENOENT, "No such file or directory")                 \
	X(ESRCH, "No such process")                            \
	X(EINTR, "Interrupted system call")                    \
	X(EIO, "Input/output error")                           \
	X(ENXIO, "No such device or address")                  \
	X(E2BIG, "Argument list too long")                     \
	X(EBADF, "Bad file descriptor")                        \
	X(EAGAIN, "Resource temporarily unavailable")          \
	X(ENOMEM, "Cannot allocate memory")                    \
	X(EACCES, "Permission denied")                         \
	X(EFAULT, "Bad address")                               \
	X(EBUSY, "Device or resource busy")                    \
	X(EEXIST, "File exists")                               \
	X(EXDEV, "Invalid cross-device link")                  \
	X(ENODEV, "No such device")                            \
	X(ENOTDIR, "Not a directory")                          \
	X(EISDIR, "Is a directory")                            \
	X(EINVAL, "Invalid argument")                          \
	X(ENFILE, "Too many open files in system")             \
	X(EMFILE, "Too many open files")                       \
	X(ETXTBSY, "Text file busy")                           \
	X(EFBIG, "File too large")                             \
	X(ENOSPC, "No space left on device")                   \
	X(ESPIPE, "Illegal seek")                              \
	X(EROFS, "Read-only file system")                      \
	X(EMLINK, "Too many links")                            \
	X(EPIPE, "Broken pipe")                                \
	X(ERANGE, "Numerical result out of range")             \
	X(EDEADLK, "Resource deadlock avoided")                \
	X(ENAMETOOLONG, "File name too long")                  \
	X(ENOLCK, "No locks available")                        \
	X(ENOSYS, "Function not implemented")                  \
	X(ENOTEMPTY, "Directory not empty")                    \
	X(ELOOP, "Too many levels of symbolic links")          \
	X(EOVERFLOW, "Value too large for defined data type")  \
	X(ENOTSUP, "Operation not supported")                  \
	X(EDQUOT, "Disk quota exceeded")                       \
	X(ESTALE, "Stale file handle")                         \
	X(ETIMEDOUT, "Connection timed out")

static const char *errno_text(int e)
{
#define RD_ERRNO_CASE_(code, text) \
	case code: return text;
	switch (e) {
		RD_LIST_ERRNOS(RD_ERRNO_CASE_)
	default: break;
	}
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	{
		/* The rest (ECONNREFUSED, EPROTO, ENOEXEC ... from the fetcher,
		 * /proc and the system): glibc's untranslated static texts,
		 * which are thread-safe as strerror's buffer is not. */
		const char *d = strerrordesc_np(e);
		if (d)
			return d;
	}
#endif
	return "Unknown system error";
#undef RD_ERRNO_CASE_
}

const char *symdb_strerror(int err)
{
#define RD_ERR_CASE_(name, value, str) \
	case value: return str;
	switch (err) {
		SYMDB_LIST_ERRORS(RD_ERR_CASE_)
	case 0: return "Success";
	default: break;
	}
#undef RD_ERR_CASE_
	if (err < 0 && err > -4000)
		return errno_text(-err);
	return "Unknown symdb error";
}

/* Append `tail` to `head` into buf.  Returns 0 or -ENAMETOOLONG. */
static int join_dir(char *buf, size_t bufsz, const char *head, const char *tail)
{
	int n = snprintf(buf, bufsz, "%s%s", head, tail);

	if (n < 0 || (size_t)n >= bufsz)
		return -ENAMETOOLONG;
	return 0;
}

int symdb_default_dir(const char *symdb_dir, const char *xdg_cache_home, const char *home,
                      char *buf, size_t bufsz)
{
	if (!buf || !bufsz)
		return SYMDB_E_INVAL;
	/* Empty values count as unset (XDG Base Directory rule). */
	if (symdb_dir && *symdb_dir)
		return join_dir(buf, bufsz, symdb_dir, "");
	if (xdg_cache_home && *xdg_cache_home == '/')
		return join_dir(buf, bufsz, xdg_cache_home, "/symdb");
	if (home && *home)
		return join_dir(buf, bufsz, home, "/.cache/symdb");
	return -ENOENT;
}

int rd_opts_tail(const void *in, size_t sz, size_t known, char *errbuf, size_t errbuf_sz)
{
	const unsigned char *p = in;

	for (size_t i = known; i < sz; i++)
		if (p[i])
			return fmt_err(errbuf, errbuf_sz, SYMDB_E_INVAL,
			               "options struct of %zu bytes has a non-zero byte at offset "
			               "%zu, past the %zu bytes this library knows",
			               sz, i, known);
	return 0;
}

int rd_opts_get(const symdb_open_opts *in, unsigned known, symdb_open_opts *o)
{
	const size_t end = RD_OPTS_END(symdb_open_opts);
	int rc;

	memset(o, 0, sizeof *o);
	o->sz = sizeof *o;
	if (!in)
		return 0;
	/* sz itself must be there; past the caller's sz every field reads as
	 * zero (an older, smaller struct), so even errbuf may be absent. */
	if (in->sz < sizeof in->sz)
		return SYMDB_E_INVAL;
	memcpy(o, in, in->sz < end ? in->sz : end);
	o->sz = sizeof *o;
	if (!o->errbuf)
		o->errbuf_sz = 0;
	if ((rc = rd_opts_tail(in, in->sz, end, o->errbuf, o->errbuf_sz)) != 0)
		return rc;
	if (o->flags & ~known)
		return fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_INVAL, "unknown option flags 0x%x",
		               o->flags & ~known);
	return 0;
}

int rd_opts_prefix(const void *in, size_t known_end, unsigned known, unsigned *flags,
                   char **errbuf, size_t *errbuf_sz)
{
	const size_t end = offsetof(symdb_open_opts, errbuf_sz) + sizeof(size_t);
	symdb_open_opts o;
	size_t sz;
	int rc;

	*flags = 0;
	*errbuf = NULL;
	*errbuf_sz = 0;
	if (!in)
		return 0;
	memcpy(&sz, in, sizeof sz);
	if (sz < sizeof sz)
		return SYMDB_E_INVAL;
	memset(&o, 0, sizeof o);
	memcpy(&o, in, sz < end ? sz : end);
	*errbuf = o.errbuf;
	*errbuf_sz = o.errbuf ? o.errbuf_sz : 0;
	if ((rc = rd_opts_tail(in, sz, known_end, *errbuf, *errbuf_sz)) != 0)
		return rc;
	if (o.flags & ~known)
		return fmt_err(*errbuf, *errbuf_sz, SYMDB_E_INVAL, "unknown option flags 0x%x",
		               o.flags & ~known);
	*flags = o.flags;
	return 0;
}

int rd_opts(const symdb_open_opts *in, unsigned known, unsigned *flags, char **errbuf,
            size_t *errbuf_sz)
{
	symdb_open_opts o;
	int rc = rd_opts_get(in, known, &o);

	*flags = rc ? 0 : o.flags;
	*errbuf = o.errbuf;
	*errbuf_sz = o.errbuf_sz;
	return rc;
}

int rd_out_put(void *out, const void *full, size_t full_sz)
{
	size_t sz, n;

	if (!out)
		return SYMDB_E_INVAL;
	memcpy(&sz, out, sizeof sz);
	if (sz < sizeof sz)
		return SYMDB_E_INVAL;
	n = sz < full_sz ? sz : full_sz;
	memcpy((char *)out + sizeof sz, (const char *)full + sizeof sz, n - sizeof sz);
	memcpy(out, &n, sizeof n);
	return 0;
}
