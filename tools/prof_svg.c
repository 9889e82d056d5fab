/* SPDX-License-Identifier: MIT */
/*
 * prof_svg.c - a prof_folded model rendered as one self-contained,
 * interactive SVG flame graph (profile.h, prof_svg_write).
 *
 * Each call path is one box however many stacks share it, laid out root
 * at the bottom, as wide as its weight, callees left to right in name
 * order so equal names stay together, a caller's own weight at its right.
 * The boxes come from one pass over the stacks sorted by their frames
 * (flow_run), so memory does not grow with the number of call paths.
 * Boxes narrower than min_width pixels are left out with everything above
 * them: the file stays small for profiles with many thin stacks.
 *
 * Each box is a <g class="f"> holding a <title> (the tooltip: name,
 * file:line -- file:FIRST-LAST when frames at several lines of a function
 * were merged into the box -- module, kind, weight and share; its first
 * line is the name),
 * a <rect> and a <text>, with its weight interval and depth in data-x,
 * data-w and data-d.  The script at the end of the document (written here,
 * no library, nothing fetched) reads only those: click zooms to a box,
 * the search box (or "/") highlights the frames whose name matches a
 * regular expression and shows the share they cover, hovering shows the
 * details line.  It also runs when the SVG is inlined into an HTML page.
 * Every string from the profile is made valid XML text: escaped, with
 * bytes that are not valid UTF-8 or not XML characters written as \xNN.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prof_model.h"

enum {
	FRAME_H = 16,   /* box height, pixels */
	FONT_PX = 12,   /* monospace, so the script can fit text without measuring */
	PAD_X = 10,
	TOP_H = 66,     /* title, subtitle, controls */
	BOTTOM_H = 30   /* details line */
};
#define CHAR_W 7.25 /* advance of a 12px monospace glyph (0.6 em), rounded up */

/* A box: one call path, its weight and where it starts, in weight units. */
struct box {
	uint32_t frame; /* its canonical frame id; NONE for the root ("all") */
	uint32_t depth;
	uint64_t x, weight;
	uint32_t line_lo, line_hi; /* the lines of the frames merged into it; 0 = none */
};

#define NONE UINT32_MAX

/* Frames in the order boxes are laid out: by name, then file, then id
 * (a total order, so the picture is deterministic). */
static int frame_order(const prof_folded *f, uint32_t a, uint32_t b)
{
	if (a == b)
		return 0;
	const prof_frame *x = prof_folded_frame(f, a), *y = prof_folded_frame(f, b);
	int c = strcmp(x->name, y->name);
	if (!c)
		c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
	return c ? c : (a > b) - (a < b);
}

static const prof_folded *order_model;
static const uint32_t *order_canon;

/* Stacks compared frame by frame; a stack sorts after every stack it is a
 * prefix of, so a caller's own weight ends up right of its callees. */
static int stack_order(const void *pa, const void *pb)
{
	const uint32_t *x, *y;
	size_t n, m;
	prof_folded_stack(order_model, *(const size_t *)pa, &x, &n);
	prof_folded_stack(order_model, *(const size_t *)pb, &y, &m);
	for (size_t k = 0; k < n && k < m; k++) {
		int c = frame_order(order_model, order_canon[x[k]], order_canon[y[k]]);
		if (c)
			return c;
	}
	return (n < m) - (n > m);
}

/*
 * The boxes, without building the tree: in stack_order, the stacks that
 * share a call path are consecutive, so one pass keeps the open path
 * (root .. current leaf) and closes a box when the next stack leaves it.
 * A new box starts where the weight of the stacks before it ends.  emit()
 * gets each box when it is closed (callees before callers, the root last).
 * Memory: the sorted stack indices and the path, whatever the profile.
 */
struct flow {
	const prof_folded *f;
	uint32_t *canon; /* frame id -> the first id of its box key */
	size_t *order;
	struct box *path;
	size_t path_cap;
};

/*
 * A box is a function, not a line: frames that differ only in their line
 * (a caller sampled at several call sites, a leaf at several lines) are
 * one box, or a hot function would be split into slivers with its callees
 * split under each.  canon[] maps every frame to the first frame with the
 * same name, file, module, kind and inlined flag (the model's strings are
 * interned: pointers compare).
 */
static uint64_t box_key_hash(const prof_frame *fr)
{
	uint64_t h = (uintptr_t)fr->name * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uintptr_t)fr->file) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uintptr_t)fr->module) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ ((uint64_t)fr->kind << 1 | fr->inlined)) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 31);
}

static int canon_build(struct flow *w)
{
	size_t n = prof_folded_frames(w->f), cap = 64;
	while (cap < 2 * n)
		cap *= 2;
	uint32_t *slot = calloc(cap, sizeof(*slot));
	w->canon = malloc((n ? n : 1) * sizeof(*w->canon));
	if (!slot || !w->canon) {
		free(slot);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		const prof_frame *fr = prof_folded_frame(w->f, i);
		size_t j = box_key_hash(fr) & (cap - 1);
		for (;; j = (j + 1) & (cap - 1)) {
			if (!slot[j]) {
				slot[j] = i + 1;
				w->canon[i] = i;
				break;
			}
			const prof_frame *o = prof_folded_frame(w->f, slot[j] - 1);
			if (o->name == fr->name && o->file == fr->file && o->module == fr->module &&
			    o->kind == fr->kind && o->inlined == fr->inlined) {
				w->canon[i] = slot[j] - 1;
				break;
			}
		}
	}
	free(slot);
	return 0;
}

static int flow_init(struct flow *w, const prof_folded *f)
{
	size_t n = prof_folded_count(f), deepest = 0;
	*w = (struct flow){ .f = f };
	w->order = malloc((n ? n : 1) * sizeof(*w->order));
	for (size_t i = 0; w->order && i < n; i++) {
		const uint32_t *ids;
		size_t len;
		prof_folded_stack(f, i, &ids, &len);
		w->order[i] = i;
		deepest = len > deepest ? len : deepest;
	}
	w->path_cap = deepest + 1;
	w->path = malloc(w->path_cap * sizeof(*w->path));
	if (!w->order || !w->path || canon_build(w) < 0)
		return -ENOMEM;
	order_model = f; /* qsort has no context argument in C11 */
	order_canon = w->canon;
	qsort(w->order, n, sizeof(*w->order), stack_order);
	order_model = NULL;
	order_canon = NULL;
	return 0;
}

static void flow_free(struct flow *w)
{
	free(w->canon);
	free(w->order);
	free(w->path);
}

static void flow_run(const struct flow *w, void (*emit)(void *, const struct box *), void *arg)
{
	struct box *path = w->path;
	size_t open = 0; /* path[0..open] are open; path[0] is the root */
	const uint32_t *prev = NULL;
	size_t prevn = 0;
	uint64_t pos = 0;

	path[0] = (struct box){ NONE, 0, 0, 0, 0, 0 };
	for (size_t i = 0; i < prof_folded_count(w->f); i++) {
		const uint32_t *ids;
		size_t n, p = 0;
		uint64_t wt = prof_folded_stack(w->f, w->order[i], &ids, &n);
		while (p < n && p < prevn && w->canon[ids[p]] == w->canon[prev[p]])
			p++;
		for (; open > p; open--)
			emit(arg, &path[open]);
		for (; open < n; open++)
			path[open + 1] = (struct box){ w->canon[ids[open]], (uint32_t)open + 1, pos,
				                       0, 0, 0 };
		path[0].weight += wt;
		for (size_t k = 0; k < n; k++) {
			struct box *b = &path[k + 1];
			uint32_t line = prof_folded_frame(w->f, ids[k])->line;
			b->weight += wt;
			if (line && (!b->line_lo || line < b->line_lo))
				b->line_lo = line;
			if (line > b->line_hi)
				b->line_hi = line;
		}
		pos += wt;
		prev = ids;
		prevn = n;
	}
	for (; open > 0; open--)
		emit(arg, &path[open]);
	emit(arg, &path[0]);
}

/* ---- text ---------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s that is an XML 1.0 character
 * (not a surrogate, U+FFFE or U+FFFF), or 0. */
static size_t xml_char_len(const unsigned char *s)
{
	if (s[0] >= 0x20 && s[0] < 0x7f)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		uint32_t cp = (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
		return cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff) || cp >= 0xfffe ? 0 : 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		uint32_t cp = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12;
		return cp < 0x10000 || cp > 0x10ffff ? 0 : 4;
	}
	return 0;
}

/* Write s as XML text, at most max_chars characters (SIZE_MAX: all), a
 * longer string cut to max_chars - 2 and "..": what the script does too. */
static void put_xml(FILE *out, const char *str, size_t max_chars)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t chars = 0;
	for (const unsigned char *p = s; *p; chars++) {
		size_t n = xml_char_len(p);
		p += n ? n : 1;
		if (!n)
			chars += 3; /* \xNN */
	}
	size_t keep = chars <= max_chars ? chars : max_chars >= 2 ? max_chars - 2 : 0;
	for (size_t c = 0; *s && c < keep;) {
		size_t n = xml_char_len(s);
		if (!n) {
			if (c + 4 > keep)
				break;
			fprintf(out, "\\x%02x", *s++);
			c += 4;
			continue;
		}
		if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else
			fwrite(s, 1, n, out);
		s += n;
		c++;
	}
	if (keep < chars)
		fputs("..", out);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/* The fill of a box: a hue band per kind, varied by the name's hash so
 * that neighbours differ and a function keeps its colour everywhere. */
static void put_fill(FILE *out, const prof_frame *fr)
{
	uint64_t h = name_hash(fr->name);
	unsigned a = (unsigned)(h % 1000), b = (unsigned)(h / 1000 % 1000);
	unsigned hue, sat, light;
	switch (fr->kind) {
	case PROF_KERNEL: /* orange to brown */
		hue = 20 + a * 18 / 1000, sat = 55 + b * 20 / 1000, light = 38 + a * 12 / 1000;
		break;
	case PROF_JIT: /* green */
		hue = 95 + a * 40 / 1000, sat = 45 + b * 25 / 1000, light = 45 + b * 10 / 1000;
		break;
	case PROF_UNKNOWN: /* grey */
		hue = 0, sat = 0, light = 68 + a * 10 / 1000;
		break;
	default: /* user: red to yellow */
		hue = a * 55 / 1000, sat = 80 + b * 15 / 1000, light = 55 + b * 8 / 1000;
		break;
	}
	if (fr->inlined) /* lighter, and outlined by the stylesheet */
		light += (100 - light) * 2 / 5;
	fprintf(out, "hsl(%u,%u%%,%u%%)", hue, sat, light);
}

static const char kind_letter[] = { 'u', 'k', 'j', 'n' };
static const char *const kind_name[] = { "user", "kernel", "JIT", "unknown" };

/* ---- the document ------------------------------------------------------------ */

struct svg_ctx {
	FILE *out;
	const prof_folded *f;
	uint64_t total;
	double scale; /* pixels per weight unit */
	double min_width;
	uint32_t depth; /* the deepest box drawn */
	unsigned width;
	unsigned height;
	const char *unit;
};

static void put_share(FILE *out, uint64_t w, uint64_t total, const char *unit)
{
	fprintf(out, "%llu ", (unsigned long long)w);
	put_xml(out, unit, SIZE_MAX);
	fprintf(out, ", %.2f%%", total ? 100.0 * (double)w / (double)total : 0.0);
}

/* Boxes narrower than min_width are not drawn; the root always is.  A box
 * is never wider than its caller's, so whole subtrees go. */
static int drawn(const struct svg_ctx *c, const struct box *n)
{
	return n->frame == NONE || (double)n->weight * c->scale >= c->min_width;
}

static void deepest_drawn(void *arg, const struct box *n)
{
	struct svg_ctx *c = arg;
	if (drawn(c, n) && n->depth > c->depth)
		c->depth = n->depth;
}

static void put_node(void *arg, const struct box *n)
{
	const struct svg_ctx *c = arg;
	if (!drawn(c, n))
		return;
	const prof_frame *fr = n->frame == NONE ? NULL : prof_folded_frame(c->f, n->frame);
	const char *name = fr ? fr->name : "all";
	double x = PAD_X + (double)n->x * c->scale, w = (double)n->weight * c->scale;
	unsigned y = c->height - BOTTOM_H - (n->depth + 1) * FRAME_H;
	FILE *out = c->out;

	fprintf(out, "<g class=\"f%s\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%u\" data-k=\"%c\"><title>",
	        fr && fr->inlined ? " i" : "", (unsigned long long)n->x,
	        (unsigned long long)n->weight, n->depth, fr ? kind_letter[fr->kind] : 'r');
	put_xml(out, name, SIZE_MAX);
	if (fr && fr->file) {
		fputc('\n', out);
		put_xml(out, fr->file, SIZE_MAX);
		if (n->line_lo == n->line_hi && n->line_lo)
			fprintf(out, ":%u", n->line_lo);
		else if (n->line_lo)
			fprintf(out, ":%u-%u", n->line_lo, n->line_hi);
	}
	if (fr && fr->module) {
		fputs("\nmodule ", out);
		put_xml(out, fr->module, SIZE_MAX);
	}
	if (fr)
		fprintf(out, "\n%s%s", kind_name[fr->kind], fr->inlined ? ", inlined" : "");
	fputc('\n', out);
	put_share(out, n->weight, c->total, c->unit);
	fprintf(out, "</title><rect x=\"%.1f\" y=\"%u\" width=\"%.1f\" height=\"%u\" fill=\"", x, y, w,
	        FRAME_H - 1);
	if (fr)
		put_fill(out, fr);
	else
		fputs("hsl(210,15%,72%)", out);
	fprintf(out, "\"/><text x=\"%.1f\" y=\"%u\">", x + 3, y + FRAME_H - 4);
	double fit = (w - 6) / CHAR_W;
	if (fit >= 3)
		put_xml(out, name, (size_t)fit);
	fputs("</text></g>\n", out);
}

/* The script: only ES5-level DOM calls, so it runs in any browser that
 * renders SVG; every handle it needs is looked up once. */
static const char script[] =
	"(function () {\n"
	"'use strict';\n"
	"var cs = document.currentScript;\n"
	"var all = document.querySelectorAll('svg.symdb-flame');\n"
	"var svg = cs && cs.closest ? cs.closest('svg') : all[all.length - 1];\n"
	"var W = +svg.getAttribute('data-width'), PAD = +svg.getAttribute('data-pad');\n"
	"var CW = +svg.getAttribute('data-cw');\n"
	"var unit = svg.getAttribute('data-unit');\n"
	"var gs = svg.querySelectorAll('g.f'), F = [];\n"
	"var root = null;\n"
	"for (var i = 0; i < gs.length; i++) {\n"
	"  var g = gs[i], t = g.querySelector('title').textContent;\n"
	"  var f = { g: g, r: g.querySelector('rect'), t: g.querySelector('text'),\n"
	"    x: +g.getAttribute('data-x'), w: +g.getAttribute('data-w'),\n"
	"    d: +g.getAttribute('data-d'), name: t.split('\\n')[0], tip: t.replace(/\\n/g, ' | ') };\n"
	"  f.fill = f.r.getAttribute('fill');\n"
	"  g.symdbFrame = f;\n"
	"  F.push(f);\n"
	"  if (f.d === 0) root = f;\n"
	"}\n"
	"var total = root ? root.w : 0;\n"
	"var details = svg.querySelector('.details'), matched = svg.querySelector('.matched');\n"
	"var reset = svg.querySelector('.reset'), input = svg.querySelector('input');\n"
	"var zoomed = root, re = null;\n"
	"function fit(name, px) {\n"
	"  var n = Math.floor((px - 6) / CW);\n"
	"  if (n < 3) return '';\n"
	"  return name.length <= n ? name : name.slice(0, n - 2) + '..';\n"
	"}\n"
	"function place(f, x, w, show, faded) {\n"
	"  f.g.style.display = show ? '' : 'none';\n"
	"  if (!show) return;\n"
	"  f.g.classList.toggle('faded', faded);\n"
	"  f.r.setAttribute('x', x.toFixed(1));\n"
	"  f.r.setAttribute('width', w.toFixed(1));\n"
	"  f.t.setAttribute('x', (x + 3).toFixed(1));\n"
	"  f.t.textContent = fit(f.name, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"  zoomed = z || root;\n"
	"  var zx = zoomed.x, zw = zoomed.w || 1, zd = zoomed.d, span = W - 2 * PAD;\n"
	"  var scale = span / zw;\n"
	"  for (var i = 0; i < F.length; i++) {\n"
	"    var f = F[i];\n"
	"    if (f.d < zd)\n"
	"      place(f, PAD, span, f.x <= zx && f.x + f.w >= zx + zw, true);\n"
	"    else\n"
	"      place(f, PAD + (f.x - zx) * scale, f.w * scale,\n"
	"            f.x >= zx && f.x + f.w <= zx + zw && f.w * scale >= 0.1, false);\n"
	"  }\n"
	"  reset.style.display = zoomed === root ? 'none' : '';\n"
	"  if (re) search(re.source);\n"
	"}\n"
	"function pct(w) { return total ? (100 * w / total).toFixed(2) + '%' : '0%'; }\n"
	"function search(s) {\n"
	"  re = null;\n"
	"  if (s) {\n"
	"    try { re = new RegExp(s); }\n"
	"    catch (e) { re = new RegExp(s.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&')); }\n"
	"  }\n"
	"  var hits = [];\n"
	"  for (var i = 0; i < F.length; i++) {\n"
	"    var f = F[i], hit = re !== null && f !== root && re.test(f.name);\n"
	"    f.r.setAttribute('fill', hit ? 'rgb(225,0,225)' : f.fill);\n"
	"    f.g.classList.toggle('hit', hit);\n"
	"    if (hit && f.x >= zoomed.x && f.x + f.w <= zoomed.x + zoomed.w) hits.push(f);\n"
	"  }\n"
	"  hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });\n"
	"  var sum = 0, end = -1;\n"
	"  for (var k = 0; k < hits.length; k++) {\n"
	"    var h = hits[k];\n"
	"    if (h.x + h.w <= end) continue;\n"
	"    sum += h.x + h.w - Math.max(h.x, end);\n"
	"    end = h.x + h.w;\n"
	"  }\n"
	"  matched.textContent = re ? 'Matched: ' + pct(sum) + ' (' + hits.length + ' frames)' : '';\n"
	"  return sum;\n"
	"}\n"
	"svg.addEventListener('click', function (e) {\n"
	"  var g = e.target.closest ? e.target.closest('g.f') : null;\n"
	"  if (g && g.symdbFrame) zoom(g.symdbFrame);\n"
	"});\n"
	"svg.addEventListener('mouseover', function (e) {\n"
	"  var g = e.target.closest ? e.target.closest('g.f') : null;\n"
	"  if (g && g.symdbFrame) details.textContent = g.symdbFrame.tip;\n"
	"});\n"
	"svg.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"reset.addEventListener('click', function () { zoom(root); });\n"
	"matched.addEventListener('click', function () {\n"
	"  if (input) input.value = '';\n"
	"  search('');\n"
	"});\n"
	"if (input) input.addEventListener('input', function () { search(input.value); });\n"
	"document.addEventListener('keydown', function (e) {\n"
	"  if (input && e.key === '/' && document.activeElement !== input) {\n"
	"    e.preventDefault(); input.focus();\n"
	"  } else if (e.key === 'Escape') {\n"
	"    if (input) input.value = '';\n"
	"    search(''); zoom(root);\n"
	"  }\n"
	"});\n"
	"svg.symdbFlame = { zoom: zoom, search: search, frames: F,\n"
	"  zoomed: function () { return zoomed; } };\n"
	"zoom(root);\n"
	"})();\n";

static const char style[] =
	"text { font-family: monospace; font-size: 12px; fill: #000; }\n"
	"g.f text { pointer-events: none; }\n"
	"g.f rect { rx: 2px; ry: 2px; }\n"
	"g.f:hover rect { stroke: #000; stroke-width: 0.6; }\n"
	"g.f.i rect { stroke: #555; stroke-width: 0.8; stroke-dasharray: 3 2; }\n"
	"g.faded { opacity: 0.55; }\n"
	".title { font-size: 17px; text-anchor: middle; }\n"
	".subtitle { fill: #555; text-anchor: middle; }\n"
	".reset, .matched { cursor: pointer; }\n"
	".matched { text-anchor: end; }\n"
	"input { font: 12px monospace; width: 190px; }\n";

int prof_svg_write(const prof_folded *f, FILE *out, const prof_svg_opts *opts)
{
	prof_svg_opts o = { .sz = sizeof(o) };
	if (opts && opts->sz >= sizeof(o))
		o = *opts;
	struct flow w;
	int rc = flow_init(&w, f);
	if (rc < 0) {
		flow_free(&w);
		return rc;
	}
	struct svg_ctx c = { .out = out, .f = f, .total = prof_folded_total(f),
		             .width = o.width ? o.width : 1200,
		             .unit = o.unit ? o.unit : "samples",
		             .min_width = o.min_width > 0 ? o.min_width : 0.1 };
	c.scale = c.total ? (double)(c.width - 2 * PAD_X) / (double)c.total : 0;
	/* As tall as the deepest box drawn: one pass to find it. */
	flow_run(&w, deepest_drawn, &c);
	c.height = TOP_H + (c.depth + 1) * FRAME_H + BOTTOM_H;
	const char *title = o.title ? o.title : "Flame Graph";

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	             "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"symdb-flame\" version=\"1.1\" "
	             "width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" data-width=\"%u\" data-pad=\"%d\" "
	             "data-cw=\"%.2f\" data-unit=\"",
	        c.width, c.height, c.width, c.height, c.width, PAD_X, CHAR_W);
	put_xml(out, c.unit, SIZE_MAX);
	fputs("\">\n<title>", out);
	put_xml(out, title, SIZE_MAX);
	fprintf(out, "</title>\n<style>\n%s</style>\n", style);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f4\"/>\n", c.width,
	        c.height);
	fprintf(out, "<text class=\"title\" x=\"%u\" y=\"24\">", c.width / 2);
	put_xml(out, title, SIZE_MAX);
	fprintf(out, "</text>\n<text class=\"subtitle\" x=\"%u\" y=\"42\">", c.width / 2);
	put_xml(out, o.subtitle, SIZE_MAX);
	fprintf(out, "</text>\n<text class=\"reset\" x=\"%d\" y=\"24\" style=\"display:none\">"
	             "Reset zoom</text>\n", PAD_X);
	fprintf(out, "<foreignObject x=\"%u\" y=\"8\" width=\"200\" height=\"24\">"
	             "<input xmlns=\"http://www.w3.org/1999/xhtml\" type=\"search\" "
	             "placeholder=\"search (regex, /)\" aria-label=\"search\"/></foreignObject>\n",
	        c.width - PAD_X - 200);
	fprintf(out, "<text class=\"matched\" x=\"%u\" y=\"%u\"></text>\n", c.width - PAD_X,
	        c.height - 10);
	fprintf(out, "<text class=\"details\" x=\"%d\" y=\"%u\"> </text>\n", PAD_X, c.height - 10);
	fputs("<g class=\"frames\">\n", out);
	flow_run(&w, put_node, &c);
	fprintf(out, "</g>\n<script type=\"text/javascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
	        script);
	flow_free(&w);
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
