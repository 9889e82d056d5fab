// SPDX-License-Identifier: MIT
//
// pprof_craft: variants of a profile for tests/profile/pprof.sh, written
// with pprof's own profile package (golang-github-google-pprof-dev):
//
//	dup IN OUT      every location twice (a copy with a new id and the same
//	                mapping and address) and every sample again over the
//	                copies; prints the number of distinct (mapping, address)
//	presym IN OUT   the first location of the first mapping gets a Line of a
//	                function "keep_me" (already symbolized)
//	badid IN OUT    the mapping whose file ends in ARG gets another build-id
//	                (a file that is not the profiled build); ARG in $CRAFT_FILE
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/google/pprof/profile"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: pprof_craft dup|presym|badid IN OUT")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p, err := profile.Parse(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	switch os.Args[1] {
	case "dup":
		dup(p)
	case "presym":
		fn := &profile.Function{ID: uint64(len(p.Function)) + 1, Name: "keep_me", SystemName: "keep_me"}
		p.Function = append(p.Function, fn)
		p.Location[0].Line = []profile.Line{{Function: fn, Line: 1}}
	case "badid":
		for _, m := range p.Mapping {
			if strings.HasSuffix(m.File, os.Getenv("CRAFT_FILE")) {
				m.BuildID = "00112233445566778899aabbccddeeff00112233"
			}
		}
	}
	out, err := os.Create(os.Args[3])
	if err == nil {
		err = p.Write(out)
	}
	if err == nil {
		err = out.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func dup(p *profile.Profile) {
	type key struct {
		m    uint64
		addr uint64
	}
	distinct := map[key]bool{}
	copies := map[*profile.Location]*profile.Location{}
	next := uint64(0)
	for _, l := range p.Location {
		if l.ID > next {
			next = l.ID
		}
	}
	for _, l := range append([]*profile.Location(nil), p.Location...) {
		next++
		c := *l
		c.ID = next
		copies[l] = &c
		p.Location = append(p.Location, &c)
		distinct[key{l.Mapping.ID, l.Address}] = true
	}
	for _, s := range append([]*profile.Sample(nil), p.Sample...) {
		c := *s
		c.Location = nil
		for _, l := range s.Location {
			c.Location = append(c.Location, copies[l])
		}
		p.Sample = append(p.Sample, &c)
	}
	fmt.Println(len(distinct))
}
