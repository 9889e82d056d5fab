// SPDX-License-Identifier: MIT
//
// The C++ program tests/profile/pprof.sh profiles with gperftools' CPU
// profiler, for the names pprof stores in Function.name: functions in
// nested and anonymous namespaces, a class template's const method, a
// function template with a return type, an overloaded operator, an
// operator template, two lambdas, an inline function (always inlined, so a
// Line of its own under its caller) and a static member.  pprof shows them without parameters, template arguments
// or return types ("app::detail::Ring::spin").
#include <gperftools/profiler.h>
#include <cstdio>
#include <cstdlib>

namespace app {
namespace detail {

template <typename T, int N> struct Ring {
	T v[N];
	__attribute__((noinline)) T spin(unsigned n) const
	{
		T s = v[0];
		for (unsigned i = 0; i < n; i++)
			s = s * 31 + v[i % N] + static_cast<T>(i);
		return s;
	}
	static __attribute__((noinline)) T churn(T x, unsigned n)
	{
		for (unsigned i = 0; i < n; i++)
			x = (x ^ (x << 7)) + static_cast<T>(i);
		return x;
	}
};

static inline __attribute__((always_inline)) unsigned scramble(unsigned x)
{
	x ^= x << 13;
	x ^= x >> 17;
	return x ^ (x << 5);
}

} // namespace detail

template <typename T> __attribute__((noinline)) T fold(T seed, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		seed = detail::scramble(static_cast<unsigned>(seed) + i);
	return seed;
}

// A member operator template: LLVM prints its arguments right after the
// operator ("operator<<long>"), pprof stores "app::Cmp::operator<".
template <typename T> struct Cmp {
	T v;
	template <typename U> __attribute__((noinline)) bool operator<(const Cmp<U> &o) const
	{
		U x = o.v;
		for (unsigned i = 0; i < 400000; i++)
			x = x * 3 + static_cast<U>(i);
		return static_cast<U>(v) < x;
	}
};

struct Acc {
	unsigned long v;
	__attribute__((noinline)) Acc &operator+=(unsigned n)
	{
		for (unsigned i = 0; i < n; i++)
			v = v * 7 + i;
		return *this;
	}
};

} // namespace app

namespace {
__attribute__((noinline)) unsigned hidden_work(unsigned n)
{
	return app::fold<unsigned>(n, n) + app::detail::scramble(n);
}
} // namespace

int main(int argc, char **argv)
{
	volatile unsigned big = 200000;
	unsigned rounds = 0;
	if (argc < 3 || std::sscanf(argv[2], "%u", &rounds) != 1)
		return 2;
	app::detail::Ring<unsigned long, 5> ring = { { 1, 2, 3, 4, 5 } };
	app::Acc acc = { 1 };
	unsigned long s = 0;
	// Two lambdas: pprof's demangler names them {lambda(unsigned int)#1}
	// and #2, LLVM 'lambda'(unsigned int) and 'lambda0'(unsigned int).
	auto lam1 = [](unsigned n) __attribute__((noinline)) {
		unsigned long x = n;
		for (unsigned i = 0; i < n; i++)
			x = x * 5 + i;
		return x;
	};
	auto lam2 = [](unsigned n) __attribute__((noinline)) {
		unsigned long x = n;
		for (unsigned i = 0; i < n; i++)
			x = (x ^ i) * 9;
		return x;
	};
	app::Cmp<int> ca = { 3 };
	app::Cmp<long> cb = { 4 };
	ProfilerStart(argv[1]);
	for (unsigned r = 0; r < rounds; r++) {
		s += lam1(big) + lam2(big) + (ca < cb);
		s += ring.spin(big) + app::detail::Ring<int, 3>::churn(static_cast<int>(r), big);
		s += app::fold<unsigned long>(s, big / 2) + hidden_work(big);
		acc += big;
	}
	ProfilerStop();
	std::printf("%lu %lu\n", s, acc.v);
	return 0;
}
