/* SPDX-License-Identifier: MIT */
/**
 * @file symdb_errors.h
 * @brief symdb's error codes: one list shared by every part of symdb (the
 *        reader library, the indexer and the byte-layout code under format/),
 *        installed with symdb.h, which includes it.
 *
 * It lives at the bottom of the tree (format/) because format/ depends on
 * nothing inside symdb, yet its parsers must return these codes.
 */
#ifndef SYMDB_ERRORS_H
#define SYMDB_ERRORS_H

/**
 * Error codes.  Values are pinned and only ever appended: never reuse or
 * renumber one.  System errors are negative errno values (-ENOENT, -EACCES,
 * -ENOSPC, -ENOMEM ...); symdb's own live in this reserved block.
 */
#define SYMDB_LIST_ERRORS(X)                                                          \
	X(SYMDB_E_FORMAT,    -4000, "SYMDB_E_FORMAT: not a symdb index file")          \
	X(SYMDB_E_VERSION,   -4001, "SYMDB_E_VERSION: unsupported format version")     \
	X(SYMDB_E_CORRUPT,   -4002, "SYMDB_E_CORRUPT: index file is damaged")          \
	X(SYMDB_E_CHECKSUM,  -4003, "SYMDB_E_CHECKSUM: checksum mismatch")             \
	X(SYMDB_E_UNSORTED,  -4004, "SYMDB_E_UNSORTED: addresses are not sorted")      \
	X(SYMDB_E_NOT_FOUND, -4005, "SYMDB_E_NOT_FOUND: not found")                    \
	X(SYMDB_E_DWARF,     -4006, "SYMDB_E_DWARF: malformed debug information")      \
	X(SYMDB_E_CATALOG,   -4007, "SYMDB_E_CATALOG: catalog error")                  \
	X(SYMDB_E_INVAL,     -4008, "SYMDB_E_INVAL: invalid argument")                 \
	X(SYMDB_E_BAD_OBJECT,-4009, "SYMDB_E_BAD_OBJECT: malformed or unsupported object file") \
	X(SYMDB_E_NO_UUID,   -4010, "SYMDB_E_NO_UUID: image has no usable identifier") \
	X(SYMDB_E_TOO_BIG,   -4011, "SYMDB_E_TOO_BIG: exceeds a format limit")         \
	X(SYMDB_E_NOT_INDEXED,-4012, "SYMDB_E_NOT_INDEXED: image is not in the database") \
	X(SYMDB_E_EXISTS,    -4013, "SYMDB_E_EXISTS: image is already indexed")        \
	X(SYMDB_E_READONLY,  -4014, "SYMDB_E_READONLY: database opened read-only") \
	X(SYMDB_E_NETFS,     -4015, "SYMDB_E_NETFS: database is on a network filesystem") \
	X(SYMDB_E_LOCK_REPLACED, -4016,                                               \
	  "SYMDB_E_LOCK_REPLACED: catalog/lock.mdb was deleted or replaced while the catalog was open")

#define SYMDB_ERR_ENUM_(name, value, str) name = value,
enum symdb_error { SYMDB_LIST_ERRORS(SYMDB_ERR_ENUM_) SYMDB_E_LAST_ = -4017 };
#undef SYMDB_ERR_ENUM_

#endif /* SYMDB_ERRORS_H */
