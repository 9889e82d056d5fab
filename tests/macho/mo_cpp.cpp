// SPDX-License-Identifier: MIT
// Mach-O fixture (C++): namespaces, templates, methods, inlining.
namespace geo {
struct Point {
	int x, y;
	__attribute__((noinline)) int dot(const Point &o) const { return x * o.x + y * o.y; }
	int norm1() const { return (x < 0 ? -x : x) + (y < 0 ? -y : y); }
};

template <typename T> __attribute__((noinline)) T twice(T v) { return v + v; }

__attribute__((noinline)) int walk(const Point *p, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += p[i].norm1() + twice(p[i].x) + p[i].dot(p[0]);
	return s;
}
} // namespace geo

extern "C" int cpp_entry(int n)
{
	geo::Point pts[4] = { { 1, 2 }, { -3, 4 }, { 5, -6 }, { n, n } };
	return geo::walk(pts, 4) + (int)geo::twice<long>(n);
}
