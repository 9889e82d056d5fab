/* SPDX-License-Identifier: MIT */
/*
 * prof_model.h - read access to a prof_folded model (tools/profile.h) for
 * the code that renders it (prof_svg.c) and for the model's unit test.
 * The model keeps each distinct frame once (an id) and each distinct stack
 * once (an array of frame ids, root first); these calls hand them out in
 * the order they were first added.  Internal to the CLI; the pointers stay
 * valid until the model is changed or freed.
 */
#ifndef SYMDB_PROF_MODEL_H
#define SYMDB_PROF_MODEL_H

#include "profile.h"

/* Number of distinct frames; ids are 0 .. count-1. */
size_t prof_folded_frames(const prof_folded *f);

/* Frame id (< prof_folded_frames()); its strings are the model's copies. */
const prof_frame *prof_folded_frame(const prof_folded *f, uint32_t id);

/* Stack i (< prof_folded_count()): *ids gets its n frame ids, root first;
 * returns its weight. */
uint64_t prof_folded_stack(const prof_folded *f, size_t i, const uint32_t **ids, size_t *n);

#endif /* SYMDB_PROF_MODEL_H */
