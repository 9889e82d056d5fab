-- SPDX-License-Identifier: MIT
-- serve_wrk.lua: wrk's request generator for the `symdb serve` load
-- benchmark (bench/serve_load.sh), for JSON and binary batches alike:
--
--   wrk -t2 -c4 -d10s --latency -s bench/serve_wrk.lua http://127.0.0.1:PORT \
--       -- CONTENT-TYPE BODY-FILE...
--
-- Every wrk thread reads the body files once (binary-safe) and POSTs them
-- to /v1/symbolize round robin, each thread starting at another file, on
-- keep-alive connections.  wrk's own figures (requests/s, latency
-- percentiles with --latency, non-2xx answers) are the result; the answers
-- are read and dropped (no response() callback, so wrk does not parse
-- bodies).
local bodies = {}
local next_body = 1
local path = "/v1/symbolize"
local threads_made = 0 -- in the setup state only

function setup(thread)
	thread:set("tid", threads_made)
	threads_made = threads_made + 1
end

function init(args)
	if #args < 2 then
		error("usage: wrk ... -s serve_wrk.lua URL -- CONTENT-TYPE BODY-FILE...")
	end
	wrk.method = "POST"
	wrk.headers["Content-Type"] = args[1]
	for i = 2, #args do
		local f = assert(io.open(args[i], "rb"))
		bodies[#bodies + 1] = f:read("*a")
		f:close()
	end
	next_body = (tid or 0) * 7 % #bodies + 1
end

function request()
	local body = bodies[next_body]
	next_body = next_body % #bodies + 1
	return wrk.format(nil, path, nil, body)
end
