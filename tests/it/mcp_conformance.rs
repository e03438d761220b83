//! The MCP conformance suite's client scenarios against the real binary
//! (`conformance/run.sh`: the suite from npm runs `conformance/adapter.py`, which gives
//! rein the scenario's server as an HTTP MCP server, logs in for the auth scenarios and
//! has a scripted model call the scenario's tool). The scenarios rein passes are listed
//! here; a scenario that stops passing fails the test. It needs `npm ci` in
//! `conformance/` (the suite and Node 22) and python3; where they are missing the test
//! says so and passes, unless `REIN_CONFORMANCE=1` (set by `.ci/run`).

use std::path::Path;
use std::process::Command;

/// What rein passes today (see TESTING.md for the table and what fails).
const PASSING: &[&str] = &[
    "initialize",
    "tools_call",
    "sse-retry",
    "elicitation-sep1034-client-defaults",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/2025-03-26-oauth-metadata-backcompat",
];

#[test]
fn the_conformance_scenarios_rein_passes_still_pass() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let suite = dir.join("node_modules/.bin/conformance");
    let python = Command::new("python3").arg("--version").output().is_ok();
    if !suite.exists() || !python {
        assert!(
            std::env::var("REIN_CONFORMANCE").as_deref() != Ok("1"),
            "REIN_CONFORMANCE=1 but the suite ({}) or python3 is missing",
            suite.display()
        );
        eprintln!("skipped: the conformance suite is not installed (cd conformance && npm ci)");
        return;
    }
    let out = Command::new(dir.join("run.sh"))
        .args(PASSING)
        .env("REIN_BIN", env!("CARGO_BIN_EXE_rein"))
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for scenario in PASSING {
        assert!(report.contains(&format!("PASS {scenario}\n")), "{report}");
    }
}
