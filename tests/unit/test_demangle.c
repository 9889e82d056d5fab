/* SPDX-License-Identifier: MIT */
/*
 * test_demangle.c: symdb_demangle() under hostile names and on real ones.
 *
 * 1. Hostile names (issue 12, defect 5) each give 0 ("print the raw name")
 *    in under 100 ms of CPU and 64 MiB of extra peak RSS: "_Z1fP" + 10^6
 *    'P' + "i", a 200 KB nested template, a 400 KB nested function type, the
 *    454-byte name whose printed size doubles with each substitution step,
 *    and the same shapes for the parser's other recursions.  Before the
 *    bounds these crashed the process (stack overflow) or grew past 4 GB.
 * 2. Real names: every Itanium name exported by libstdc++ and libLLVM-14
 *    plus a list of rare constructs, demangled exactly as llvm-cxxfilt-14
 *    demangles them (the oracle; a name it leaves alone must come back 0).
 * 3. Tight budgets: with small limits rd_llvm_demangle() either refuses (0)
 *    or gives the same text as with the default ones, never something else
 *    and never a crash (node allocation failing mid-parse included).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "reader_demangle.h"

/* Bounds on one hostile name.  The CPU bound is a blow-up detector, not a
 * timing: a broken guard costs seconds (the forward reference printed 2^12
 * times took 2.4 s and 832 MiB without it) where the slowest case takes
 * 40 ms plain and took 113 ms under ASan+UBSan with two suites sharing 2
 * cores, which failed the old 100 ms bound. */
#define HOSTILE_CPU_MS 1000.0
#define HOSTILE_RSS_KB (64L * 1024)

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long peak_rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* pre + n copies of mid + post + n copies of tail, malloc'd. */
static char *repeat(const char *pre, const char *mid, size_t n, const char *post, const char *tail)
{
	size_t lp = strlen(pre), lm = strlen(mid), lq = strlen(post), lt = strlen(tail);
	char *s = malloc(lp + n * (lm + lt) + lq + 1);
	if (!s)
		abort();
	char *p = s;
	memcpy(p, pre, lp), p += lp;
	for (size_t i = 0; i < n; i++)
		memcpy(p, mid, lm), p += lm;
	memcpy(p, post, lq), p += lq;
	for (size_t i = 0; i < n; i++)
		memcpy(p, tail, lt), p += lt;
	*p = 0;
	return s;
}

/* A substitution in base 36: S_ is 0, S0_ is 1, ... */
static void subst(char *out, unsigned i)
{
	static const char d[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	if (i == 0) {
		strcpy(out, "S_");
		return;
	}
	char tmp[16];
	int n = 0;
	for (unsigned v = i - 1;; v /= 36) {
		tmp[n++] = d[v % 36];
		if (v < 36)
			break;
	}
	int k = 0;
	out[k++] = 'S';
	while (n)
		out[k++] = tmp[--n];
	out[k++] = '_';
	out[k] = 0;
}

/* pre + "PFv1AE" + steps steps "PFv" S S "E", each S the substitution
 * first + 2k (the pointer the step before made), + post: each step doubles
 * what the last pointer prints.  post may hold one "%s", replaced by the
 * substitution of the last pointer. */
static char *doubling_in(const char *pre, unsigned first, unsigned steps, const char *post)
{
	char *s = malloc(strlen(pre) + 16 + steps * 16 + strlen(post) + 16);
	if (!s)
		abort();
	sprintf(s, "%sPFv1AE", pre);
	char sb[16];
	for (unsigned k = 0; k < steps; k++) {
		subst(sb, first + 2 * k);
		sprintf(s + strlen(s), "PFv%s%sE", sb, sb);
	}
	subst(sb, first + 2 * steps);
	sprintf(s + strlen(s), post, sb);
	return s;
}

/* "_Z1fPFv1AE" + "PFvS1_S1_E" + "PFvS3_S3_E" + ...: steps steps. */
static char *doubling(unsigned steps)
{
	return doubling_in("_Z1f", 2, steps, "");
}

/*
 * The same doubling where the tree also holds a forward template
 * reference (a conversion operator's "cv T_", resolved once its template
 * arguments are read): nodes made before the first one have their print
 * bound measured as they are made, the others by a walk from the root.
 * Before: every doubling node is made after it (so walked); after: inside
 * a local name's function, before it (so measured at birth), the reference
 * resolving to an int or to the last, largest pointer.
 */
static char *doubling_ftr_before(unsigned steps)
{
	return doubling_in("_ZN1AcvT_I", 5, steps, "EEv");
}
static char *doubling_ftr_after(unsigned steps)
{
	return doubling_in("_ZZ1f", 2, steps, "EN1BcvT_IiEEv");
}
static char *doubling_ftr_after_ref(unsigned steps)
{
	return doubling_in("_ZZ1f", 2, steps, "EN1BcvT_I%sEEv");
}

/* A conversion operator to a type of 2^steps copies of T_, whose template
 * argument T_ is itself steps nested doublings: the output grows fourfold
 * with each step, through a forward reference printed 2^steps times. */
static char *ftr_squared(unsigned steps)
{
	char *s = malloc(64 + steps * 16);
	if (!s)
		abort();
	strcpy(s, "_ZN1Acv");
	char sb[16];
	for (unsigned k = 0; k < steps; k++)
		strcat(s, "PFv");
	strcat(s, "PFvT_T_E");
	for (unsigned k = 0; k < steps; k++) {
		subst(sb, 4 + 2 * k);
		sprintf(s + strlen(s), "%sE", sb);
	}
	strcat(s, "I");
	for (unsigned k = 0; k < steps; k++)
		strcat(s, "PFv");
	strcat(s, "PFv1B1BE");
	for (unsigned k = 0; k < steps; k++) {
		subst(sb, 9 + 2 * steps + 2 * k);
		sprintf(s + strlen(s), "%sE", sb);
	}
	strcat(s, "EEv");
	return s;
}

/* Rust v0: a generic function over (u8, u8) and steps tuples, each of two
 * back references to the one before, so each doubles the output. */
static char *rust_doubling(unsigned steps)
{
	static const char d[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char *s = malloc(32 + steps * 24);
	if (!s)
		abort();
	strcpy(s, "_RINvC1a1f");
	size_t prev = strlen(s) - 2; /* positions count after "_R" */
	strcat(s, "ThhE");
	for (unsigned k = 0; k < steps; k++) {
		char ref[16], digits[12];
		int n = 0;
		if (prev == 0) {
			strcpy(ref, "B_");
		} else {
			for (size_t v = prev - 1;; v /= 62) {
				digits[n++] = d[v % 62];
				if (v < 62)
					break;
			}
			int j = 0;
			ref[j++] = 'B';
			while (n)
				ref[j++] = digits[--n];
			ref[j++] = '_';
			ref[j] = 0;
		}
		size_t here = strlen(s) - 2;
		sprintf(s + strlen(s), "T%s%sE", ref, ref);
		prev = here;
	}
	strcat(s, "E");
	return s;
}

/* Microsoft: levels nested class templates, each over a function pointer
 * type whose parameters double nine times through back references. */
static char *ms_doubling(unsigned levels)
{
	char *s = malloc(64 + (levels + 1) * 128);
	char *t = malloc(64 + (levels + 1) * 128);
	if (!s || !t)
		abort();
	strcpy(t, "PEAH");
	for (unsigned l = 0; l <= levels; l++) {
		size_t n = (size_t)sprintf(s, l < levels ? "V?$A@P6AX%s" : "?f@@YAX%s", t);
		for (int i = 0; i < 9; i++)
			n += (size_t)sprintf(s + n, "P6AX%d%d@Z", i, i);
		strcpy(s + n, l < levels ? "@Z@@" : "@Z");
		strcpy(t, s);
	}
	free(t);
	return s;
}

static void hostile_one(const char *what, char *name)
{
	char *buf = malloc(256);
	size_t cap = 256;
	long rss0 = peak_rss_kb();
	double t0 = cpu_ms();
	int rc = symdb_demangle(name, &buf, &cap);
	double ms = cpu_ms() - t0;
	long extra = peak_rss_kb() - rss0;
	printf("hostile %-28s %8zu bytes: rc %d, %.2f ms CPU, %ld KiB extra peak RSS\n", what,
	       strlen(name), rc, ms, extra);
	if (rc != 0)
		fprintf(stderr, "%s: demangled to %.80s...\n", what, buf);
	CHECK(rc == 0);
	CHECK(ms < HOSTILE_CPU_MS);
	CHECK(extra < HOSTILE_RSS_KB);
	free(buf);
	free(name);
}

static void test_hostile(void)
{
	hostile_one("pointer chain 10^6", repeat("_Z1fP", "P", 1000000, "i", ""));
	hostile_one("pointer chain 200 KB", repeat("_Z1fP", "P", 200000, "i", ""));
	hostile_one("nested template 200 KB", repeat("_Z1fI", "1AI", 50000, "i", "E"));
	hostile_one("nested function type 400 KB", repeat("_Z1f", "PF", 133333, "vv", "E"));
	hostile_one("nested function type 150 KB", repeat("_Z1f", "PF", 50000, "vv", "E"));
	char *d = doubling(40);
	CHECK(strlen(d) == 454);
	hostile_one("doubling substitutions", d);
	hostile_one("doubling, 18 steps", doubling(18));
	hostile_one("doubling after a forward ref", doubling_ftr_before(40));
	hostile_one("doubling before a forward ref", doubling_ftr_after(40));
	hostile_one("doubling, forward ref to it", doubling_ftr_after_ref(40));
	hostile_one("doubling, forward ref, 18", doubling_ftr_after_ref(18));
	hostile_one("forward ref printed 2^12 times", ftr_squared(12));
	/* parseTemplateParamDecl's own recursion ("Tp"/"Tt" in a lambda). */
	hostile_one("template param decls", repeat("_ZZ1fvENKUl", "Tp", 100000, "TyEvE_clEv", ""));
	hostile_one("template template params", repeat("_ZZ1fvENKUl", "Tt", 60000, "TyE", "E"));
	/* Expressions, ABI block invokes and packs. */
	hostile_one("nested expressions", repeat("_Z1fIXadL_Z1g", "ps", 100000, "Li1EEEEvv", ""));
	hostile_one("template arg packs", repeat("_Z1fI", "J", 100000, "i", "E"));
	hostile_one("block invoke chain", repeat("___Z1f", "P", 200000, "i_block_invoke", ""));
	/* Rust: LLVM limits its recursion, not its output. */
	hostile_one("Rust doubling back refs", rust_doubling(36));
	hostile_one("Rust doubling, 20 steps", rust_doubling(20));
	hostile_one("Rust nested types 200 KB", repeat("_RINvC1a1f", "S", 200000, "hE", ""));
	/* Microsoft: 255 bytes that made 24 GB; deep nesting within 4 KiB. */
	hostile_one("Microsoft doubling back refs", ms_doubling(2));
	hostile_one("Microsoft doubling, 3 levels", ms_doubling(3));
	hostile_one("Microsoft doubling, 1 level", ms_doubling(1));
	hostile_one("Microsoft nested templates", repeat("?x@@3", "V?$A@", 500, "H", "@@"));
	hostile_one("Microsoft pointer chain", repeat("?x@@3", "PEA", 1300, "H", ""));
}

/* Names the libraries do not export: lambdas, packs, folds, conversion
 * operator templates, ABI tags, blocks, Rust and D. */
static const char *const rare_names[] = {
	"_ZZ4mainENKUlT_E_clIiEEDaS_",
	"_ZN5Outer5InnerIJiDpT_EE1fEv",
	"_Z1fIJicdEEvDpT_",
	"_Z4foldIJiiiEEDTfrplT_EEDpS0_",
	"_Z1fIJiiEEvDTflplfp_EE",
	"_ZN1AcvT_IiEEv",
	"_ZN1AcvPT_IcEEv",
	"_ZN3std7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC2EPKcRKS3_",
	"_ZNKSt6vectorIiSaIiEE4sizeB5cxx11Ev",
	"___Z1fv_block_invoke",
	"___Z1fv_block_invoke_12",
	"_Z1fIiEvT_PFvS0_E",
	/* doubling_ftr_before(2), doubling_ftr_after(2), doubling_ftr_after_ref(2) */
	"_ZN1AcvT_IPFv1AEPFvS4_S4_EPFvS6_S6_EEEv",
	"_ZZ1fPFv1AEPFvS1_S1_EPFvS3_S3_EEN1BcvT_IiEEv",
	"_ZZ1fPFv1AEPFvS1_S1_EPFvS3_S3_EEN1BcvT_IS5_EEv",
	"_ZZ1fvENKUlTtTyETtTyEvE_clEv", /* sibling_tt(2) */
	"_ZN1AcvPFvPFvPFvPFvT_T_ES3_ES5_ES7_EIPFvPFvPFvPFv1B1BESE_ESG_ESI_EEEv", /* ftr_squared(3) */
	"_ZTVN10__cxxabiv117__class_type_infoE",
	"_ZTCN3std9strstreamE16_NS_13basic_ostreamIcSt11char_traitsIcEEE",
	"_ZGVZ1fvE1x",
	"_Z1fDv4_f",
	"_Z1fA10_i",
	"_Z1fM1AFivE",
	"_ZN1A1fEOS_",
	"_Z1fILi42EEvv",
	"_Z1fILb1EEvv",
	"_Z1fIXadL_Z1gvEEEvv",
	"_Z3fooILm18446744073709551615EEvv",
	"_ZNSt3__14pairIKNS_12basic_stringIcNS_11char_traitsIcEENS_9allocatorIcEEEEiEC2B7v160006IJS7_EJiEEENS_21piecewise_construct_tENS_5tupleIJDpT_EEENSC_IJDpT0_EEE",
	"_ZZN1N1fEvE1x_0",
	"_Z1fPU3AS1i",
	"_ZN4core3fmt5write17h0123456789abcdefE",
	"_RNvCs1234_7mycrate3foo",
	"_RINvNtC3std3mem8align_ofjEC3foo",
	"_RNvMNtCs1234_5tokio4taskNtB2_4Task3new",
	"_RINvC1a1fTTTEhEE",
	"_RINvC1a1fThhETB7_B7_ETBb_Bb_ETBj_Bj_ETBr_Br_EE", /* doubling, 4 steps */
	"_Dmain",
	"_D4test3fooFZv",
	"_Z1fv.cold",
	"_Z1fv.isra.0",
	"_ZdlPv",
	"_Znwm",
	"_ZThn8_N1A1fEv",
	"_ZTv0_n24_N1B1gEv",
	NULL,
};

/* Fill path with one name per line; returns the number written. */
static size_t write_names(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return 0;
	size_t n = 0;
	for (const char *const *p = rare_names; *p; p++, n++)
		fprintf(f, "%s\n", *p);
	fclose(f);
	static const char *const libs[] = {
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
	};
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		if (access(libs[i], R_OK) != 0)
			continue;
		char cmd[1000];
		snprintf(cmd, sizeof(cmd),
			 "llvm-nm-14 -D --defined-only --no-demangle --format=just-symbols %s"
			 " | sed 's/@.*//' | grep -E '^(_Z|___Z|_R)' >> %s",
			 libs[i], path);
		if (system(cmd) != 0)
			continue;
	}
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = 0;
	for (int c; (c = fgetc(f)) != EOF;)
		n += c == '\n';
	fclose(f);
	return n;
}

static void chomp(char *s)
{
	size_t n = strlen(s);
	if (n && s[n - 1] == '\n')
		s[n - 1] = 0;
}

#ifdef SYMDB_HAVE_LLVM_DEMANGLE
/* The default limits with some made small. */
static struct rd_demangle_limits limits(size_t arena, unsigned depth, size_t output)
{
	struct rd_demangle_limits l = {
		.input_max = RD_DEMANGLE_INPUT_MAX,
		.ms_input_max = RD_DEMANGLE_MS_INPUT_MAX,
		.depth_max = depth,
		.arena_max = arena,
		.output_max = output,
	};
	return l;
}

/* An output budget one byte short of the name refuses it: the bound before
 * printing is an upper bound. */
static void check_tight(const char *name, const char *full, char **buf, size_t *cap)
{
	if (!full)
		return;
	struct rd_demangle_limits l = limits(RD_DEMANGLE_ARENA_MAX, RD_DEMANGLE_DEPTH_MAX,
					     strlen(full) - 1);
	if (rd_llvm_demangle(name, buf, cap, &l) != 0) {
		fprintf(stderr, "bound below the output: %s -> %s\n", name, full);
		CHECK(0);
	}
}

/* Small budgets give 0 or the same text. */
static void check_budgets(const char *name, const char *full, char **buf, size_t *cap)
{
	static const size_t arenas[] = {0, 64, 300, 1000, 4000};
	static const unsigned depths[] = {0, 1, 3, 8, 20};
	static const size_t outputs[] = {0, 8, 40, 200};
	for (size_t i = 0; i < 5; i++) {
		struct rd_demangle_limits l[3] = {
			limits(arenas[i], RD_DEMANGLE_DEPTH_MAX, RD_DEMANGLE_OUTPUT_MAX),
			limits(RD_DEMANGLE_ARENA_MAX, depths[i], RD_DEMANGLE_OUTPUT_MAX),
			limits(RD_DEMANGLE_ARENA_MAX, RD_DEMANGLE_DEPTH_MAX, outputs[i % 4]),
		};
		for (int k = 0; k < 3; k++) {
			int rc = rd_llvm_demangle(name, buf, cap, &l[k]);
			if (rc == 1 && strlen(*buf) > l[k].output_max) {
				fprintf(stderr, "budget %d/%zu: %s printed %zu bytes, over %zu\n", k, i,
					name, strlen(*buf), l[k].output_max);
				CHECK(0);
			}
			if (rc == 1 && (!full || strcmp(*buf, full) != 0)) {
				fprintf(stderr, "budget %d/%zu: %s -> %s, not %s\n", k, i, name, *buf,
					full ? full : "(refused)");
				CHECK(0);
			}
		}
	}
}

/* The pairs "Tt"/"Tp" in s, counted the plain way. */
static size_t naive_pairs(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i + 1 < len; i++)
		n += s[i] == 'T' && (s[i + 1] == 't' || s[i + 1] == 'p');
	return n;
}

/* A lambda with k template template parameters: k sibling "Tt" pairs that
 * nest no deeper than one. */
static char *sibling_tt(unsigned k)
{
	return repeat("_ZZ1fvENKUl", "TtTyE", k, "vE_clEv", "");
}

/*
 * rd_itanium_param_decls_over() counts the pairs "Tt"/"Tp" only in names
 * longer than 2 * max + 1 bytes, since no shorter one holds more than max.
 * Around that edge (every string of up to 9 bytes over "Ttpx", max 0..5) it
 * answers as the plain count does; through the demangler, with the depth
 * limit d, a name with d sibling pairs demangles as with the default
 * limits and one with d + 1 is refused (no other bound refuses it: its
 * nesting is shallow).
 */
static void test_param_decls(void)
{
	char s[16];
	size_t bad = 0, strings = 0;
	for (size_t len = 0; len <= 9; len++) {
		size_t total = 1;
		for (size_t i = 0; i < len; i++)
			total *= 4;
		for (size_t code = 0; code < total; code++, strings++) {
			size_t c = code;
			for (size_t i = 0; i < len; i++, c /= 4)
				s[i] = "Ttpx"[c % 4];
			s[len] = 0;
			for (size_t max = 0; max <= 5; max++)
				if (rd_itanium_param_decls_over(s, len, max) != (naive_pairs(s, len) > max) &&
				    bad++ < 5)
					fprintf(stderr, "param decls: \"%s\" max %zu\n", s, max);
		}
	}
	printf("param decls: %zu strings, %zu answers differ from the plain count\n", strings, bad);
	CHECK(bad == 0);
	char *buf = malloc(256), *full = NULL;
	size_t cap = 256;
	static const unsigned depths[] = {24, 40, 100};
	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		unsigned d = depths[i];
		struct rd_demangle_limits l =
			limits(RD_DEMANGLE_ARENA_MAX, d, RD_DEMANGLE_OUTPUT_MAX);
		for (unsigned k = d; k <= d + 1; k++) {
			char *name = sibling_tt(k);
			CHECK(naive_pairs(name, strlen(name)) == k);
			CHECK(symdb_demangle(name, &buf, &cap) == 1);
			free(full);
			full = strdup(buf);
			int rc = rd_llvm_demangle(name, &buf, &cap, &l);
			printf("param decls: %u sibling pairs, depth limit %u: rc %d\n", k, d, rc);
			CHECK(rc == (k <= d));
			if (rc == 1)
				CHECK(strcmp(buf, full) == 0);
			free(name);
		}
	}
	free(buf);
	free(full);
}

/* The small doublings of rare_names are the hostile ones' shapes. */
static void test_ftr_shapes(void)
{
	char *a = doubling_ftr_before(2), *b = doubling_ftr_after(2), *c = doubling_ftr_after_ref(2),
	     *t = sibling_tt(2);
	CHECK(strcmp(a, "_ZN1AcvT_IPFv1AEPFvS4_S4_EPFvS6_S6_EEEv") == 0);
	CHECK(strcmp(b, "_ZZ1fPFv1AEPFvS1_S1_EPFvS3_S3_EEN1BcvT_IiEEv") == 0);
	CHECK(strcmp(c, "_ZZ1fPFv1AEPFvS1_S1_EPFvS3_S3_EEN1BcvT_IS5_EEv") == 0);
	CHECK(strcmp(t, "_ZZ1fvENKUlTtTyETtTyEvE_clEv") == 0);
	free(a), free(b), free(c), free(t);
	char *q = ftr_squared(3);
	CHECK(strcmp(q, "_ZN1AcvPFvPFvPFvPFvT_T_ES3_ES5_ES7_EIPFvPFvPFvPFv1B1BESE_ESG_ESI_EEEv") == 0);
	free(q);
}

#else
static void test_param_decls(void)
{
}
static void test_ftr_shapes(void)
{
}
static void check_budgets(const char *name, const char *full, char **buf, size_t *cap)
{
	(void)name, (void)full, (void)buf, (void)cap;
}
static void check_tight(const char *name, const char *full, char **buf, size_t *cap)
{
	(void)name, (void)full, (void)buf, (void)cap;
}
#endif

static void test_oracle(void)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char names[400], expect[400], cmd[1000];
	snprintf(names, sizeof(names), "%s/test_demangle.%d.names", tmp, (int)getpid());
	snprintf(expect, sizeof(expect), "%s/test_demangle.%d.expect", tmp, (int)getpid());
	if (system("command -v llvm-cxxfilt-14 >/dev/null && command -v llvm-nm-14 >/dev/null") != 0) {
		check_skip("llvm-cxxfilt-14 or llvm-nm-14 not found");
		return;
	}
	size_t n = write_names(names);
	snprintf(cmd, sizeof(cmd), "llvm-cxxfilt-14 < %s > %s", names, expect);
	CHECK(n > 30);
	CHECK(system(cmd) == 0);
	FILE *fn = fopen(names, "r"), *fe = fopen(expect, "r");
	CHECK(fn && fe);
	if (!fn || !fe)
		return;
	char *name = NULL, *want = NULL, *buf = malloc(256), *full = NULL;
	size_t name_cap = 0, want_cap = 0, cap = 256, count = 0, bad = 0, demangled = 0;
	while (getline(&name, &name_cap, fn) > 0 && getline(&want, &want_cap, fe) > 0) {
		chomp(name);
		chomp(want);
		int rc = symdb_demangle(name, &buf, &cap);
		const char *got = rc == 1 ? buf : name;
		count++;
		demangled += rc == 1;
		if (strcmp(got, want) != 0 && bad++ < 5)
			fprintf(stderr, "%s:\n  symdb        %s\n  llvm-cxxfilt %s\n", name, got, want);
		free(full);
		full = rc == 1 ? strdup(buf) : NULL;
		check_tight(name, full, &buf, &cap);
		/* Budgets on the rare names and on every 97th real one. */
		if (count <= sizeof(rare_names) / sizeof(rare_names[0]) || count % 97 == 0)
			check_budgets(name, full, &buf, &cap);
	}
	printf("oracle: %zu names (%zu demangled), %zu differ from llvm-cxxfilt-14\n", count,
	       demangled, bad);
	CHECK(count == n);
	CHECK(bad == 0);
	free(name);
	free(want);
	free(buf);
	free(full);
	fclose(fn);
	fclose(fe);
	unlink(names);
	unlink(expect);
}

/* Microsoft names, checked against llvm-undname-14 with the flags
 * llvm-symbolizer-14 uses. */
static const char *const ms_names[] = {
	"?x@@3HA",
	"?f@@YAXXZ",
	"??0A@@QEAA@XZ",
	"??1A@@QEAA@XZ",
	"?f@A@@QEAAHH@Z",
	"??$f@H@@YAXH@Z",
	"?f@@YAXV?$vector@HV?$allocator@H@std@@@std@@@Z",
	"??_7A@@6B@",
	"??_R0?AVA@@@8",
	"?f@@YAXP6AXH@Z@Z",
	"??$?8DU?$char_traits@D@std@@V?$allocator@D@1@@std@@YA_NAEBV?$basic_string@DU?$char_"
	"traits@D@std@@V?$allocator@D@2@@0@PEBD@Z",
	"??_C@_05CJBACGMB@hello?$AA@",
	"?g@@YAXQEAH@Z",
	"??4A@@QEAAAEAV0@AEBV0@@Z",
	"?f@@YAXV?$A@P6AXPEAHP6AX00@ZP6AX11@Z@Z@@P6AX00@ZP6AX11@Z@Z",
	"??_GA@@UEAAPEAXI@Z",
	"?x@?1??f@@YAXXZ@4HA",
	"??$f@$0BA@@@YAXXZ",
	"?f@@YAX$$QEAH@Z",
	"??__E?x@@YAXXZ@@YAXXZ",
	"?f@@YAXPEQA@@H@Z",
	"?s@@3PAY01HA",
	NULL,
};

static void test_ms_oracle(void)
{
	if (system("command -v llvm-undname-14 >/dev/null") != 0) {
		check_skip("llvm-undname-14 not found");
		return;
	}
	char cmd[8192] = "llvm-undname-14 --no-access-specifier --no-calling-convention"
			 " --no-member-type --no-return-type 2>/dev/null";
	for (const char *const *p = ms_names; *p; p++)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " '%s'", *p);
	FILE *f = popen(cmd, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char *line = NULL, *buf = malloc(256), *full = NULL;
	size_t line_cap = 0, cap = 256, n = 0, bad = 0;
	/* Blocks: the name, its demangling, ""; or the name, "" when it fails. */
	for (const char *const *p = ms_names; *p; p++, n++) {
		if (getline(&line, &line_cap, f) <= 0 || getline(&line, &line_cap, f) < 0)
			break;
		chomp(line);
		int failed = !*line;
		int rc = symdb_demangle(*p, &buf, &cap);
		const char *want = *line ? line : *p, *got = rc == 1 ? buf : *p;
		if (strcmp(got, want) != 0 && bad++ < 5)
			fprintf(stderr, "%s:\n  symdb         %s\n  llvm-undname  %s\n", *p, got, want);
		free(full);
		full = rc == 1 ? strdup(buf) : NULL;
		check_tight(*p, full, &buf, &cap);
		check_budgets(*p, full, &buf, &cap);
		if (!failed && getline(&line, &line_cap, f) < 0)
			break;
	}
	pclose(f);
	printf("oracle: %zu Microsoft names, %zu differ from llvm-undname-14\n", n, bad);
	CHECK(n == sizeof(ms_names) / sizeof(ms_names[0]) - 1);
	CHECK(bad == 0);
	free(line);
	free(buf);
	free(full);
}

int main(void)
{
#ifndef SYMDB_HAVE_LLVM_DEMANGLE
	check_skip("built without LLVM's demangler: __cxa_demangle has no bounds here");
	return check_exit();
#endif
	test_hostile(); /* first: its RSS figures start from a small process */
	test_oracle();
	test_ms_oracle();
	test_param_decls();
	test_ftr_shapes();
	return check_exit();
}
