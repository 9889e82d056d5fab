// SPDX-License-Identifier: MIT
// line_order_ref.cpp - the reference for test_line_order.c: the order in
// which this C++ library's std::sort leaves line sequences compared by end
// address alone (LLVM 14's llvm::sort(Sequences, orderByHighPC)), and an
// input that drives std::sort's introsort into its heapsort fallback.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace {
struct Seq {
	uint64_t hi;
	size_t idx;
};
} // namespace

// idx[k] receives the input position of the k-th sequence after the sort.
extern "C" void line_order_ref(const uint64_t *hi, size_t n, size_t *idx)
{
	std::vector<Seq> v(n);
	for (size_t i = 0; i < n; i++)
		v[i] = Seq{ hi[i], i };
	std::sort(v.begin(), v.end(), [](const Seq &a, const Seq &b) { return a.hi < b.hi; });
	for (size_t i = 0; i < n; i++)
		idx[i] = v[i].idx;
}

// McIlroy's adversary ("A Killer Adversary for Quicksort", 1999): values
// are frozen only when a comparison needs them, the pivot candidate ("gas")
// last, so every partition is as lopsided as the pivot rule allows and the
// depth limit hands the rest to heapsort.  Writes n end addresses (distinct
// multiples of 16, plus ties) into hi.
extern "C" void line_order_killer(size_t n, uint64_t *hi)
{
	const size_t gas = n;
	std::vector<size_t> val(n, gas), ptr(n);
	size_t nsolid = 0, candidate = 0;
	for (size_t i = 0; i < n; i++)
		ptr[i] = i;
	auto freeze = [&](size_t x) { val[x] = nsolid++; };
	std::sort(ptr.begin(), ptr.end(), [&](size_t x, size_t y) {
		if (val[x] == gas && val[y] == gas)
			freeze(x == candidate ? x : y);
		if (val[x] == gas)
			candidate = x;
		else if (val[y] == gas)
			candidate = y;
		return val[x] < val[y];
	});
	for (size_t i = 0; i < n; i++)
		hi[i] = 0x1000 + 16 * (uint64_t)(val[i] == gas ? nsolid : val[i] / 2);
}
