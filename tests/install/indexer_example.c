/* SPDX-License-Identifier: MIT */
/*
 * indexer_example.c: a program that links only the installed indexer library
 * (symdb::indexer, or pkg-config symdb-indexer) and stages one input, as the
 * symdb-indexer executable does.  Usage: stage INPUT STAGING_DIR UUID
 * (UUID as "KIND:HEX", SPEC §5.2).  The report records go to a temp file;
 * the install test then checks the staged index file with the installed
 * `symdb info`.  Prints how many report bytes were written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <symdb_indexer.h>

int main(int argc, char **argv)
{
	FILE *report;
	symdb_indexer_job job = {0};
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: stage INPUT STAGING_DIR UUID\n");
		return 2;
	}
	report = tmpfile();
	if (!report) {
		perror("tmpfile");
		return 1;
	}
	job.input = argv[1];
	job.staging_dir = argv[2];
	job.tag = ".consumer";
	job.uuid = argv[3];
	job.report_fd = fileno(report);
	rc = symdb_indexer_run(&job);
	printf("rc=%d report_bytes=%ld\n", rc, (long)lseek(job.report_fd, 0, SEEK_END));
	fclose(report);
	return rc == 0 ? 0 : 1;
}
