/* SPDX-License-Identifier: MIT */
/*
 * prof_svg.c - a prof_folded model rendered as one self-contained,
 * interactive SVG flame graph (profile.h, prof_svg_write).
 *
 * The stacks become a tree (children of a node merged by frame, so the
 * same call path is one box however many stacks share it), laid out root
 * at the bottom, each box as wide as its weight, children left to right in
 * name order so equal names stay together.  Boxes narrower than min_width
 * pixels are left out with everything above them: the file stays small
 * for profiles with many thin stacks.
 *
 * Each box is a <g class="f"> holding a <title> (the tooltip: name,
 * file:line, module, kind, weight and share; its first line is the name),
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

struct node {
	uint32_t frame;  /* frame id; UINT32_MAX for the root ("all") */
	uint32_t parent;
	uint32_t child;  /* first child, then siblings: UINT32_MAX ends */
	uint32_t sibling;
	uint32_t depth;
	uint64_t weight;
	uint64_t x;      /* offset of the box, in weight units */
};

struct tree {
	const prof_folded *f;
	struct node *n;
	size_t len, cap;
	uint32_t *slot; /* (parent, frame) -> node index + 1 */
	size_t slot_cap;
};

#define NONE UINT32_MAX

static uint64_t key_hash(uint32_t parent, uint32_t frame)
{
	uint64_t x = (uint64_t)parent << 32 | frame;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static int tree_rehash(struct tree *t)
{
	size_t cap = t->slot_cap ? t->slot_cap * 2 : 1024;
	uint32_t *s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 1; i < t->len; i++) {
		size_t j = key_hash(t->n[i].parent, t->n[i].frame) & (cap - 1);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->slot_cap = cap;
	return 0;
}

/* The child of parent for frame, created (weight 0) if new; NONE when out
 * of memory. */
static uint32_t tree_child(struct tree *t, uint32_t parent, uint32_t frame)
{
	if ((t->len + 1) * 2 > t->slot_cap && tree_rehash(t) < 0)
		return NONE;
	size_t mask = t->slot_cap - 1, j = key_hash(parent, frame) & mask;
	for (uint32_t e; (e = t->slot[j]); j = (j + 1) & mask)
		if (t->n[e - 1].parent == parent && t->n[e - 1].frame == frame)
			return e - 1;
	if (t->len == t->cap) {
		size_t cap = t->cap * 2;
		struct node *n = t->len < NONE - 1 ? realloc(t->n, cap * sizeof(*n)) : NULL;
		if (!n)
			return NONE;
		t->n = n;
		t->cap = cap;
	}
	uint32_t id = (uint32_t)t->len++;
	struct node *p = &t->n[parent];
	t->n[id] = (struct node){ frame, parent, NONE, p->child, p->depth + 1, 0, 0 };
	p->child = id;
	t->slot[j] = id + 1;
	return id;
}

static const struct tree *cmp_tree;

static int child_cmp(const void *a, const void *b)
{
	const prof_frame *x = prof_folded_frame(cmp_tree->f, cmp_tree->n[*(const uint32_t *)a].frame);
	const prof_frame *y = prof_folded_frame(cmp_tree->f, cmp_tree->n[*(const uint32_t *)b].frame);
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
	if (c)
		return c;
	/* Then by frame id: a total order, so the output is deterministic. */
	uint32_t i = cmp_tree->n[*(const uint32_t *)a].frame, j = cmp_tree->n[*(const uint32_t *)b].frame;
	return (i > j) - (i < j);
}

/* Every node's x: parents come before their children in n[] (a child is
 * created while its parent exists), so one pass in index order works. */
static int tree_place(struct tree *t)
{
	uint32_t *kids = NULL;
	size_t cap = 0;
	cmp_tree = t;
	for (size_t i = 0; i < t->len; i++) {
		size_t k = 0;
		for (uint32_t c = t->n[i].child; c != NONE; c = t->n[c].sibling) {
			if (k == cap) {
				size_t nc = cap ? cap * 2 : 64;
				uint32_t *q = realloc(kids, nc * sizeof(*q));
				if (!q) {
					free(kids);
					return -ENOMEM;
				}
				kids = q;
				cap = nc;
			}
			kids[k++] = c;
		}
		if (k > 1)
			qsort(kids, k, sizeof(*kids), child_cmp);
		uint64_t x = t->n[i].x;
		for (size_t j = 0; j < k; j++) {
			t->n[kids[j]].x = x;
			x += t->n[kids[j]].weight;
		}
	}
	cmp_tree = NULL;
	free(kids);
	return 0;
}

static int tree_build(struct tree *t, const prof_folded *f)
{
	*t = (struct tree){ .f = f, .cap = 1024 };
	if (!(t->n = malloc(t->cap * sizeof(*t->n))))
		return -ENOMEM;
	t->n[0] = (struct node){ NONE, NONE, NONE, NONE, 0, prof_folded_total(f), 0 };
	t->len = 1;
	for (size_t i = 0; i < prof_folded_count(f); i++) {
		const uint32_t *ids;
		size_t n;
		uint64_t w = prof_folded_stack(f, i, &ids, &n);
		uint32_t cur = 0;
		for (size_t k = 0; k < n; k++) {
			if ((cur = tree_child(t, cur, ids[k])) == NONE)
				return -ENOMEM;
			t->n[cur].weight += w;
		}
	}
	return tree_place(t);
}

static void tree_free(struct tree *t)
{
	free(t->n);
	free(t->slot);
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
	const struct tree *t;
	double scale; /* pixels per weight unit */
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

static void put_node(const struct svg_ctx *c, uint32_t i)
{
	const struct node *n = &c->t->n[i];
	const prof_frame *fr = n->frame == NONE ? NULL : prof_folded_frame(c->t->f, n->frame);
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
		if (fr->line)
			fprintf(out, ":%u", fr->line);
	}
	if (fr && fr->module) {
		fputs("\nmodule ", out);
		put_xml(out, fr->module, SIZE_MAX);
	}
	if (fr)
		fprintf(out, "\n%s%s", kind_name[fr->kind], fr->inlined ? ", inlined" : "");
	fputc('\n', out);
	put_share(out, n->weight, c->t->n[0].weight, c->unit);
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
	struct tree t;
	int rc = tree_build(&t, f);
	if (rc < 0) {
		tree_free(&t);
		return rc;
	}
	struct svg_ctx c = { .out = out, .t = &t, .width = o.width ? o.width : 1200,
		             .unit = o.unit ? o.unit : "samples" };
	double minw = o.min_width > 0 ? o.min_width : 0.1;
	c.scale = t.n[0].weight ? (double)(c.width - 2 * PAD_X) / (double)t.n[0].weight : 0;
	/* As tall as the deepest box drawn: a child is never wider than its
	 * parent, so width alone decides, and whole subtrees go. */
	uint32_t depth = 0;
	for (size_t i = 1; i < t.len; i++)
		if ((double)t.n[i].weight * c.scale >= minw && t.n[i].depth > depth)
			depth = t.n[i].depth;
	c.height = TOP_H + (depth + 1) * FRAME_H + BOTTOM_H;
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
	for (size_t i = 0; i < t.len; i++) {
		if (i == 0 || (double)t.n[i].weight * c.scale >= minw)
			put_node(&c, (uint32_t)i);
	}
	fprintf(out, "</g>\n<script type=\"text/javascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
	        script);
	tree_free(&t);
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
