-- wrk script for scripts/server-bench.sh: every request POSTs the attachToTangle body in the
-- file named by CURLPOW_BENCH_BODY, with IRI's headers.
local f = assert(io.open(os.getenv("CURLPOW_BENCH_BODY"), "r"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-IOTA-API-Version"] = "1"
