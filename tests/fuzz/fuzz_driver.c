/* SPDX-License-Identifier: MIT */
/*
 * fuzz_driver.c - a plain main() for the fuzz targets, so that the normal
 * build (gcc or clang, with or without sanitizers) replays the committed
 * corpora under CTest (label fuzz-regression) without libFuzzer.  Each
 * argument is a file or a directory whose regular files are replayed in name
 * order.  Exit 0 when every input ran; a crash or abort is the failure.
 */
#define _GNU_SOURCE /* scandir, alphasort */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

/* Targets without an initializer get this one. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	return 0;
}

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(buf = malloc(n ? (size_t)n : 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: cannot read\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int replay(const char *path, size_t *count)
{
	struct dirent **ents;
	struct stat st;
	char sub[4096];
	int n, rc = 0;

	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.' && rc == 0) {
			snprintf(sub, sizeof sub, "%s/%s", path, ents[i]->d_name);
			if (stat(sub, &st) == 0 && S_ISREG(st.st_mode)) {
				(*count)++;
				rc = replay_file(sub);
			}
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int rc = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc && rc == 0; i++)
		rc = replay(argv[i], &count);
	printf("%s: %zu inputs replayed%s\n", argv[0], count, rc ? ", a file could not be read" : "");
	if (!rc && !count)
		fprintf(stderr, "%s: no input at all: an empty corpus replays nothing\n", argv[0]);
	return rc || !count ? 1 : 0;
}
