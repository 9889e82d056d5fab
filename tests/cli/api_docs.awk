# SPDX-License-Identifier: MIT
#
# api_docs.awk: every SYMDB_API declaration of a public header has a /** ... */
# comment right above it with an @param for each parameter (by name), an
# @return unless it returns void, and an @note (the thread rule).  Prints one
# line per missing item as FILE:LINE: FUNCTION: WHAT; the caller fails on
# any output.  A comment that documents several declarations in a row counts
# for each of them.
# Split a parameter list at its top-level commas (a function pointer's own
# parameters stay in one piece) into out[1..n]; returns n.
function split_top(s, out,   n, i, c, depth, cur) {
	n = 0; depth = 0; cur = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "(") depth++
		else if (c == ")") depth--
		if (c == "," && depth == 0) { out[++n] = cur; cur = ""; continue }
		cur = cur c
	}
	out[++n] = cur
	return n
}
function reset_decl() { decl = ""; in_decl = 0 }
function check(   head, name, params, n, i, p, pname, ret) {
	head = decl
	sub(/^[ \t]*SYMDB_API[ \t]+/, "", head)
	if (!match(head, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
		printf "%s:%d: cannot parse: %s\n", FILENAME, decl_line, decl
		return
	}
	ret = substr(head, 1, RSTART - 1)
	name = substr(head, RSTART, RLENGTH - 1)
	sub(/[ \t]+$/, "", name)
	params = substr(head, RSTART + RLENGTH)
	sub(/\)[^)]*;[ \t]*$/, "", params)
	if (doc == "") {
		printf "%s:%d: %s: no /** */ comment above it\n", FILENAME, decl_line, name
		return
	}
	gsub(/[ \t]+/, " ", params)
	if (params != "void" && params != " void" && params != "") {
		n = split_top(params, p)
		for (i = 1; i <= n; i++) {
			pname = p[i]
			if (match(pname, /\([ \t]*\*[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*\)/)) {
				pname = substr(pname, RSTART + 1, RLENGTH - 2) # (*fn)(...)
				gsub(/[ \t*]/, "", pname)
			}
			sub(/\[[^]]*\][ \t]*$/, "", pname)
			sub(/[ \t]+$/, "", pname)
			if (!match(pname, /[A-Za-z_][A-Za-z0-9_]*$/)) {
				printf "%s:%d: %s: parameter %d has no name\n", FILENAME, decl_line, name, i
				continue
			}
			pname = substr(pname, RSTART, RLENGTH)
			if (doc !~ ("@param[ \t]+" pname "[ \t\n]"))
				printf "%s:%d: %s: no @param %s\n", FILENAME, decl_line, name, pname
		}
	}
	if (ret !~ /^[ \t]*void[ \t]*$/ && doc !~ /@return/)
		printf "%s:%d: %s: no @return\n", FILENAME, decl_line, name
	if (doc !~ /@note/)
		printf "%s:%d: %s: no @note (thread rule)\n", FILENAME, decl_line, name
}
FNR == 1 { doc = ""; in_doc = 0; reset_decl() }
in_decl {
	decl = decl " " $0
	if ($0 ~ /;/) { check(); reset_decl() }
	next
}
/^[ \t]*\/\*\*/ { in_doc = 1; cur = "" }
in_doc {
	cur = cur $0 "\n"
	if ($0 ~ /\*\//) { in_doc = 0; doc = cur }
	next
}
/^SYMDB_API/ {
	decl = $0; decl_line = FNR
	if ($0 ~ /;/) { check(); reset_decl() } else in_decl = 1
	next
}
/^[ \t]*$/ { next }
{ doc = "" }
