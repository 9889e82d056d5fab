/* SPDX-License-Identifier: MIT */
/*
 * cli_llvm_rsp.c - the arguments as llvm-symbolizer-14 sees them before it
 * parses options: the words of $LLVM_SYMBOLIZER_OPTS first (OptTable::
 * setInitialOptionsFromEnvironment, so that the command line overrides
 * them), then argv, then every "@FILE" replaced by the words of FILE
 * (cl::ExpandResponseFiles with the GNU tokenizer, as LLVM does on Linux):
 *
 *   - words are separated by blanks, tabs, CR and LF; a backslash takes the
 *     next character literally; '...' and "..." quote (a backslash escapes
 *     inside both), an unterminated quote runs to the end of the file, and
 *     an empty word ("") vanishes; a UTF-8 byte order mark is skipped and a
 *     UTF-16 one converted;
 *   - "@FILE" inside FILE is expanded too, relative to the current
 *     directory like any other (LLVM 14 passes RelativeNames = false);
 *   - a FILE that cannot be read, or that is already being expanded (the
 *     same device and inode: a recursion), stays as the literal argument,
 *     which llvm-symbolizer then takes as an input (an address).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli_llvm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct words {
	char **v;
	size_t n, cap;
};

static int words_push(struct words *w, char *s)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		char **nv = realloc(w->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		w->v = nv;
		w->cap = cap;
	}
	w->v[w->n++] = s;
	return 0;
}

struct token {
	char *buf;
	size_t len, cap;
};

static int tok_put(struct token *t, char c)
{
	if (t->len + 1 >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char *nb = realloc(t->buf, cap);
		if (!nb)
			return -1;
		t->buf = nb;
		t->cap = cap;
	}
	t->buf[t->len++] = c;
	return 0;
}

/* The token so far as a new word (a NUL inside it ends the string, as
 * LLVM's const char * argv does). */
static int tok_emit(struct token *t, struct words *out)
{
	if (!t->len)
		return 0;
	char *s = malloc(t->len + 1);
	if (!s || (memcpy(s, t->buf, t->len), s[t->len] = '\0', words_push(out, s))) {
		free(s);
		return -1;
	}
	t->len = 0;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* cl::TokenizeGNUCommandLine. */
static int tokenize_gnu(const char *s, size_t n, struct words *out)
{
	struct token t = { 0 };
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (t.len == 0) {
			while (i < n && is_blank(s[i]))
				i++;
			if (i == n)
				break;
		}
		char c = s[i];
		if (c == '\\' && i + 1 < n) {
			rc = tok_put(&t, s[++i]);
		} else if (c == '"' || c == '\'') {
			for (i++; i < n && s[i] != c && rc == 0; i++) {
				if (s[i] == '\\' && i + 1 != n)
					i++;
				rc = tok_put(&t, s[i]);
			}
			if (i == n)
				break;
		} else if (is_blank(c)) {
			rc = tok_emit(&t, out);
		} else {
			rc = tok_put(&t, c);
		}
	}
	if (rc == 0)
		rc = tok_emit(&t, out);
	free(t.buf);
	return rc;
}

/* One UTF-16 file (after its byte order mark) as UTF-8, as LLVM's
 * convertUTF16ToUTF8String; NULL when it is not valid UTF-16.  A unit
 * gives at most 3 bytes, a surrogate pair (two units) 4. */
static char *utf16_to_utf8(const unsigned char *p, size_t n, int big, size_t *outlen)
{
	char *o = malloc(n / 2 * 3 + 1);
	size_t k = 0;
	if (!o || n % 2) {
		free(o);
		return NULL;
	}
	for (size_t i = 0; i < n; i += 2) {
		uint32_t u = big ? (uint32_t)(p[i] << 8 | p[i + 1]) : (uint32_t)(p[i + 1] << 8 | p[i]);
		if (u >= 0xd800 && u < 0xdc00 && i + 3 < n) {
			uint32_t lo = big ? (uint32_t)(p[i + 2] << 8 | p[i + 3])
			                  : (uint32_t)(p[i + 3] << 8 | p[i + 2]);
			if (lo < 0xdc00 || lo > 0xdfff)
				goto bad;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			i += 2;
		} else if (u >= 0xd800 && u <= 0xdfff) {
			goto bad;
		}
		if (u < 0x80) {
			o[k++] = (char)u;
		} else if (u < 0x800) {
			o[k++] = (char)(0xc0 | u >> 6);
			o[k++] = (char)(0x80 | (u & 0x3f));
		} else if (u < 0x10000) {
			o[k++] = (char)(0xe0 | u >> 12);
			o[k++] = (char)(0x80 | (u >> 6 & 0x3f));
			o[k++] = (char)(0x80 | (u & 0x3f));
		} else {
			o[k++] = (char)(0xf0 | u >> 18);
			o[k++] = (char)(0x80 | (u >> 12 & 0x3f));
			o[k++] = (char)(0x80 | (u >> 6 & 0x3f));
			o[k++] = (char)(0x80 | (u & 0x3f));
		}
	}
	*outlen = k;
	return o;
bad:
	free(o);
	return NULL;
}

/* The whole file, or NULL (it stays a literal argument). */
static char *read_file(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	for (;;) {
		if (!b)
			return NULL;
		if (n == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				return NULL;
			}
			b = nb;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return b;
}

/* The words of one response file appended to out; -1 when it cannot be
 * read (or out of memory: then *oom is set). */
static int expand_file(const char *path, struct words *out, struct stat *st, int *oom)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	char *b = NULL;
	if (fstat(fd, st) == 0)
		b = read_file(fd, &n);
	close(fd);
	if (!b)
		return -1;
	const unsigned char *u = (const unsigned char *)b;
	char *conv = NULL;
	const char *s = b;
	if (n >= 2 && ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff))) {
		conv = utf16_to_utf8(u + 2, n - 2, u[0] == 0xfe, &n);
		if (!conv) {
			free(b);
			return -1;
		}
		s = conv;
	} else if (n >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf) {
		s += 3;
		n -= 3;
	}
	int rc = tokenize_gnu(s, n, out);
	free(conv);
	free(b);
	if (rc)
		*oom = 1;
	return rc;
}

struct open_file {
	dev_t dev;
	ino_t ino;
	size_t end; /* its words end before this index of the argument list */
};

/* Expand every @FILE of w in place (cl::ExpandResponseFiles). */
static int expand_all(struct words *w)
{
	struct open_file *stack = NULL;
	size_t depth = 0, stack_cap = 0;
	int oom = 0;
	for (size_t i = 0; i < w->n && !oom;) {
		while (depth && i == stack[depth - 1].end)
			depth--;
		const char *a = w->v[i];
		if (a[0] != '@') {
			i++;
			continue;
		}
		struct stat st;
		int recursive = 0;
		if (stat(a + 1, &st) == 0)
			for (size_t k = 0; k < depth; k++)
				recursive |= stack[k].dev == st.st_dev && stack[k].ino == st.st_ino;
		struct words sub = { 0 };
		if (recursive || expand_file(a + 1, &sub, &st, &oom) < 0) {
			for (size_t k = 0; k < sub.n; k++)
				free(sub.v[k]);
			free(sub.v);
			i++;
			continue;
		}
		/* w->v[i] becomes sub's words */
		size_t need = w->n - 1 + sub.n;
		if (need > w->cap) {
			char **nv = realloc(w->v, need * sizeof(*nv));
			if (!nv) {
				oom = 1;
				break;
			}
			w->v = nv;
			w->cap = need;
		}
		free(w->v[i]);
		memmove(w->v + i + sub.n, w->v + i + 1, (w->n - i - 1) * sizeof(*w->v));
		if (sub.n)
			memcpy(w->v + i, sub.v, sub.n * sizeof(*w->v));
		w->n = need;
		free(sub.v);
		for (size_t k = 0; k < depth; k++)
			stack[k].end += sub.n - 1;
		if (depth == stack_cap) {
			stack_cap = stack_cap ? stack_cap * 2 : 8;
			struct open_file *ns = realloc(stack, stack_cap * sizeof(*ns));
			if (!ns) {
				oom = 1;
				break;
			}
			stack = ns;
		}
		stack[depth++] = (struct open_file){ st.st_dev, st.st_ino, i + sub.n };
	}
	free(stack);
	return oom ? -1 : 0;
}

void cli_llvm_args_free(char **args, int n)
{
	for (int i = 0; args && i < n; i++)
		free(args[i]);
	free(args);
}

int cli_llvm_expand_args(const char *env_value, int argc, char **argv, char ***out, int *outc)
{
	struct words w = { 0 };
	int rc = env_value ? tokenize_gnu(env_value, strlen(env_value), &w) : 0;
	for (int i = 0; i < argc && rc == 0; i++) {
		char *s = strdup(argv[i]);
		if (!s || words_push(&w, s)) {
			free(s);
			rc = -1;
		}
	}
	if (rc == 0)
		rc = expand_all(&w);
	if (rc == 0 && w.n > INT32_MAX)
		rc = -1;
	if (rc) {
		cli_llvm_args_free(w.v, (int)(w.n > INT32_MAX ? INT32_MAX : w.n));
		fputs("symdb: out of memory\n", stderr);
		return -1;
	}
	*out = w.v;
	*outc = (int)w.n;
	return 0;
}
