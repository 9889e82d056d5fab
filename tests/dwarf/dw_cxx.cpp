// SPDX-License-Identifier: MIT
// dw_cxx.cpp - C++ fixture for the DWARF oracle tests: templates, lambdas,
// member functions defined outside their class (DW_AT_specification),
// constructors, namespaces and inline chains through them.
#include <cstdio>
#include <vector>
#include <algorithm>

namespace fx {

template <typename T> struct Acc {
	T total{};
	explicit Acc(T start) : total(start) {}
	inline void add(T v) { total += scale(v); }
	static T scale(T v) { return v * 2 + 1; }
	T get() const;
};

template <typename T> T Acc<T>::get() const
{
	return total;
}

template <typename T> __attribute__((noinline)) T sum(const std::vector<T> &v)
{
	Acc<T> a(0);
	std::for_each(v.begin(), v.end(), [&a](T x) { a.add(x); });
	return a.get();
}

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};

struct Square : Shape {
	double s;
	explicit Square(double side) : s(side) {}
	double area() const override;
};

double Square::area() const
{
	auto sq = [](double x) { return x * x; };
	return sq(s);
}

} // namespace fx

int main(int argc, char **)
{
	std::vector<int> vi{1, 2, 3, argc};
	std::vector<double> vd{0.5, 1.5, double(argc)};
	fx::Square q(argc + 1.0);
	const fx::Shape &s = q;
	auto twice = [&](int k) { return fx::sum(vi) * k; };
	std::printf("%d %f %f\n", twice(argc), fx::sum(vd), s.area());
	return 0;
}
