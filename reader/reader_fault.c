/* SPDX-License-Identifier: MIT */
/*
 * reader_fault.c - surviving an index file truncated under a live mapping.
 *
 * Index files are immutable and replaced only by rename, but an operator
 * can still truncate one that a long-running reader has mapped; the next
 * read past the new end raises SIGBUS.  The library installs no handler and
 * keeps no global state, so the caller's handler asks the handle:
 * symdb_fault_recover(db, si_addr) looks the address up in the handle's
 * table of mappings and, when one holds it, maps anonymous zero pages over
 * the rest of that mapping and marks its image damaged.  The faulting load
 * then re-reads zeros, which the resolve path survives (it bounds every
 * index it reads, for a hostile file already), and every call that reads
 * the image afterwards reports it: symdb_resolve_batch() gives each
 * result SYMDB_E_CORRUPT, symdb_symbolize() SYMDB_SYM_DAMAGED, and
 * symdb_image_fault_check() says so to a caller that read strings itself.
 *
 * The table is searched from a signal handler, so the search takes no lock,
 * allocates nothing and calls only mmap(2), a plain system call.  Writers
 * (open and the last close of an image) hold the db cache's lock; each slot
 * is a seqlock, and blocks of slots are never freed before the cache (the
 * handle and its last image), so the
 * handler reads only live memory and skips a slot that changes under it.
 *
 * The munmap race: the last close of an image clears its slot before
 * unmapping, but a handler that read the slot just before may still act on
 * it.  It acts only when the faulting address lies in that mapping, which
 * means the faulting thread was reading the image while another closed its
 * last reference: a use after close, which the API forbids anyway
 * (symdb_image_close).  A fault anywhere else never touches the slot's
 * mapping.
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reader_fault.h"
#include "reader_internal.h"

void rd_fault_init(struct rd_fault_table *t)
{
	long pg = sysconf(_SC_PAGESIZE); /* not async-signal-safe: read here */

	t->head = NULL;
	t->page = pg > 0 ? (uintptr_t)pg : 4096;
}

void rd_fault_fini(struct rd_fault_table *t)
{
	struct rd_fault_block *b = t->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	t->head = NULL;
}

/* Write a slot's fields between two increments of its sequence. */
static void slot_write(struct rd_fault_slot *s, uintptr_t start, size_t len,
                       struct symdb_image *img)
{
	unsigned seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->start, start, __ATOMIC_RELAXED);
	__atomic_store_n(&s->len, len, __ATOMIC_RELAXED);
	__atomic_store_n(&s->img, img, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
}

void rd_fault_register(struct rd_fault_table *t, symdb_image *img)
{
	struct rd_fault_block *b;
	size_t i;

	img->fault_slot = NULL;
	if (!img->map || !img->map_len)
		return;
	for (b = t->head; b; b = b->next)
		for (i = 0; i < RD_FAULT_BLOCK; i++)
			if (!b->slot[i].start)
				goto found;
	b = calloc(1, sizeof *b);
	if (!b)
		return; /* not covered: a fault on it stays fatal */
	b->next = t->head;
	i = 0;
	__atomic_store_n(&t->head, b, __ATOMIC_RELEASE);
found:
	slot_write(&b->slot[i], (uintptr_t)img->map, img->map_len, img);
	img->fault_slot = &b->slot[i];
}

void rd_fault_unregister(symdb_image *img)
{
	if (img->fault_slot)
		slot_write(img->fault_slot, 0, 0, NULL);
	img->fault_slot = NULL;
}

/*
 * A truncation that cuts the file inside its last mapped page raises no
 * SIGBUS: the kernel shows zeros past the new end of that page, and the
 * image would answer from them.  So the open notes the file's last
 * non-zero byte in that page (rd_image_note_tail), and every damage check
 * reads it again: zero now, the file was cut before it.  (A cut past it
 * removes only zeros, which read the same.)  Reading it below a cut to an
 * earlier page raises SIGBUS, which symdb_fault_recover() handles as
 * before.
 */
void rd_image_note_tail(symdb_image *img, size_t page)
{
	const uint8_t *p = img->map;
	size_t end = img->map_len, stop = end > page ? end - page : 0;

	img->tail_val = 0;
	while (end > stop && !p[end - 1])
		end--;
	if (end > stop) {
		img->tail_off = end - 1;
		img->tail_val = p[end - 1];
	}
}

int rd_image_damaged(const symdb_image *img)
{
	if (__atomic_load_n(&img->damaged, __ATOMIC_ACQUIRE))
		return 1;
	/* (only a mapping the handler can recover: read outside one, a cut
	 * before the last page would be a fatal SIGBUS here) */
	if (img->tail_val && img->fault_slot && !img->anon &&
	    ((const volatile uint8_t *)img->map)[img->tail_off] != img->tail_val) {
		__atomic_store_n(&((symdb_image *)img)->damaged, 1, __ATOMIC_RELEASE);
		return 1;
	}
	return 0;
}

/* Read a slot consistently: 1 with its fields, 0 when it is free or being
 * written (then its mapping is in no one's use: see the top comment). */
static int slot_read(const struct rd_fault_slot *s, uintptr_t *start, size_t *len,
                     symdb_image **img)
{
	unsigned seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

	if (seq & 1)
		return 0;
	*start = __atomic_load_n(&s->start, __ATOMIC_RELAXED);
	*len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);
	*img = __atomic_load_n(&s->img, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return *start && __atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq;
}

int symdb_fault_recover(symdb *db, const void *addr)
{
	const struct rd_fault_block *b;
	uintptr_t a = (uintptr_t)addr;
	int saved = errno, done = 0;

	if (!db || !addr)
		return 0;
	for (b = __atomic_load_n(&db->cache->fault.head, __ATOMIC_ACQUIRE); b && !done;
	     b = __atomic_load_n(&b->next, __ATOMIC_ACQUIRE)) {
		for (size_t i = 0; i < RD_FAULT_BLOCK && !done; i++) {
			uintptr_t start, page;
			size_t len;
			symdb_image *img;
			if (!slot_read(&b->slot[i], &start, &len, &img) || a - start >= len)
				continue;
			/* Damaged before the zeros appear: a reader that checks
			 * the flag after reading cannot miss them. */
			__atomic_store_n(&img->damaged, 1, __ATOMIC_SEQ_CST);
			/* Everything from the faulting page on: past a truncation
			 * every page would fault, one signal each. */
			page = a & ~(db->cache->fault.page - 1);
			done = mmap((void *)page, start + len - page, PROT_READ,
			            MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED
			               ? 1
			               : -1; /* no memory for the zeros: the fault stays fatal */
		}
	}
	errno = saved;
	return done > 0;
}

int symdb_image_fault_check(const symdb_image *img)
{
	if (!img)
		return SYMDB_E_INVAL;
	return rd_image_damaged(img) ? SYMDB_E_CORRUPT : 0;
}
