#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# llvm_symbolizer.sh: symdb run under the name llvm-symbolizer takes
# llvm-symbolizer-14's command line.  For every option of LLVM 14 in every
# spelling (--x=v, --x v, -x v, -xv, grouped letters, aliases, hidden
# compatibility flags), for unknown and malformed options, for
# $LLVM_SYMBOLIZER_OPTS and for @FILE response files (quotes, backslashes,
# nesting, recursion, missing files, byte order marks), stdout, stderr and
# the exit status equal llvm-symbolizer-14's.  --help and --version have its
# shape: the same first lines, every option spelling its help lists, "LLVM
# version 14" (and symdb's own version) in --version.
# In the sanitizer lane (SYMDB_TEST_SANITIZED, set by CMake) each case runs
# the personality alone, which must answer without a crash or a sanitizer
# report: the plain lane compared it with llvm-symbolizer-14, and each of
# the ~400 cases would otherwise start llvm-symbolizer-14 too (0.1 s of CPU).
source "$(dirname "$0")/lib.sh"

cpp=$BIN/cpp_g++_O2_rdyn.full
c=$BIN/c_gcc_O2_nopie.full
run "$SYMDB" build "$cpp" "$c" # into $SYMDB_DIR, the personality's database
expect_ok "build"

mkdir -p "$SCRATCH/bin" "$SCRATCH/w"
ls_bin=$SCRATCH/bin/llvm-symbolizer
ln -s "$SYMDB" "$ls_bin"
ln -s "$SYMDB" "$SCRATCH/bin/llvm-symbolizer-14"
cd "$SCRATCH/w" # response files are found relative to the current directory

# Addresses: function starts, and a few bytes into each (inlined frames).
mapfile -t syms < <(llvm-nm-14 --defined-only "$cpp" | awk '$2 ~ /^[tT]$/ { print $1 }' | sort -u | head -12)
addrs=()
for s in "${syms[@]}"; do
	addrs+=("0x$s" "$(printf '0x%x' $((16#$s + 9)))")
done
a1=${addrs[2]}
a2=${addrs[5]}
printf '%s\n' "${addrs[@]}" "DATA ${addrs[0]}" "junk" >"$SCRATCH/in"

n=0
# same DESC ARGS...: the personality == llvm-symbolizer-14 (stdout, stderr,
# exit status), stdin from $SCRATCH/in.  IN=FILE overrides the input.
same() {
	local what=$1 in=${IN:-$SCRATCH/in} erc
	shift
	if sanitized; then
		set +e
		"$ls_bin" "$@" <"$in" >"$OUT" 2>"$ERR"
		RC=$?
		set -e
		no_crash "$what"
		n=$((n + 1))
		return
	fi
	set +e
	llvm-symbolizer-14 "$@" <"$in" >"$SCRATCH/expect.out" 2>"$SCRATCH/expect.err"
	erc=$?
	"$ls_bin" "$@" <"$in" >"$OUT" 2>"$ERR"
	RC=$?
	set -e
	no_crash "$what"
	cmp -s "$OUT" "$SCRATCH/expect.out" ||
		fail "$what: stdout differs from llvm-symbolizer-14 ($(diff "$SCRATCH/expect.out" "$OUT" | head -3 | tr '\n' ' '))"
	cmp -s "$ERR" "$SCRATCH/expect.err" ||
		fail "$what: stderr differs: expected '$(head -c 300 "$SCRATCH/expect.err")'"
	((RC == erc)) || fail "$what: exit $RC, llvm-symbolizer-14 exits $erc"
	n=$((n + 1))
}

# Every option llvm-symbolizer-14 knows, in each of its spellings.
for o in --addresses -a --print-address --basenames -s --relativenames "--basenames --relativenames" \
	"--relativenames -s" --demangle -C -demangle=true --no-demangle -demangle=false \
	"--no-demangle -C" "-C --no-demangle" --dia --functions -f --functions=none --functions=short \
	--functions=linkage -f=none -f=short "--functions=none -f" "-f --functions=none" \
	--functions=bogus --inlines -i --inlining --inlining=true --no-inlines --inlining=false \
	"--no-inlines -i" "-i --no-inlines" --output-style=LLVM --output-style=GNU --output-style=JSON \
	"--output-style GNU" "--output-style=JSON --output-style=GNU" --output-style=bogus \
	--output-style=json --output-style=atos --pretty-print -p "-p -a" --relative-address \
	--untag-addresses --no-untag-addresses --use-symbol-table=true --verbose "--verbose -p" \
	--adjust-vma=0 "--adjust-vma 0x0" --adjust-vma=0b0 --adjust-vma=0o0 --adjust-vma=00 \
	--default-arch=x86_64 "--default-arch x86_64" --debug-file-directory=/nonexistent \
	"--debug-file-directory /nonexistent" --dwp=/nonexistent "--dwp /nonexistent" \
	--fallback-debug-path=/nonexistent "--fallback-debug-path /nonexistent" \
	--dsym-hint=x.dSYM "--dsym-hint x.dSYM" --dsym-hint=x --dsym-hint=x.dSYM/ "--dsym-hint=a --dsym-hint=b" \
	--print-source-context-lines=0 "--print-source-context-lines -2" -apiCs -aCp -pa -fi \
	"-ia -Cs" "-sapf --no-inlines"; do
	# shellcheck disable=SC2086 # o is a list of words
	same "options $o" --obj "$cpp" $o
	# shellcheck disable=SC2086
	IN=/dev/null same "options $o (arguments)" --obj "$cpp" $o "$a1" "$a2" junk
done

# The object option's spellings, and the per-line module protocol.
for o in "--obj=$cpp" "--obj $cpp" "--exe=$cpp" "--exe $cpp" "-e $cpp" "-e$cpp" "-e=$cpp" \
	"-ae $cpp" "-ae$cpp" "--obj=$c --obj=$cpp"; do
	# shellcheck disable=SC2086
	IN=/dev/null same "object $o" $o "$a1" "$a2"
done
printf '%s %s\n"%s" %s\n' "$cpp" "$a1" "$cpp" "$a2" >"$SCRATCH/multi"
IN=$SCRATCH/multi same "module per line"
IN=$SCRATCH/multi same "module per line -a -p" -a -p
IN=/dev/null same "addresses after --adjust-vma" --obj "$cpp" --adjust-vma=0x10 \
	"$(printf '0x%x' $((a1 + 16)))"

# What llvm-symbolizer-14 rejects, and the words it says it with.
for o in --bogus --inlinez --functins --verbos --addreses "--ob=x" "--output-styl=JSON" --dem \
	--demangle=false -demangle -demangle=fals --inlining=tru --use-symbol-table \
	--use-symbol-table=false --print-address=1 --version=1 -Z -aZi -Cx -C=x -a=x -i=x -Ci=x -Z=x \
	-p= -C- -- "-- $a1" -obj=x -functions --HELP --Help -H -V --help-hidden \
	--debuginfod --filter-markup --color --skip-line-zero --cache-size=1 --use-native-pdb-reader \
	"--help --bogus" "--version -Q" \
	--adjust-vma=zz "--adjust-vma zz" --adjust-vma=-1 --adjust-vma= --adjust-vma=0x \
	--adjust-vma=0x10000000000000000 --print-source-context-lines=x \
	--print-source-context-lines=4294967295 "--print-source-context-lines 2147483648" \
	"--adjust-vma=x --print-source-context-lines=y" "--print-source-context-lines=y --adjust-vma=x" \
	"--dsym-hint=x --adjust-vma=q"; do
	# shellcheck disable=SC2086
	IN=/dev/null same "rejected $o" --obj "$cpp" $o "$a1"
done

# An option that needs a value, last (the value would be the address).
for o in --obj -e --exe --adjust-vma --dwp "-e=x -e" "--bogus --obj" "-ae" "--dsym-hint"; do
	# shellcheck disable=SC2086
	IN=/dev/null same "missing value $o" --obj "$cpp" "$a1" $o
done

# Help and version: no error even with other options; -h and -v are theirs.
for o in "--help" "-h" "-ah" "--version" "-v" "-av" "--version --help" "--help --obj=/nonexistent" \
	"--adjust-vma=x --help" "--dsym-hint=x -v"; do
	set +e
	# shellcheck disable=SC2086
	llvm-symbolizer-14 $o </dev/null >"$SCRATCH/expect.out" 2>"$SCRATCH/expect.err"
	erc=$?
	# shellcheck disable=SC2086
	run "$ls_bin" $o
	set -e
	expect_ok "$o"
	((erc == 0)) || fail "$o: llvm-symbolizer-14 exits $erc"
	[[ ! -s $ERR ]] || fail "$o: stderr: $(cat "$ERR")"
	# the same kind of text: both help, or both version
	[[ $(head -1 "$OUT") == "$(head -1 "$SCRATCH/expect.out")" ]] ||
		fail "$o: first line '$(head -1 "$OUT")', llvm-symbolizer-14 prints '$(head -1 "$SCRATCH/expect.out")'"
	n=$((n + 1))
done
llvm-symbolizer-14 --help >"$SCRATCH/help.llvm"
"$ls_bin" --help >"$SCRATCH/help.symdb"
[[ $(head -5 "$SCRATCH/help.symdb") == "$(head -5 "$SCRATCH/help.llvm")" ]] ||
	fail "--help: the first lines differ from llvm-symbolizer-14's"
[[ $(tail -2 "$SCRATCH/help.symdb") == "$(tail -2 "$SCRATCH/help.llvm")" ]] ||
	fail "--help: the last lines differ from llvm-symbolizer-14's"
# every spelling it lists (the first column), in the same order
grep -o '^  -[^ ]*\( <[a-z]*>\)\?' "$SCRATCH/help.llvm" >"$SCRATCH/spell.llvm"
grep -o '^  -[^ ]*\( <[a-z]*>\)\?' "$SCRATCH/help.symdb" >"$SCRATCH/spell.symdb"
missing=$(grep -vxFf "$SCRATCH/spell.symdb" "$SCRATCH/spell.llvm" || true)
[[ -z $missing ]] || fail "--help does not list: $missing"
[[ $(head -"$(wc -l <"$SCRATCH/spell.llvm")" "$SCRATCH/spell.symdb") == "$(cat "$SCRATCH/spell.llvm")" ]] ||
	fail "--help lists llvm-symbolizer-14's options in another order"
grep -q "^llvm-symbolizer Mach-O Specific Options:$" "$SCRATCH/help.symdb" ||
	fail "--help has no Mach-O group"
"$ls_bin" --version >"$SCRATCH/version"
[[ $(head -1 "$SCRATCH/version") == llvm-symbolizer ]] || fail "--version: first line is not the tool name"
grep -q 'LLVM version 14\.0\.' "$SCRATCH/version" || fail "--version does not say LLVM version 14"
sv=$("$SYMDB" --version | awk '{ print $2 }')
grep -qF "symdb $sv" "$SCRATCH/version" || fail "--version does not name symdb $sv"
run "$SCRATCH/bin/llvm-symbolizer-14" --version
expect_ok "llvm-symbolizer-14 --version"
[[ $(head -1 "$OUT") == llvm-symbolizer ]] || fail "run as llvm-symbolizer-14: not the personality"

# $LLVM_SYMBOLIZER_OPTS: its words come first, the command line overrides.
for env in "-a" "--obj=$c -p" "'--output-style' JSON" "--no-inlines" "--bogus" "-ae$c"; do
	LLVM_SYMBOLIZER_OPTS=$env IN=/dev/null same "LLVM_SYMBOLIZER_OPTS=$env" --obj "$cpp" "$a1" -i
done

# Response files.
printf -- '-a "%s junk" %s\\ tail '"'"'x y'"'"' @nest.rsp\n' "$a1" "$a2" >top.rsp
printf -- '--pretty-print @top.rsp\n%s\n' "$a1" >nest.rsp
printf -- '@self.rsp %s' "$a1" >self.rsp
printf '\xef\xbb\xbf-p %s\n' "$a1" >bom8.rsp
printf -- '-p %s' "$a1" | iconv -f UTF-8 -t UTF-16 >bom16.rsp
printf 'x\\' >backslash.rsp
printf '"unterminated %s' "$a1" >unterm.rsp
printf '"" %s "" '"''"' \\"q\\" '"'"'a\\'"'"'b'"'"'\n' "$a1" >quotes.rsp
printf -- '-e\n' >eonly.rsp
printf -- '--obj=%s\n\t-a\r\n%s\n' "$cpp" "$a1" >crlf.rsp
printf -- '-a\n' >a.rsp
: >empty.rsp
mkdir -p sub
printf -- '-p @a.rsp\n' >sub/rel.rsp
for r in "@top.rsp" "@nest.rsp" "@self.rsp" "@bom8.rsp" "@bom16.rsp" "@backslash.rsp" "@unterm.rsp" \
	"@quotes.rsp" "@empty.rsp" "@missing.rsp" "@" "@sub" "@sub/rel.rsp" "@$SCRATCH/w/a.rsp" \
	"@a.rsp @a.rsp" "-@a.rsp"; do
	# shellcheck disable=SC2086
	IN=/dev/null same "response file $r" --obj "$cpp" $r "$a2"
done
IN=/dev/null same "response file @eonly.rsp" @eonly.rsp "$cpp" "$a1"
IN=/dev/null same "response file @crlf.rsp" @crlf.rsp
IN=/dev/null same "response file names the object" @crlf.rsp --obj "$c"
LLVM_SYMBOLIZER_OPTS="@a.rsp" IN=/dev/null same "response file in LLVM_SYMBOLIZER_OPTS" --obj "$cpp" "$a1"

# `symdb query` parses the same way, with symdb's words (exit 2) and "--".
IN=/dev/null
run "$SYMDB" query --obj "$cpp" --frobnicate "$a1"
expect_error "query --frobnicate" "symdb: query: unknown option '--frobnicate' (see 'symdb help query')"
((RC == 2)) || fail "query --frobnicate: exit $RC, expected 2"
run "$SYMDB" query --obj "$cpp" --inlinez "$a1"
expect_error "query --inlinez" "did you mean '--inlines'?"
run "$SYMDB" query "$a1" --obj
expect_error "query --obj (no value)" "symdb: option '--obj' needs a value"
((RC == 2)) || fail "query --obj with no value: exit $RC, expected 2"
printf '%s\n-a\n' "$a1" | llvm_query "$cpp" -a -p --functions=short >"$SCRATCH/expect"
run "$SYMDB" query @a.rsp -pe "$cpp" -f=short -- "$a1" -a
expect_ok "query @FILE, grouped, --"
cmp -s "$OUT" "$SCRATCH/expect" || fail "query @a.rsp -pe FILE -f=short -- ADDR -a: output differs"

# FRAME requests on gcc and clang -O0 programs (locals in the DWARF):
# symdb stores no variables and answers with exactly llvm-symbolizer-14's
# empty answer, that of an address without a subprogram
# (tests/KNOWN_DIFFERENCES.md class 7).
printf 'int f(int a) { int b = a * 2; return b + 1; }\nint main(int c, char **v) { (void)v; return f(c); }\n' >"$SCRATCH/frame.c"
for cc in gcc clang-14; do
	command -v "$cc" >/dev/null || { skip_part "$cc not found: FRAME on its -O0 output"; continue; }
	fb=$SCRATCH/frame_$cc
	"$cc" -g -O0 -o "$fb" "$SCRATCH/frame.c" || fail "$cc -g -O0 failed"
	run "$SYMDB" build "$fb"
	expect_ok "build $fb"
	fa=$(printf '0x%x' "0x$(llvm-nm-14 "$fb" | awk '$3 == "f" { print $1 }')")
	for style in LLVM GNU JSON; do
		for o in "" "-a" "-p -a"; do
			# shellcheck disable=SC2086
			llvm-symbolizer-14 --obj "$fb" --output-style=$style $o "FRAME 0x0" |
				sed "s/\"0x0\"/\"$fa\"/; s/^0x0/$fa/" >"$SCRATCH/expect"
			# shellcheck disable=SC2086
			run "$ls_bin" --obj "$fb" --output-style=$style $o "FRAME $fa"
			expect_ok "FRAME $cc $style $o"
			cmp -s "$OUT" "$SCRATCH/expect" ||
				fail "FRAME $cc $style $o: not llvm-symbolizer-14's empty answer: $(cat "$OUT")"
			n=$((n + 1))
		done
	done
done

if sanitized; then
	note "$n cases of the personality alone (sanitizer lane), no crash, no report"
else
	note "$n cases equal to llvm-symbolizer-14"
fi
