/* SPDX-License-Identifier: MIT */
/*
 * kallsyms_baseline.c - the floor for `symdb query --kernel` in
 * bench/kernel_bench.sh: the least a program must do to name kernel
 * addresses from kallsyms.  Read the file (the kept types and the choice
 * among symbols at one address are symdb's, i.e. perf's, so that the output
 * is byte for byte the same), sort, then per stdin line one binary search
 * and the answer in llvm-symbolizer's form ("name\n??:0:0\n\n") through a
 * large stdio buffer.  No library, no database, no options.
 *
 * usage: kallsyms_baseline KALLSYMS < ADDRESSES > ANSWERS
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sym {
	uint64_t addr, end;
	char *name;
	char type;
	int mod; /* index of the module name, 0 = kernel image */
	size_t line;
};

static int cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static size_t us(const char *s)
{
	size_t n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

static int better(const struct sym *a, const struct sym *b)
{
	int wa = a->type == 'W', wb = b->type == 'W';
	if (wa != wb)
		return wb;
	int ga = a->type != 'W' && isupper((unsigned char)a->type);
	int gb = b->type != 'W' && isupper((unsigned char)b->type);
	if (ga != gb)
		return ga;
	if (us(a->name) != us(b->name))
		return us(a->name) < us(b->name);
	return strlen(a->name) > strlen(b->name);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	FILE *f = fopen(argv[1], "r");
	if (!f)
		return 1;
	struct sym *s = NULL;
	size_t n = 0, cap = 0, lines = 0;
	char *line = NULL, mods[64][64];
	int nmods = 0;
	size_t lcap = 0;
	while (getline(&line, &lcap, f) > 0) {
		char name[512], mod[64] = "", t;
		unsigned long long a;
		int k = sscanf(line, "%llx %c %511s [%63[^]]]", &a, &t, name, mod);
		lines++;
		if (k < 3 || !strchr("TtWwDdBb", t) || name[0] == '$')
			continue;
		int mi = 0;
		if (k == 4) {
			for (mi = nmods; mi > 0 && strcmp(mods[mi - 1], mod); mi--)
				;
			if (mi == 0 && nmods < 64) {
				strcpy(mods[nmods++], mod);
				mi = nmods;
			}
		}
		if (n == cap)
			s = realloc(s, (cap = cap ? 2 * cap : 4096) * sizeof(*s));
		s[n++] = (struct sym){ a, 0, strdup(name), t, mi, lines };
	}
	fclose(f);
	qsort(s, n, sizeof(*s), cmp);
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (w && s[w - 1].addr == s[i].addr) {
			if (better(&s[i], &s[w - 1]))
				s[w - 1] = s[i];
			continue;
		}
		s[w++] = s[i];
	}
	n = w;
	for (size_t i = 0; i < n; i++) {
		uint64_t pe = (s[i].addr + 2 * 4096 - 1) & ~(uint64_t)4095;
		s[i].end = i + 1 < n && s[i].mod == s[i + 1].mod ? s[i + 1].addr : pe;
		if (i + 1 < n && s[i].end > s[i + 1].addr)
			s[i].end = s[i + 1].addr;
	}
	static char obuf[1 << 18];
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	while (getline(&line, &lcap, stdin) > 0) {
		uint64_t a = strtoull(line, NULL, 16);
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s[mid].addr <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		const char *nm = lo && a < s[lo - 1].end ? s[lo - 1].name : "??";
		fputs(nm, stdout);
		fputs("\n??:0:0\n\n", stdout);
	}
	return 0;
}
