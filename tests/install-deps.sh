#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-deps.sh: install, with apt-get, every Debian 12 package that
# building symdb and running all of its tests needs.  The one list of
# dependencies: tests/setup.sh and .ci/run both call this.  Runs apt-get
# directly as root, through sudo otherwise.
set -euo pipefail
packages=(
	# build
	cmake make gcc g++ pkg-config
	liblmdb-dev libdwarf-dev libxxhash-dev liblz4-dev libelf-dev zlib1g-dev libdeflate-dev libzstd-dev
	llvm-14-dev # libLLVMDemangle: symdb demangles exactly like llvm-symbolizer
	libseccomp-dev # symdb-indexer's sandbox (linked into symdb-indexer only)
	libmicrohttpd-dev libjson-c-dev # symdb serve: the HTTP server and the JSON parser (the CLI only)
	protobuf-c-compiler libprotobuf-c-dev # symdb pprof: protoc-c and its runtime (the CLI only)
	golang-github-google-pprof-dev # profile.proto (compiled at build time); pprof for tests/profile
	libcurl4-openssl-dev libdebuginfod-dev # symdb-fetch: the only process on the network
	# tests: fixture compilers and linkers, the oracle, strip/objcopy
	clang clang-14 lld lld-14 llvm-14 binutils elfutils dwarfdump
	llvm-16 # the oracle for llvm-symbolizer 15+ syntax: BUILDID: and FILE: request lines
	gcc-multilib # -m32 (i386) fixtures: dwarf.fixtures_m32 runs instead of skipping
	python3 util-linux coreutils file
	strace # tests that watch system calls (the durability order, the sandbox's list)
	time # GNU time -f %M: a child's peak RSS without a python parent's pages (reliability.open_rss)
	linux-perf # cli.addr2line_perf: perf 6.1 driving symdb as addr2line
	curl wrk golang-go # the server's clients: README's curl and Go examples, the load benchmark
	nodejs # a real JIT writing perf maps (node --perf-basic-prof)
	chromium # headless: the flame graph SVGs rendered and their script run (tests/profile/svg_check.py)
	libgoogle-perftools-dev # gperftools' CPU profiler (libprofiler): tests/profile/pprof.sh
	debuginfod # tests/fleet: a real debuginfod server on loopback
	nginx # tests/fleet: a real static server over a tree from `symdb export --tree` (README's config)
	# real binaries and separate debug files used by the oracle tests
	libc6-dbg libstdc++6-12-dbg libpython3.11 python3.11-dbg libpython3.11-dbg
)
sudo=()
[[ $(id -u) == 0 ]] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${packages[@]}"
