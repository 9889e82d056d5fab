/* SPDX-License-Identifier: MIT */
/*
 * test_serve_json: POST /v1/symbolize's JSON front end (tools/serve_json.c,
 * serve_batch.c, serve_buf.c) without HTTP: the handler is called with
 * request bodies and its replies are read back with json-c.
 *   - this test program, named by path (indexed on first sight) and then by
 *     the build-id the answer reports: main's address resolves to main in
 *     this file, the same through runtime and offset addresses;
 *   - an unknown build-id: a per-module status, 200;
 *   - stacks: each frame answered like an address, and a repeated stack
 *     served by the stack cache (a hit counted, the same text);
 *   - a deadline already past: every result "deadline", 200, never 5xx;
 *   - every bad request of issue 14 the JSON part owns, one check each,
 *     with its status and the JSON path the message names;
 *   - serve_buf_json_str(): quotes, control characters and invalid UTF-8
 *     come out as JSON that json-c reads back.
 * serve_reply_error(), serve_hex_id_valid() and serve_metrics_cache() (and
 * serve_metrics_stack_frames(), serve_metrics_pending(), serve_fetch_wait()) are
 * this file's own (the server's are in serve_http.c / serve_metrics.c).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "serve.h"
#include "serve_batch.h"
#include "serve_cache.h"
#include "symdb_build.h"

/* ---- the server functions the JSON part calls ------------------------------- */

static unsigned long long cache_hits, cache_misses;

void serve_metrics_cache(struct serve_metrics *m, uint64_t hits, uint64_t misses)
{
	(void)m;
	cache_hits += hits;
	cache_misses += misses;
}

void serve_metrics_stack_frames(struct serve_metrics *m, uint64_t resolved, uint64_t cached,
                                uint64_t earlier, uint64_t deadline)
{
	(void)m;
	(void)resolved;
	(void)cached;
	(void)earlier;
	(void)deadline;
}

/* The server here has no fetch sources (srv.fetch is NULL): never called. */
void serve_metrics_pending(struct serve_metrics *m, uint64_t modules)
{
	(void)m;
	(void)modules;
}

void serve_fetch_wait(struct serve_fetch *f, const symdb_uuid *ids, size_t n, uint64_t until_ns,
                      enum serve_fetch_outcome *out, int *err, char (*why)[SERVE_FETCH_WHY])
{
	(void)f;
	(void)ids;
	(void)until_ns;
	for (size_t k = 0; k < n; k++) {
		out[k] = SERVE_FETCH_FAILED;
		err[k] = -ENOSYS;
		if (why)
			why[k][0] = '\0';
	}
}

void serve_reply_error(struct serve_reply *out, unsigned status, const char *fmt, ...)
{
	char msg[512];
	struct serve_buf b = { 0 };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	serve_buf_str(&b, "{\"error\":");
	serve_buf_json_str(&b, msg, strlen(msg));
	serve_buf_str(&b, "}");
	out->status = status;
	out->content_type = "application/json";
	out->body = serve_buf_take(&b, &out->len);
	snprintf(out->reason, sizeof out->reason, "%s", msg);
}

int serve_hex_id_valid(const char *s, size_t len)
{
	if (len < 2 || len > 64 || len % 2)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* ---- helpers ------------------------------------------------------------------ */

static struct serve_server srv;
static const char *self;
static uint64_t main_addr, main_base;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Posts body; returns the status, the parsed reply in *out (caller puts). */
static unsigned post_at(const char *body, size_t len, uint64_t deadline_ns, json_object **out,
                        char *reason, size_t rsz)
{
	struct serve_request rq = { .srv = &srv, .method = "POST", .path = "/v1/symbolize",
		                    .content_type = "application/json", .body = body,
		                    .body_len = len, .deadline_ns = deadline_ns };
	struct serve_reply rp = { .fd = -1 };
	serve_json_handle(&rq, &rp);
	if (out) {
		char *text = rp.body ? strndup(rp.body, rp.len) : NULL; /* the body has no NUL */
		*out = text ? json_tokener_parse(text) : NULL;
		free(text);
		if (!*out)
			fprintf(stderr, "unparsable reply: %.*s\n", (int)rp.len, rp.body ? rp.body : "");
	}
	if (reason)
		snprintf(reason, rsz, "%s", rp.reason);
	free(rp.body);
	return rp.status;
}

static unsigned post(const char *body, json_object **out)
{
	return post_at(body, strlen(body), now_ns() + 60ull * 1000000000u, out, NULL, 0);
}

/* Expect a refusal with this status and a message holding want. */
static void refused(const char *body, unsigned status, const char *want)
{
	char reason[512] = "";
	unsigned got = post_at(body, strlen(body), 0, NULL, reason, sizeof reason);
	if (got != status || !strstr(reason, want)) {
		fprintf(stderr, "body %.80s: got %u \"%s\", want %u \"%s\"\n", body, got, reason,
		        status, want);
		check_failures++;
	}
}

static json_object *get(json_object *o, const char *path)
{
	/* path: keys and [n] indices, e.g. "modules[0].results[1].frames[0].function" */
	char key[64];
	while (o && *path) {
		if (*path == '.')
			path++;
		if (*path == '[') {
			char *end;
			long i = strtol(path + 1, &end, 10);
			o = json_object_is_type(o, json_type_array) ? json_object_array_get_idx(o, (size_t)i)
			                                            : NULL;
			path = end + 1;
			continue;
		}
		size_t n = strcspn(path, ".[");
		snprintf(key, sizeof key, "%.*s", (int)n, path);
		if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &o))
			o = NULL;
		path += n;
	}
	return o;
}

static const char *str(json_object *o, const char *path)
{
	json_object *v = get(o, path);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

/* ---- the checks --------------------------------------------------------------- */

static void test_self(void)
{
	char body[8192];
	json_object *r = NULL;
	snprintf(body, sizeof body,
	         "{\"modules\":[{\"path\":\"%s\",\"addr_kind\":\"runtime\",\"load_address\":\"0x%llx\","
	         "\"addresses\":[\"0x%llx\",\"0x0\"]}],\"options\":{\"demangle\":true}}",
	         self, (unsigned long long)main_base, (unsigned long long)main_addr);
	CHECK(post(body, &r) == 200);
	CHECK(!strcmp(str(r, "modules[0].status"), "ok"));
	CHECK(!strcmp(str(r, "modules[0].path"), self));
	CHECK(!strcmp(str(r, "modules[0].results[0].status"), "ok"));
	CHECK(!strcmp(str(r, "modules[0].results[0].frames[0].function"), "main"));
	CHECK(strstr(str(r, "modules[0].results[0].frames[0].file"), "test_serve_json.c") != NULL);
	CHECK(!strcmp(str(r, "modules[0].results[0].symbol.name"), "main"));
	CHECK(json_object_get_int64(get(r, "modules[0].results[0].symbol.offset")) == 0);
	/* below the load address: out of range */
	CHECK(!strcmp(str(r, "modules[0].results[1].status"), "out_of_range"));
	CHECK(json_object_array_length(get(r, "modules[0].results[1].frames")) == 0);
	char id[80];
	snprintf(id, sizeof id, "%s", str(r, "modules[0].image_id"));
	CHECK(serve_hex_id_valid(id, strlen(id)));
	json_object_put(r);

	/* the same address by the build-id, as an offset from the base */
	snprintf(body, sizeof body,
	         "{\"modules\":[{\"build_id\":\"%s\",\"addr_kind\":\"offset\","
	         "\"addresses\":[\"0x%llx\"]},{\"build_id\":\"00112233\",\"addresses\":[\"0x1\",\"0x2\"]},"
	         "{\"uuid\":\"00112233445566778899aabbccddeeff\"}]}",
	         id, (unsigned long long)(main_addr - main_base));
	CHECK(post(body, &r) == 200);
	CHECK(!strcmp(str(r, "modules[0].status"), "ok"));
	CHECK(!strcmp(str(r, "modules[0].results[0].frames[0].function"), "main"));
	CHECK(!strcmp(str(r, "modules[1].status"), "unknown_image"));
	CHECK(!strcmp(str(r, "modules[1].build_id"), "00112233"));
	CHECK(!strcmp(str(r, "modules[1].results[0].status"), "unknown_image"));
	CHECK(!strcmp(str(r, "modules[1].results[1].status"), "unknown_image"));
	CHECK(!strcmp(str(r, "modules[1].results[1].address"), "0x2"));
	CHECK(!strcmp(str(r, "modules[2].status"), "unknown_image"));
	CHECK(json_object_array_length(get(r, "modules[2].results")) == 0);
	json_object_put(r);

	/* stacks: twice the same, the second from the cache */
	snprintf(body, sizeof body,
	         "{\"modules\":[{\"build_id\":\"%s\",\"addr_kind\":\"offset\"},{\"build_id\":\"0011\"}],"
	         "\"stacks\":[[[0,\"0x%llx\"],[1,\"0x10\"]],[],[[0,\"0x%llx\"]],[[0,\"0x%llx\"]]]}",
	         id, (unsigned long long)(main_addr - main_base),
	         (unsigned long long)(main_addr - main_base),
	         (unsigned long long)(main_addr - main_base));
	unsigned long long h0 = cache_hits;
	CHECK(post(body, &r) == 200);
	CHECK(!strcmp(str(r, "stacks[0][0].frames[0].function"), "main"));
	CHECK(!strcmp(str(r, "stacks[0][1].status"), "unknown_image"));
	CHECK(json_object_array_length(get(r, "stacks[1]")) == 0);
	CHECK(!strcmp(str(r, "stacks[2][0].frames[0].function"), "main"));
	CHECK(!strcmp(str(r, "modules[1].status"), "unknown_image"));
	/* stacks[3] equals stacks[2]: answered from its text, the same */
	CHECK(!strcmp(json_object_to_json_string(get(r, "stacks[3]")),
	              json_object_to_json_string(get(r, "stacks[2]"))));
	const char *first = json_object_to_json_string(get(r, "stacks[2]"));
	char *keep = strdup(first);
	json_object_put(r);
	CHECK(post(body, &r) == 200);
	CHECK(cache_hits > h0); /* stacks[2] (stack 0 names an unknown image: not kept) */
	CHECK(!strcmp(json_object_to_json_string(get(r, "stacks[2]")), keep));
	CHECK(!strcmp(str(r, "stacks[0][1].status"), "unknown_image"));
	free(keep);
	json_object_put(r);

	/* a deadline already past: answered, every result "deadline" */
	snprintf(body, sizeof body, "{\"modules\":[{\"build_id\":\"%s\",\"addresses\":[\"0x1\"]}]}",
	         id);
	CHECK(post_at(body, strlen(body), 1, &r, NULL, 0) == 200);
	CHECK(!strcmp(str(r, "modules[0].status"), "deadline"));
	CHECK(!strcmp(str(r, "modules[0].results[0].status"), "deadline"));
	json_object_put(r);
}

static void test_refusals(void)
{
	refused("{\"modules\":[", 400, "body: incomplete JSON");
	refused("{\"modules\":]", 400, "body: malformed JSON");
	refused("", 400, "body: incomplete JSON");
	refused("{\"modules\":[]} x", 400, "body: malformed JSON at byte 15");
	refused("{\"modules\":[],\"options\":{\"demangle\":NaN}}", 400,
	        "options.demangle: expected true or false, got a number"); /* json-c takes NaN */
	refused("{\"modules\":[{\"build_id\":\"00\",\"addresses\":[\"0x1\"/*c*/]}]}", 400,
	        "malformed JSON");
	json_object *ok = NULL;
	CHECK(post("{\"modules\":[]}\r\n", &ok) == 200); /* trailing white space is fine */
	CHECK(ok && !strcmp(json_object_to_json_string_ext(ok, JSON_C_TO_STRING_PLAIN),
	                    "{\"modules\":[]}"));
	json_object_put(ok);
	refused("{'modules':[]}", 400, "malformed JSON");           /* strict: no single quotes */
	refused("{\"modules\":[],}", 400, "malformed JSON");        /* strict: no trailing comma */
	refused("{\"modules\":[{\"path\":\"\xff\"}]}", 400, "malformed JSON"); /* not UTF-8 */
	refused("[]", 400, "the request: expected an object, got an array");
	refused("{}", 400, "modules: expected an array, got nothing");
	refused("{\"modules\":{}}", 400, "modules: expected an array, got an object");
	refused("{\"modules\":[7]}", 400, "modules[0]: expected an object, got a number");
	refused("{\"modules\":[{\"build_id\":\"0011\",\"addresses\":[\"0x1\",7]}]}", 400,
	        "modules[0].addresses[1]: expected a string, got a number");
	refused("{\"modules\":[{\"build_id\":\"0011\"},{\"build_id\":\"0011\",\"addresses\":"
	        "[\"0x1\",\"0x2\",\"0x3\",\"0x4\",\"0x5\",\"0x6\",\"0x7\",\"1234\"]}]}",
	        400, "modules[1].addresses[7]: expected a hex address");
	refused("{\"modules\":[{\"build_id\":\"0011\",\"addresses\":\"0x1\"}]}", 400,
	        "modules[0].addresses: expected an array, got a string");
	refused("{\"modules\":[{\"build_id\":\"0011\",\"addresses\":[\"0x10000000000000000\"]}]}",
	        400, "modules[0].addresses[0]: expected a hex address");
	refused("{\"modules\":[{\"build_id\":1234}]}", 400,
	        "modules[0].build_id: expected a string, got a number");
	refused("{\"modules\":[{\"build_id\":\"../../x\"}]}", 400,
	        "modules[0].build_id: expected 2 to 64 lowercase hex digits");
	refused("{\"modules\":[{\"build_id\":\"abc\"}]}", 400,
	        "modules[0].build_id: expected 2 to 64 lowercase hex digits");
	refused("{\"modules\":[{\"build_id\":\"ABCD\"}]}", 400,
	        "modules[0].build_id: expected 2 to 64 lowercase hex digits");
	refused("{\"modules\":[{\"uuid\":\"%2e%2e%2f\"}]}", 400,
	        "modules[0].uuid: expected 2 to 64 lowercase hex digits");
	refused("{\"modules\":[{\"build_id\":\"0011\",\"path\":\"/x\"}]}", 400,
	        "modules[0]: more than one of build_id, uuid, path");
	refused("{\"modules\":[{\"addresses\":[]}]}", 400,
	        "modules[0]: one of build_id, uuid or path is required");
	refused("{\"modules\":[{\"build_id\":\"0011\",\"addr_kind\":\"virtual\"}]}", 400,
	        "modules[0].addr_kind: expected");
	refused("{\"modules\":[{\"build_id\":\"0011\",\"addr_kind\":\"runtime\"}]}", 400,
	        "modules[0].load_address: required with addr_kind \"runtime\"");
	refused("{\"modules\":[{\"build_id\":\"0011\",\"load_address\":\"0x1000\"}]}", 400,
	        "modules[0].load_address: only with addr_kind \"runtime\"");
	refused("{\"modules\":[{\"build_id\":\"0011\",\"arch\":5}]}", 400,
	        "modules[0].arch: expected a string, got a number");
	refused("{\"modules\":[{\"build_id\":\"0011\",\"adresses\":[]}]}", 400,
	        "modules[0].adresses: unknown field");
	refused("{\"modules\":[],\"extra\":1}", 400, "extra: unknown field");
	refused("{\"modules\":[],\"options\":[]}", 400, "options: expected an object, got an array");
	refused("{\"modules\":[],\"options\":{\"demangle\":1}}", 400,
	        "options.demangle: expected true or false, got a number");
	refused("{\"modules\":[],\"options\":{\"functions\":\"all\"}}", 400,
	        "options.functions: expected");
	refused("{\"modules\":[],\"stacks\":{}}", 400, "stacks: expected an array, got an object");
	refused("{\"modules\":[],\"stacks\":[7]}", 400, "stacks[0]: expected an array, got a number");
	refused("{\"modules\":[{\"build_id\":\"0011\"}],\"stacks\":[[[0,\"0x1\"],[0]]]}", 400,
	        "stacks[0][1]: expected [module, \"0x...\"]");
	refused("{\"modules\":[{\"build_id\":\"0011\"}],\"stacks\":[[[1,\"0x1\"]]]}", 400,
	        "stacks[0][0][0]: module index 1 names no module (the request has 1, from 0)");
	refused("{\"modules\":[{\"build_id\":\"0011\"}],\"stacks\":[[[0,16]]]}", 400,
	        "stacks[0][0][1]: expected a string, got a number");

	/* nesting: 1,000 deep */
	char *deep = malloc(2002);
	memset(deep, '[', 1000);
	memset(deep + 1000, ']', 1000);
	deep[2000] = 0;
	refused(deep, 400, "body: JSON nested deeper than 32 levels");
	free(deep);

	/* limits: modules, addresses (stack frames count), stacks */
	srv.lim.max_modules = 2;
	refused("{\"modules\":[{\"build_id\":\"00\"},{\"build_id\":\"00\"},{\"build_id\":\"00\"}]}",
	        413, "modules: 3 modules, more than the limit of 2");
	srv.lim.max_modules = 16;
	srv.lim.max_addresses = 2;
	refused("{\"modules\":[{\"build_id\":\"00\",\"addresses\":[\"0x1\"]}],"
	        "\"stacks\":[[[0,\"0x1\"],[0,\"0x2\"]]]}",
	        413, "too many addresses: 3, more than the limit of 2");
	srv.lim.max_addresses = 1000000;
	srv.lim.max_stacks = 1;
	refused("{\"modules\":[],\"stacks\":[[],[]]}", 413, "stacks: 2 stacks");
	srv.lim.max_stacks = 16;

	/* 10^7 addresses: refused before json-c builds a tree of them */
	size_t n = 10000000, len = 0;
	char *big = malloc(n * 6 + 64);
	len += (size_t)sprintf(big, "{\"modules\":[{\"build_id\":\"00\",\"addresses\":[");
	for (size_t i = 0; i < n; i++) {
		memcpy(big + len, "\"0x1\",", 6);
		len += 6;
	}
	memcpy(big + len - 1, "]}]}", 5);
	len += 3;
	char reason[512] = "";
	CHECK(post_at(big, len, 0, NULL, reason, sizeof reason) == 413);
	CHECK(strstr(reason, "too many addresses") != NULL);
	free(big);

	/* path modules only where the server accepts them */
	srv.allow_paths = false;
	refused("{\"modules\":[{\"path\":\"/bin/sh\"}]}", 400,
	        "modules[0].path: path modules are not accepted by this server");
	srv.allow_paths = true;
}

static void test_escape(void)
{
	static const char raw[] = "a\"b\\c\n\t\x01\x7f\xc3\xa9\xff\xe2\x82"; /* é, stray, cut */
	struct serve_buf b = { 0 };
	serve_buf_json_str(&b, raw, sizeof raw - 1);
	serve_buf_put(&b, "", 1);
	json_object *o = json_tokener_parse(b.p);
	CHECK(o && json_object_is_type(o, json_type_string));
	if (o)
		CHECK(!strcmp(json_object_get_string(o),
		              "a\"b\\c\n\t\x01\x7f\xc3\xa9\xc3\xbf\xc3\xa2\xc2\x82"));
	json_object_put(o);
	serve_buf_free(&b);

	b.limit = 10; /* beyond the limit: oom, nothing more written */
	serve_buf_str(&b, "12345678");
	serve_buf_str(&b, "9ab");
	CHECK(b.oom && b.len == 8);
	serve_buf_free(&b);
}

int main(int argc, char **argv)
{
	Dl_info di;
	char dir[80], cmd[200], err[256] = "";
	(void)argc;
	self = argv[0];
	test_escape();
	if (!SYMDB_TEST_INDEXER) {
		check_skip("no symdb-indexer in this build");
		return check_exit();
	}
	CHECK(dladdr((void *)main, &di) != 0);
	main_addr = (uint64_t)(uintptr_t)main;
	main_base = (uint64_t)(uintptr_t)di.dli_fbase;
	snprintf(dir, sizeof dir, "/tmp/symdb-test-sjson-XXXXXX");
	if (!mkdtemp(dir))
		return 2;
	symdb_builder *bld = NULL;
	CHECK_RC(symdb_builder_open(dir, NULL, &bld));
	symdb_builder_close(bld);
	CHECK_RC(symdb_open(dir, EB_OPTS(err, sizeof err), &srv.db));
	srv.db_dir = dir;
	srv.indexer_path = SYMDB_TEST_INDEXER;
	srv.tmp_dir = dir;
	srv.allow_paths = true;
	srv.lim = (struct serve_limits){ .max_modules = 16, .max_addresses = 1000000,
		                         .max_stacks = 16, .max_depth = 32 };
	CHECK_RC(serve_pool_create(&srv, &srv.pool));
	/* any non-NULL metrics: this file's serve_metrics_cache() counts */
	CHECK_RC(serve_cache_create(1u << 20, 0, (struct serve_metrics *)&cache_hits, &srv.cache));
	if (srv.db && srv.pool) {
		test_self();
		test_refusals();
	}
	serve_cache_free(srv.cache);
	serve_pool_free(srv.pool);
	symdb_close(srv.db);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_exit();
}
