/* SPDX-License-Identifier: MIT */
/**
 * @file symdb_batch.h
 * @brief The binary batch messages of `symdb serve` (content type
 *        application/x-symdb-batch, SPEC.md §16): decode and encode a
 *        request, decode and encode a response.
 *
 * A request names modules (a build-id or Mach-O UUID as raw bytes, or a
 * path), each with its addresses, and optional stacks of (module index,
 * address) frames.  A response answers every address and every stack frame
 * in request order with a status and its frames; frames are fixed-width
 * records whose names point into one string table, so each function and file
 * name is sent once per response.  Every integer is big-endian.
 *
 * Safety contract: the decoders take the message as untrusted bytes.  They
 * validate the whole message (every count against the length, every
 * reserved field, every string reference) in one pass before they return
 * success and never read outside [msg, msg + len); after a successful parse
 * the accessors cannot fail.  The decoders allocate nothing: the caller sizes
 * its own arrays from counts the parse has already checked against the
 * message length.  The response encoder allocates through the caller's
 * realloc function (default realloc()), bounded by the caller's byte limit.
 *
 * This header is part of libsymdb's public API and depends on nothing but
 * libc.  It lives in format/ because it is a byte layout (house style §1).
 */
#ifndef SYMDB_BATCH_H
#define SYMDB_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "symdb_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SYMDB_API
#if defined(__GNUC__)
#define SYMDB_API __attribute__((visibility("default")))
#else
#define SYMDB_API
#endif
#endif

/** The HTTP content type of both messages. */
#define SYMDB_BATCH_CONTENT_TYPE "application/x-symdb-batch"

/** SPEC §16.2: the first 4 bytes of a request, "SYBQ"; of a response, "SYBR". */
#define SYMDB_BATCH_REQUEST_MAGIC  "SYBQ"
#define SYMDB_BATCH_RESPONSE_MAGIC "SYBR"
/** SPEC §16.2: this header writes 1.1 (1.0 + status PENDING) and reads every 1.x. */
#define SYMDB_BATCH_VERSION_MAJOR 1
#define SYMDB_BATCH_VERSION_MINOR 1

/** SPEC §16.3 sizes of the fixed parts, in bytes. */
#define SYMDB_BATCH_REQUEST_HEADER_SIZE  24u
#define SYMDB_BATCH_MODULE_HEAD_SIZE     20u
#define SYMDB_BATCH_STACK_HEAD_SIZE      4u
#define SYMDB_BATCH_STACK_FRAME_SIZE     12u
#define SYMDB_BATCH_RESPONSE_HEADER_SIZE 32u
#define SYMDB_BATCH_MODULE_RECORD_SIZE   48u
#define SYMDB_BATCH_STACK_RECORD_SIZE    4u
#define SYMDB_BATCH_RESULT_RECORD_SIZE   40u
#define SYMDB_BATCH_FRAME_RECORD_SIZE    40u

/** SPEC §16.3 limits of the format itself. */
#define SYMDB_BATCH_ID_MAX   32u    /**< build-id / UUID bytes: 1..32 */
#define SYMDB_BATCH_PATH_MAX 4095u  /**< path bytes: 1..4095, no NUL */
#define SYMDB_BATCH_ARCH_MAX 32u    /**< arch bytes: 0 (any) .. 32 */
/** A string reference that names no string (unknown). */
#define SYMDB_BATCH_NONE 0xFFFFFFFFu

/** Request flags (SPEC §16.3 Flags).  Unknown bits are rejected. */
#define SYMDB_BATCH_DEMANGLE        0x1u /**< demangle names */
#define SYMDB_BATCH_INLINES         0x2u /**< every frame of the inline chain */
#define SYMDB_BATCH_FUNCTIONS_MASK  0xCu /**< bits 2-3: which name (enum symdb_batch_functions) */
#define SYMDB_BATCH_FUNCTIONS_SHIFT 2
#define SYMDB_BATCH_REQUEST_FLAGS   0xFu

/** Which name a frame shows: llvm-symbolizer's --functions. */
enum symdb_batch_functions {
	SYMDB_BATCH_FN_LINKAGE = 0,
	SYMDB_BATCH_FN_SHORT = 1,
	SYMDB_BATCH_FN_NONE = 2
};

/** How a module names its image (SPEC §16.3 Id_Kind). */
enum symdb_batch_id_kind {
	SYMDB_BATCH_ID_BUILD_ID = 1, /**< a GNU build-id or symdb fallback id, raw bytes */
	SYMDB_BATCH_ID_UUID = 2,     /**< a Mach-O LC_UUID, raw bytes */
	SYMDB_BATCH_ID_PATH = 3      /**< a file on the server, bytes without NUL */
};

/** Statuses of modules and results (SPEC §16.4).  Pinned: the numbers are
 *  those of the JSON API's names, and later versions only append; a reader
 *  treats a value it does not know as a failure. */
enum symdb_batch_status {
	SYMDB_BATCH_OK = 0,
	SYMDB_BATCH_UNKNOWN_IMAGE = 1,
	SYMDB_BATCH_NO_SYMBOL = 2,
	SYMDB_BATCH_OUT_OF_RANGE = 3,
	SYMDB_BATCH_DAMAGED = 4,
	SYMDB_BATCH_BAD_IMAGE = 5,
	SYMDB_BATCH_DEADLINE = 6,
	SYMDB_BATCH_PENDING = 7   /**< version 1.1: the image is being fetched */
};

/** Frame flags (SPEC §16.4).  Unknown bits are rejected. */
#define SYMDB_BATCH_FRAME_HAS_START 0x1u /**< start is valid */
#define SYMDB_BATCH_FRAME_INLINED   0x2u /**< an inlined call, not the outermost frame */
#define SYMDB_BATCH_FRAME_FLAGS     0x3u

/** Options of the decoders: errbuf and the caller's limits.  Set sz (or use
 *  SYMDB_OPTS() from symdb.h); fields past a caller's sz read as zero. */
typedef struct symdb_batch_opts {
	size_t sz;              /**< sizeof(symdb_batch_opts) */
	unsigned flags;         /**< none yet: must be 0 */
	char *errbuf;           /**< optional: receives a one-line reason on failure,
	                            escaped (symdb.h "Conventions") */
	size_t errbuf_sz;       /**< size of errbuf */
	uint32_t max_modules;   /**< request: modules; 0 = no limit but the format's */
	uint32_t max_addresses; /**< request: addresses + stack frames; 0 = none */
	uint32_t max_stacks;    /**< request: stacks; 0 = none */
	uint32_t reserved_;     /**< must be 0 */
} symdb_batch_opts;

/* ---- requests ------------------------------------------------------------- */

/** A validated request: counts from its header, checked against the body. */
typedef struct symdb_batch_request {
	const uint8_t *msg;     /**< the caller's message (not copied) */
	size_t len;
	uint8_t version_minor;
	uint16_t flags;         /**< SYMDB_BATCH_DEMANGLE | INLINES | FUNCTIONS bits */
	uint32_t nmodules, naddrs, nstacks, nframes;
	size_t stacks_off_;     /**< private: where the stacks start */
} symdb_batch_request;

/** One module of a request; pointers into the message. */
typedef struct symdb_batch_module {
	uint8_t id_kind;        /**< enum symdb_batch_id_kind */
	uint8_t addr_kind;      /**< enum symdb_addr_kind (symdb.h): 0 vaddr .. 3 runtime */
	uint16_t id_len;        /**< 1..32 for ids, 1..4095 for paths */
	uint8_t arch_len;       /**< 0 = any */
	const uint8_t *id;      /**< id_len bytes, not NUL-terminated */
	const uint8_t *arch;    /**< arch_len bytes of [A-Za-z0-9_], not NUL-terminated */
	uint64_t load_address;  /**< runtime only; 0 for other kinds */
	uint32_t naddrs;
	const uint8_t *addrs_be; /**< naddrs big-endian u64: symdb_batch_module_addrs() */
} symdb_batch_module;

/**
 * @brief symdb_batch_request_parse() validates a whole request (SPEC §16.3).
 * @param msg  the message; untrusted.  It must stay unchanged while out
 *             and the modules taken from it are used.
 * @param len  its length in bytes.
 * @param opts NULL or options: errbuf, the caller's limits.
 * @param out  receives the counts.
 * @return 0; SYMDB_E_INVAL for a message that is not a valid request
 *         (errbuf names the field and the offset: bad magic, a truncated
 *         record, a count the length cannot hold, counts that do not add
 *         up, a reserved field or flag bit set, an unknown kind, an id or
 *         path of a bad length, a stack frame naming no module, bytes after
 *         the last stack); SYMDB_E_VERSION for a major version other than
 *         1; SYMDB_E_TOO_BIG for counts over the caller's limits (checked
 *         from the header, before the body is walked).
 * @note No allocation; reads only [msg, msg + len).  Thread-safe (no state).
 */
SYMDB_API int symdb_batch_request_parse(const void *msg, size_t len, const symdb_batch_opts *opts,
                                        symdb_batch_request *out);

/**
 * @brief symdb_batch_request_modules() lists a parsed request's modules.
 * @param rq   a request symdb_batch_request_parse() accepted.
 * @param mods caller-owned array of at least rq->nmodules elements.
 * @param cap  its capacity.
 * @return rq->nmodules; SYMDB_E_INVAL when cap is too small or an argument NULL.
 * @note Every pointer in mods points into rq->msg.  No allocation; thread-safe.
 */
SYMDB_API ptrdiff_t symdb_batch_request_modules(const symdb_batch_request *rq,
                                                symdb_batch_module *mods, size_t cap);

/**
 * @brief symdb_batch_module_addrs() converts a module's addresses to host
 *        order.
 * @param m   a module from symdb_batch_request_modules().
 * @param out caller-owned, m->naddrs elements.
 * @note No allocation; thread-safe (reads the message only).
 */
SYMDB_API void symdb_batch_module_addrs(const symdb_batch_module *m, uint64_t *out);

/**
 * @brief symdb_batch_request_stacks() lists a parsed request's stacks.
 * @param rq      a request symdb_batch_request_parse() accepted.
 * @param counts  caller-owned, rq->nstacks elements: the frames of each stack.
 * @param modules caller-owned, rq->nframes elements: each frame's module index
 *                (already checked < rq->nmodules).
 * @param addrs   caller-owned, rq->nframes elements: each frame's address.
 * @return 0; SYMDB_E_INVAL for a NULL argument with a non-zero count.
 * @note Frames are stack after stack, in order.  No allocation; thread-safe.
 */
SYMDB_API int symdb_batch_request_stacks(const symdb_batch_request *rq, uint32_t *counts,
                                         uint32_t *modules, uint64_t *addrs);

/** Writes a request into a caller buffer.  Zero-initialise, then
 *  symdb_batch_writer_begin(); with buf NULL it only measures (len). */
typedef struct symdb_batch_writer {
	uint8_t *buf;
	size_t cap;
	size_t len;              /**< bytes written (or needed) so far */
	uint32_t nmodules_, modules_left_, addrs_left_, stacks_left_, frames_left_;
	int err;                 /**< the first error; later calls do nothing */
} symdb_batch_writer;

/**
 * @brief symdb_batch_writer_begin() starts a request: the header.
 * @param w        the writer (reset here).
 * @param buf      where the request goes; NULL to measure only (w->len).
 * @param cap      bytes at buf.
 * @param flags    SYMDB_BATCH_* request flags.
 * @param nmodules modules that symdb_batch_writer_module() will add.
 * @param naddrs   their addresses, in total.
 * @param nstacks  stacks that symdb_batch_writer_stack() will add.
 * @param nframes  their frames, in total.
 * @return 0; SYMDB_E_INVAL for unknown flags; SYMDB_E_TOO_BIG when buf is
 *         too small (w->len keeps counting, so a second pass can size it).
 * @note The writer's calls never allocate and never write past buf + cap.
 *       A writer belongs to one thread at a time.
 */
SYMDB_API int symdb_batch_writer_begin(symdb_batch_writer *w, void *buf, size_t cap,
                                       unsigned flags, uint32_t nmodules, uint32_t naddrs,
                                       uint32_t nstacks, uint32_t nframes);

/**
 * @brief symdb_batch_writer_module() appends a module and its addresses.
 * @param w     a writer after symdb_batch_writer_begin(); modules come
 *              before stacks.
 * @param m     id_kind, addr_kind, id/id_len, arch/arch_len, load_address,
 *              naddrs (addrs_be is ignored); copied.
 * @param addrs m->naddrs addresses in host order; copied.
 * @return 0; SYMDB_E_INVAL for a field the format rejects or more modules
 *         or addresses than begin declared; SYMDB_E_TOO_BIG for a full buffer.
 * @note As every writer call: no allocation, one thread per writer.
 */
SYMDB_API int symdb_batch_writer_module(symdb_batch_writer *w, const symdb_batch_module *m,
                                        const uint64_t *addrs);

/**
 * @brief symdb_batch_writer_stack() appends a stack of (module index,
 *        address) frames, innermost first.
 * @param w       a writer whose modules are all written.
 * @param modules nframes module indices (< nmodules of begin); copied.
 * @param addrs   nframes addresses of those modules' kinds; copied.
 * @param nframes the stack's depth (0 allowed).
 * @return 0; SYMDB_E_INVAL (a module index >= nmodules, more than declared);
 *         SYMDB_E_TOO_BIG for a full buffer.
 * @note No allocation; one thread per writer.
 */
SYMDB_API int symdb_batch_writer_stack(symdb_batch_writer *w, const uint32_t *modules,
                                       const uint64_t *addrs, uint32_t nframes);

/**
 * @brief symdb_batch_writer_end() checks that the counts of begin were met.
 * @param w   the writer.
 * @param len receives the message length (w->len), also on an error.
 * @return 0; the first error of the writer; SYMDB_E_INVAL when fewer
 *         modules, addresses, stacks or frames came than begin declared.
 * @note The message is buf[0 .. *len), the caller's.  One thread per writer.
 */
SYMDB_API int symdb_batch_writer_end(symdb_batch_writer *w, size_t *len);

/* ---- responses ------------------------------------------------------------ */

/** One frame of a response.  Decoded: strings point into the message's
 *  string table (NUL-terminated).  Encoded: the caller's strings, copied. */
typedef struct symdb_batch_frame {
	const char *function;   /**< NULL = unknown */
	const char *file;       /**< NULL = unknown */
	const char *start_file; /**< the function's declaration file; NULL = unknown */
	uint32_t line, column, discriminator, start_line; /**< 0 = unknown */
	uint32_t flags;         /**< SYMDB_BATCH_FRAME_* */
	uint32_t reserved_;     /**< 0 */
	uint64_t start;         /**< the function's start (vaddr), HAS_START; else 0 */
} symdb_batch_frame;

/** The answer for one module: what the JSON module object says. */
typedef struct symdb_batch_module_result {
	uint8_t status;         /**< enum symdb_batch_status */
	uint8_t image_id_len;   /**< 0..32: bytes of image_id (status OK: the image's
	                             identity, JSON "image_id") */
	uint32_t nresults;      /**< the request's Address_Count of the module */
	const char *error;      /**< not OK: the reason (JSON "error"); NULL = none */
	uint8_t image_id[SYMDB_BATCH_ID_MAX];
} symdb_batch_module_result;

/** The answer for one address or stack frame, but its frames. */
typedef struct symdb_batch_result {
	uint8_t status;         /**< enum symdb_batch_status */
	uint32_t nframes;       /**< frame records of this result; 0 unless OK */
	const char *sym_name;   /**< the symbol covering the address; NULL = none
	                             (then the three below are 0) */
	uint64_t sym_start;     /**< its start (vaddr) */
	uint64_t sym_size;      /**< its size; 0 = to the next symbol */
	uint64_t sym_offset;    /**< the address's vaddr - sym_start */
} symdb_batch_result;

/** A validated response. */
typedef struct symdb_batch_response {
	const uint8_t *msg;     /**< the caller's message (not copied) */
	size_t len;
	uint8_t version_minor;
	uint32_t nmodules, nstacks, nresults, nframes, string_bytes;
	size_t stacks_off_, results_off_, frames_off_, strings_off_; /**< private */
} symdb_batch_response;

/**
 * @brief symdb_batch_response_parse() validates a whole response (SPEC §16.4).
 * @param msg  the message; untrusted; must stay unchanged while out is used.
 * @param len  its length.
 * @param opts NULL or options (errbuf; the limits do not apply).
 * @param out  receives the counts and section offsets.
 * @return 0; SYMDB_E_INVAL (bad magic, a length other than the header's
 *         counts give, counts that do not add up, a reserved field or frame
 *         flag set, frames on a failed result, symbol fields without a
 *         symbol, an image id longer than 32 bytes or not zero-padded, a
 *         string reference outside the string table, a table not ending in
 *         NUL); SYMDB_E_VERSION.
 * @note No allocation; reads only [msg, msg + len).  Thread-safe.
 */
SYMDB_API int symdb_batch_response_parse(const void *msg, size_t len, const symdb_batch_opts *opts,
                                         symdb_batch_response *out);

/**
 * @brief symdb_batch_response_module() reads a module's answer: its
 *        status, image id or error, and its number of results (its
 *        request's addresses).
 * @param r   a response symdb_batch_response_parse() accepted.
 * @param i   the module, < r->nmodules.
 * @param out receives it; out->error points into r->msg.
 * @note Results come module after module, then stack after stack
 *       (symdb_batch_response_stack()).  No allocation; thread-safe.
 */
SYMDB_API void symdb_batch_response_module(const symdb_batch_response *r, uint32_t i,
                                           symdb_batch_module_result *out);

/**
 * @brief symdb_batch_response_stack() reads a stack's number of results.
 * @param r        a parsed response.
 * @param i        the stack, < r->nstacks.
 * @param nresults receives its results (the request's frames of it).
 * @note No allocation; thread-safe.
 */
SYMDB_API void symdb_batch_response_stack(const symdb_batch_response *r, uint32_t i,
                                          uint32_t *nresults);

/**
 * @brief symdb_batch_response_result() reads one result.
 * @param r   a parsed response.
 * @param i   the result, < r->nresults.
 * @param out receives it; out->sym_name points into r->msg.
 * @note Its frames are the next out->nframes frame records after those of
 *       results 0 .. i-1: a caller reading results in order keeps the sum.
 *       No allocation; thread-safe.
 */
SYMDB_API void symdb_batch_response_result(const symdb_batch_response *r, uint32_t i,
                                           symdb_batch_result *out);

/**
 * @brief symdb_batch_response_frame() reads one frame record.
 * @param r   a parsed response.
 * @param k   the frame, < r->nframes.
 * @param out receives it; its strings point into r->msg, valid while it is.
 * @note No allocation; thread-safe.
 */
SYMDB_API void symdb_batch_response_frame(const symdb_batch_response *r, uint32_t k,
                                          symdb_batch_frame *out);

/** The response encoder: it keeps buffers and a string hash table between
 *  responses.  Opaque; one thread at a time. */
typedef struct symdb_batch_encoder symdb_batch_encoder;

/** Options of symdb_batch_encoder_create(). */
typedef struct symdb_batch_encoder_opts {
	size_t sz;              /**< sizeof(symdb_batch_encoder_opts) */
	unsigned flags;         /**< none yet: must be 0 */
	/** every allocation of the encoder: realloc(p, n) semantics, n > 0;
	 *  NULL = realloc().  free is realloc_fn(ctx, p, 0) returning NULL. */
	void *(*realloc_fn)(void *ctx, void *p, size_t n);
	void *realloc_ctx;
	/** the largest response (bytes) it may build; 0 = the format's 4 GiB
	 *  string table and u32 counts only */
	uint64_t max_bytes;
} symdb_batch_encoder_opts;

/**
 * @brief symdb_batch_encoder_create() makes an encoder.
 * @param opts NULL or options: the realloc function, the byte limit.
 * @param out  receives the encoder (free it with symdb_batch_encoder_free()).
 * @return 0; SYMDB_E_INVAL (bad opts, NULL out); -ENOMEM.
 * @note Thread-safe; the encoder it returns is for one thread at a time.
 */
SYMDB_API int symdb_batch_encoder_create(const symdb_batch_encoder_opts *opts,
                                         symdb_batch_encoder **out);

/**
 * @brief symdb_batch_encoder_free() frees an encoder and its memory.
 * @param e NULL (nothing happens) or an encoder.
 * @note Not while another call on e runs; strings passed to it were copied.
 */
SYMDB_API void symdb_batch_encoder_free(symdb_batch_encoder *e);

/**
 * @brief symdb_batch_encode_begin() starts a response (forgetting any
 *        previous one, keeping the memory).
 * @param e        the encoder.
 * @param nmodules module records that symdb_batch_encode_module() will add.
 * @param nstacks  stack records that symdb_batch_encode_stack() will add.
 * @return 0; SYMDB_E_INVAL for a NULL e.
 * @note One thread per encoder, as for every encode call.
 */
SYMDB_API int symdb_batch_encode_begin(symdb_batch_encoder *e, uint32_t nmodules, uint32_t nstacks);

/**
 * @brief symdb_batch_encode_module() records the next module's answer.
 * @param e the encoder.
 * @param m status, nresults, image_id/image_id_len (OK), error (copied into
 *          the string table; NULL = none).
 * @return 0; SYMDB_E_INVAL past nmodules or image_id_len > 32;
 *         SYMDB_E_TOO_BIG; -ENOMEM.
 * @note Allocates through the encoder's realloc; one thread per encoder.
 */
SYMDB_API int symdb_batch_encode_module(symdb_batch_encoder *e, const symdb_batch_module_result *m);

/**
 * @brief symdb_batch_encode_stack() records the next stack's number of
 *        results (its request's frames).
 * @param e        the encoder.
 * @param nresults the stack's results, encoded after every module's.
 * @return 0; SYMDB_E_INVAL past nstacks; SYMDB_E_TOO_BIG; -ENOMEM.
 * @note One thread per encoder.
 */
SYMDB_API int symdb_batch_encode_stack(symdb_batch_encoder *e, uint32_t nresults);

/**
 * @brief symdb_batch_encode_result() appends the next result and its frames.
 * @param e       the encoder.
 * @param r       status and symbol (sym_name NULL: no symbol); r->nframes
 *                is ignored: nframes counts.
 * @param frames  nframes frames (0 unless r->status is SYMDB_BATCH_OK);
 *                their strings (and sym_name) are copied into the string
 *                table, each distinct string once per response (found by a
 *                hash of its bytes).
 * @param nframes frames of the result (the inline chain, innermost first).
 * @return 0; SYMDB_E_INVAL (frames on a failed result, unknown flags);
 *         SYMDB_E_TOO_BIG over max_bytes or a u32 count; -ENOMEM.  After an
 *         error the response is lost: begin again.
 * @note Results come in request order: every module's addresses, then
 *       every stack's frames.  One thread per encoder.
 */
SYMDB_API int symdb_batch_encode_result(symdb_batch_encoder *e, const symdb_batch_result *r,
                                        const symdb_batch_frame *frames, uint32_t nframes);

/**
 * @brief symdb_batch_encode_size() gives the length of the response so far.
 * @param e    the encoder.
 * @param size receives the length symdb_batch_encode_finish() writes.
 * @return 0 with *size; the encoder's first error; SYMDB_E_INVAL when the
 *         modules, stacks and results do not add up to what begin declared.
 * @note No allocation; one thread per encoder.
 */
SYMDB_API int symdb_batch_encode_size(const symdb_batch_encoder *e, size_t *size);

/**
 * @brief symdb_batch_encode_finish() writes the response into out.
 * @param e    the encoder.
 * @param out  caller-owned, size bytes (symdb_batch_encode_size()).
 * @param size bytes at out.
 * @return 0; as symdb_batch_encode_size(); SYMDB_E_TOO_BIG when size is short.
 * @note The encoder keeps its state: the same response may be written again.
 */
SYMDB_API int symdb_batch_encode_finish(const symdb_batch_encoder *e, void *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* SYMDB_BATCH_H */
