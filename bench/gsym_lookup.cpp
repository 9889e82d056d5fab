// SPDX-License-Identifier: MIT
// gsym_lookup.cpp - the in-process peer of bench_resolve.c: LLVM 14's GSYM
// reader (llvm::gsym::GsymReader::openFile + lookup) over the same address
// files, timing only the lookup loop.  Each lookup's LookupResult is consumed
// the way bench_resolve consumes symdb frames (line, name and file pointers
// of every SourceLocation), so both loops do the same visible work: full
// inline chain + file:line, names as pointers, no demangling, no printing.
//
//   gsym_lookup time FILE.gsym ADDRFILE [RUNS [WARMUP]]
//                                                median/min of RUNS (5) after a warm-up
//                                                pass over the first WARMUP addresses
//                                                (default all: it pages the file in)
//   gsym_lookup cg   FILE.gsym ADDRFILE          one pass in bench_gsym_loop, for
//                                                callgrind --toggle-collect
//
// Output: one "gsym key=value ..." line, like bench_resolve.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "llvm/DebugInfo/GSYM/GsymReader.h"
#include "llvm/DebugInfo/GSYM/LookupResult.h"
#include "llvm/Support/Error.h"

using llvm::gsym::GsymReader;

static std::vector<uint64_t> read_addrs(const char *path)
{
	std::vector<uint64_t> v;
	char line[128];
	FILE *f = std::fopen(path, "r");

	if (!f) {
		std::perror(path);
		std::exit(1);
	}
	while (std::fgets(line, sizeof line, f)) {
		char *end;
		uint64_t a = std::strtoull(line, &end, 0);
		if (end != line)
			v.push_back(a);
	}
	std::fclose(f);
	return v;
}

// The measured loop.  Misses (no function covers the address) come back as
// an llvm::Error, which must be consumed: that cost is GSYM's.
extern "C" __attribute__((noinline)) uint64_t bench_gsym_loop(const GsymReader *gr,
                                                               const uint64_t *a, size_t n,
                                                               size_t *found)
{
	uint64_t sum = 0;
	size_t ok = 0;

	for (size_t i = 0; i < n; i++) {
		auto r = gr->lookup(a[i]);
		if (!r) {
			llvm::consumeError(r.takeError());
			continue;
		}
		ok++;
		sum += r->Locations.size() ^ (uintptr_t)r->FuncName.data();
		for (const auto &l : r->Locations)
			sum += l.Line ^ (uintptr_t)l.Name.data() ^ (uintptr_t)l.Base.data();
	}
	*found = ok;
	return sum;
}

static double now_s()
{
	using namespace std::chrono;
	return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// This thread's CPU seconds: on a shared machine, less noisy than wall time.
static double cpu_s()
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	if (argc < 4 || (std::strcmp(argv[1], "time") && std::strcmp(argv[1], "cg"))) {
		std::fprintf(stderr, "usage: gsym_lookup time|cg FILE.gsym ADDRFILE [RUNS [WARMUP]]\n");
		return 2;
	}
	auto gr = GsymReader::openFile(argv[2]);
	if (!gr) {
		std::fprintf(stderr, "gsym_lookup: %s: %s\n", argv[2],
		             llvm::toString(gr.takeError()).c_str());
		return 1;
	}
	std::vector<uint64_t> a = read_addrs(argv[3]);
	bool sorted = std::is_sorted(a.begin(), a.end());
	size_t found = 0;
	size_t warm = a.size();
	if (argc > 5 && std::strtoull(argv[5], nullptr, 10) < warm)
		warm = std::strtoull(argv[5], nullptr, 10);
	uint64_t sum = bench_gsym_loop(&*gr, a.data(), warm, &found);

	if (!std::strcmp(argv[1], "cg")) {
		std::printf("gsym-cg n=%zu found=%zu checksum=%llx\n", a.size(), found,
		            (unsigned long long)sum);
		return 0;
	}
	int runs = argc > 4 ? std::atoi(argv[4]) : 5;
	if (runs < 1)
		runs = 1;
	std::vector<double> t, c;
	for (int i = 0; i < runs; i++) {
		double t0 = now_s(), c0 = cpu_s();
		sum += bench_gsym_loop(&*gr, a.data(), a.size(), &found);
		c.push_back(cpu_s() - c0);
		t.push_back(now_s() - t0);
	}
	double mn = *std::min_element(t.begin(), t.end());
	double med = median(t);
	std::printf("gsym file=%s n=%zu sorted=%d runs=%d median_s=%.6f min_s=%.6f "
	            "addr_per_s=%.0f ns_per_addr=%.2f cpu_median_s=%.6f found=%zu checksum=%llx\n",
	            argv[3], a.size(), sorted ? 1 : 0, runs, med, mn, (double)a.size() / med,
	            med * 1e9 / (double)a.size(), median(c), found, (unsigned long long)sum);
	return 0;
}
