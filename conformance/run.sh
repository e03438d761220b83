#!/usr/bin/env bash
# Run the MCP conformance suite's client scenarios against rein (through adapter.py) and
# print one line per scenario: PASS or FAIL. Needs `npm ci` here first (it brings the
# suite and Node 22), and a built rein (target/debug/rein, or $REIN_BIN).
# Usage: conformance/run.sh [SCENARIO...]   (default: every scenario rein is measured on)
set -u
here="$(cd "$(dirname "$0")" && pwd)"
export PATH="$here/node_modules/.bin:$PATH"
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
    scenarios=(initialize tools_call sse-retry elicitation-sep1034-client-defaults
        auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
        auth/basic-cimd auth/scope-from-www-authenticate auth/scope-from-scopes-supported
        auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
        auth/token-endpoint-auth-basic auth/token-endpoint-auth-post
        auth/token-endpoint-auth-none auth/pre-registration
        auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback)
fi
failed=0
passed=0
for scenario in "${scenarios[@]}"; do
    log="$(mktemp)"
    if conformance client --command "python3 $here/adapter.py" --scenario "$scenario" >"$log" 2>&1; then
        echo "PASS $scenario"
        passed=$((passed + 1))
    else
        echo "FAIL $scenario"
        grep -E "FAILURE|WARNING|✗|timed out|Client exited" "$log" | head -5 | sed 's/^/    /'
        failed=$((failed + 1))
    fi
    [ -n "${KEEP_LOGS:-}" ] && cp "$log" "${KEEP_LOGS}/$(echo "$scenario" | tr / _).log"
    rm -f "$log"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
