# SPDX-License-Identifier: MIT
#
# aliases.sh: sourced by the perf tests.  profile_aliases BUILDIDS OUT
# writes OUT, the lines "IMAGE ADDRESS NAME" that perf_compare.py --aliases
# reads: the function symbols (aliases: several at one address) of every
# image of BUILDIDS (`perf buildid-list` output) that has a file, read from
# its debug file under /usr/lib/debug when it has one, as both perf and
# symdb read those; a versioned name (`read@@GLIBC_2.2.5`) also bare.
profile_aliases() {
	local bid path f t
	while read -r bid path; do
		[[ $path == /* && -f $path ]] || continue
		f=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
		[[ -f $f ]] || f=$path
		for t in -s --dyn-syms; do readelf -W "$t" "$f" 2>/dev/null; done |
			awk -v img="$path" '$4 == "FUNC" && $7 != "UND" && $2 ~ /^[0-9a-f]+$/ && $8 != "" {
				print img, $2, $8; if (sub(/@.*/, "", $8)) print img, $2, $8 }'
	done <"$1" >"$2"
}
