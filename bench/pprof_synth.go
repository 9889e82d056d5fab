// SPDX-License-Identifier: MIT
//
// pprof_synth: an unsymbolized pprof profile of one real binary for
// bench/pprof_bench.sh, written with pprof's own profile package
// (golang-github-google-pprof-dev): -samples samples, each a stack of 4 to
// 2*-depth-4 locations drawn (Zipf, like the hot/cold skew of a real
// profile) from -locs distinct addresses spread uniformly over the file
// range [-textlo, -texthi) of the binary's executable segment, mapped at
// -start with file offset -offset.  Fixed seed: the same arguments give the
// same profile.
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"

	"github.com/google/pprof/profile"
)

func main() {
	file := flag.String("file", "", "the binary the mapping names")
	buildID := flag.String("buildid", "", "its build-id (hex)")
	start := flag.Uint64("start", 0x7f0000000000, "runtime start of the mapping")
	limit := flag.Uint64("limit", 0, "runtime end of the mapping")
	offset := flag.Uint64("offset", 0, "file offset of the mapping")
	textlo := flag.Uint64("textlo", 0, "first file offset of code")
	texthi := flag.Uint64("texthi", 0, "end file offset of code")
	nlocs := flag.Int("locs", 100000, "distinct locations")
	nsamples := flag.Int("samples", 1000000, "samples")
	depth := flag.Int("depth", 10, "mean stack depth")
	out := flag.String("o", "", "output file")
	flag.Parse()
	if *file == "" || *out == "" || *texthi <= *textlo || *limit <= *start {
		fmt.Fprintln(os.Stderr, "pprof_synth: -file, -o, -start < -limit, -textlo < -texthi needed")
		os.Exit(2)
	}
	r := rand.New(rand.NewSource(1))
	m := &profile.Mapping{ID: 1, Start: *start, Limit: *limit, Offset: *offset, File: *file,
		BuildID: *buildID}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"},
			{Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10000000,
		Mapping:    []*profile.Mapping{m},
	}
	seen := map[uint64]bool{}
	for len(p.Location) < *nlocs {
		off := *textlo + uint64(r.Int63n(int64(*texthi-*textlo)))
		addr := *start + off - *offset
		if seen[addr] {
			continue
		}
		seen[addr] = true
		p.Location = append(p.Location, &profile.Location{ID: uint64(len(p.Location)) + 1,
			Mapping: m, Address: addr})
	}
	z := rand.NewZipf(r, 1.1, 8, uint64(*nlocs-1))
	for i := 0; i < *nsamples; i++ {
		n := 4 + r.Intn(2**depth-7)
		s := &profile.Sample{Value: []int64{1, 10000000}}
		for j := 0; j < n; j++ {
			s.Location = append(s.Location, p.Location[z.Uint64()])
		}
		p.Sample = append(p.Sample, s)
	}
	f, err := os.Create(*out)
	if err == nil {
		err = p.Write(f)
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
