/* SPDX-License-Identifier: MIT */
/*
 * indexer_example.c: a program that links only the installed indexer library
 * (symdb::indexer, or pkg-config symdb-indexer) and stages one input, as the
 * symdb-indexer executable does.  Usage: stage INPUT STAGING_DIR UUID
 * (UUID as "KIND:HEX", SPEC §5.2).  The indexer gets descriptors, not paths
 * (SPEC §12.5): this program opens the input and creates the output file
 * STAGING_DIR/HEX.XXXXXX itself.  The report records go to a temp file;
 * the install test then checks the staged index file with the installed
 * `symdb info`.  Prints how many report bytes were written.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <symdb_indexer.h>

int main(int argc, char **argv)
{
	FILE *report;
	symdb_indexer_job job = {0};
	symdb_indexer_file in;
	symdb_indexer_output out;
	const char *hex;
	char tmp[4096];
	int rc;

	if (argc != 4 || !(hex = strchr(argv[3], ':'))) {
		fprintf(stderr, "usage: stage INPUT STAGING_DIR KIND:HEX\n");
		return 2;
	}
	report = tmpfile();
	in.fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	in.name = argv[1];
	snprintf(tmp, sizeof tmp, "%s/%s.XXXXXX", argv[2], hex + 1);
	out.fd = mkstemp(tmp);
	out.uuid = hex + 1;
	if (!report || in.fd < 0 || out.fd < 0) {
		perror("stage");
		return 1;
	}
	job.inputs = &in;
	job.ninputs = 1;
	job.debug.fd = -1;
	job.companion.fd = -1;
	job.outputs = &out;
	job.noutputs = 1;
	job.uuid = argv[3];
	job.report_fd = fileno(report);
	rc = symdb_indexer_run(&job);
	printf("rc=%d report_bytes=%ld\n", rc, (long)lseek(job.report_fd, 0, SEEK_END));
	fclose(report);
	return rc == 0 ? 0 : 1;
}
