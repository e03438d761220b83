//! Seatbelt (macOS): the `sandbox-exec` profile that wraps a command, and the check that
//! `sandbox-exec` works here (it refuses to run inside another sandbox).
//!
//! The profile denies everything, then allows processes, reading any file, the services a
//! shell needs, and writing only the project, the extra writable paths, the standard devices
//! and the temp directories. A deny for the protected paths (`.git`, `.rein`, the steering
//! paths, which Seatbelt matches whether they exist or not) comes after, so it wins over
//! the allow; reading and writing the hidden credentials and the project's `.env` files is
//! denied last. The network is allowed only when the settings say so.

use std::path::{Path, PathBuf};

use super::{ProbeFailure, SandboxSettings};

pub(super) const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile for commands in `root`, with `protected` (from [`super::protected_paths`])
/// kept read-only, `private` folders (rein's data folder) neither readable nor writable
/// except the `shown` folders in them (this rein's spill folders), which are readable.
/// Paths are resolved as far as they exist (macOS reports `/private/var/...` for
/// `/var/...`, and Seatbelt matches the resolved path).
pub fn seatbelt_profile(
    root: &Path,
    settings: &SandboxSettings,
    protected: &[PathBuf],
    private: &[PathBuf],
    shown: &[PathBuf],
) -> String {
    let mut profile = String::from(
        "(version 1)\n\
         (deny default)\n\
         (allow process*)\n\
         (allow signal (target same-sandbox))\n\
         (allow file-read*)\n\
         (allow sysctl-read)\n\
         (allow mach-lookup)\n\
         (allow ipc-posix-shm)\n\
         (allow ipc-posix-sem)\n\
         (allow user-preference-read)\n",
    );
    if settings.network {
        profile.push_str("(allow network*)\n(allow system-socket)\n");
    }
    profile.push_str("(allow file-write*\n");
    profile.push_str(&format!("  (subpath {})\n", quote(&super::real_path(root))));
    for path in &settings.writable {
        profile.push_str(&format!("  (subpath {})\n", quote(&super::real_path(path))));
    }
    profile.push_str(
        "  (literal \"/dev/null\")\n\
         \x20 (literal \"/dev/zero\")\n\
         \x20 (literal \"/dev/stdout\")\n\
         \x20 (literal \"/dev/stderr\")\n\
         \x20 (subpath \"/dev/fd\")\n\
         \x20 (subpath \"/private/tmp\")\n\
         \x20 (subpath \"/private/var/folders\"))\n",
    );
    if !protected.is_empty() {
        profile.push_str("(deny file-write*");
        for path in protected {
            profile.push_str(&format!("\n  (subpath {})", quote(&super::real_path(path))));
        }
        profile.push_str(")\n");
    }
    // rein's own data: neither readable nor writable, but for this rein's spill folders
    // (a later rule wins in a profile).
    if !private.is_empty() {
        profile.push_str("(deny file-read* file-write*");
        for path in private {
            profile.push_str(&format!("\n  (subpath {})", quote(&super::real_path(path))));
        }
        profile.push_str(")\n");
        if !shown.is_empty() {
            profile.push_str("(allow file-read*");
            for path in shown {
                profile.push_str(&format!("\n  (subpath {})", quote(&super::real_path(path))));
            }
            profile.push_str(")\n");
        }
    }
    // Credentials no command needs (`sandbox.hide_secrets`): not readable at all.
    if !settings.hidden.is_empty() {
        profile.push_str("(deny file-read* file-write*");
        for path in &settings.hidden {
            profile.push_str(&format!("\n  (subpath {})", quote(&super::real_path(path))));
        }
        profile.push_str(")\n");
    }
    profile
}

/// A path as a profile string literal: in double quotes, with `\` and `"` escaped (and
/// control characters, which a path may hold too).
fn quote(path: &Path) -> String {
    let mut out = String::from("\"");
    for c in path.to_string_lossy().chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Run `sandbox-exec` once with a profile that allows everything, on `/usr/bin/true`.
pub(super) fn probe() -> Result<(), String> {
    if !Path::new(SANDBOX_EXEC).exists() {
        return Err(format!("{SANDBOX_EXEC} was not found"));
    }
    let mut cmd = std::process::Command::new(SANDBOX_EXEC);
    cmd.args(["-p", "(version 1) (allow default)", "/usr/bin/true"]);
    super::run_probe(cmd).map_err(|failure| match failure {
        ProbeFailure::Start(e) => format!("{SANDBOX_EXEC} could not be started: {e}"),
        ProbeFailure::Failed(line) => {
            format!("sandbox-exec cannot apply a profile here (is rein already sandboxed?): {line}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "(version 1)
(deny default)
(allow process*)
(allow signal (target same-sandbox))
(allow file-read*)
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-shm)
(allow ipc-posix-sem)
(allow user-preference-read)
";

    const DEVICES_AND_TEMP: &str = "  (literal \"/dev/null\")
  (literal \"/dev/zero\")
  (literal \"/dev/stdout\")
  (literal \"/dev/stderr\")
  (subpath \"/dev/fd\")
  (subpath \"/private/tmp\")
  (subpath \"/private/var/folders\"))
";

    #[test]
    fn the_whole_profile_without_network() {
        let root = Path::new("/Users/me/proj");
        let settings = SandboxSettings {
            writable: vec!["/Users/me/.cache".into()],
            ..SandboxSettings::default()
        };
        let protected = [root.join(".git"), root.join(".rein")];
        let profile = seatbelt_profile(root, &settings, &protected, &[], &[]);
        let expected = format!(
            "{HEAD}(allow file-write*
  (subpath \"/Users/me/proj\")
  (subpath \"/Users/me/.cache\")
{DEVICES_AND_TEMP}(deny file-write*
  (subpath \"/Users/me/proj/.git\")
  (subpath \"/Users/me/proj/.rein\"))
"
        );
        assert_eq!(profile, expected);
        assert!(!profile.contains("network"));
    }

    #[test]
    fn network_is_allowed_only_when_asked() {
        let root = Path::new("/Users/me/proj");
        let settings = SandboxSettings {
            network: true,
            ..SandboxSettings::default()
        };
        let profile = seatbelt_profile(root, &settings, &[], &[], &[]);
        assert_eq!(
            profile,
            format!(
                "{HEAD}(allow network*)\n(allow system-socket)\n(allow file-write*
  (subpath \"/Users/me/proj\")
{DEVICES_AND_TEMP}"
            )
        );
    }

    #[test]
    fn reins_data_is_denied_but_for_the_spill_folders_shown() {
        let root = Path::new("/Users/me/proj");
        let data = Path::new("/Users/me/Library/Application Support/rein");
        let spill = data.join("spill/42-1");
        let profile = seatbelt_profile(
            root,
            &SandboxSettings::default(),
            &[],
            &[data.to_path_buf()],
            std::slice::from_ref(&spill),
        );
        let deny = profile
            .find("(deny file-read* file-write*\n  (subpath \"/Users/me/Library/Application Support/rein\"))")
            .unwrap();
        let allow = profile
            .find("(allow file-read*\n  (subpath \"/Users/me/Library/Application Support/rein/spill/42-1\"))")
            .unwrap();
        assert!(deny < allow, "{profile}");
    }

    #[test]
    fn the_deny_comes_after_the_allow() {
        let root = Path::new("/Users/me/proj");
        let profile = seatbelt_profile(
            root,
            &SandboxSettings::default(),
            &[root.join(".git"), root.join(".rein")],
            &[],
            &[],
        );
        let allow = profile.find("(allow file-write*").unwrap();
        let deny = profile.find("(deny file-write*").unwrap();
        assert!(allow < deny);
        assert!(profile.ends_with("(subpath \"/Users/me/proj/.rein\"))\n"));
    }

    #[test]
    fn paths_are_escaped_for_the_string_syntax() {
        assert_eq!(
            quote(Path::new("/Users/me/a \"quoted\" \\ dir")),
            "\"/Users/me/a \\\"quoted\\\" \\\\ dir\""
        );
        assert_eq!(quote(Path::new("/x\ny\u{7}")), "\"/x\\ny\\x07\"");
        let root = Path::new("/Users/me/my \"proj\"");
        let profile = seatbelt_profile(
            root,
            &SandboxSettings::default(),
            &[root.join(".git")],
            &[],
            &[],
        );
        assert!(profile.contains("(subpath \"/Users/me/my \\\"proj\\\"\")\n"));
        assert!(profile.contains("(subpath \"/Users/me/my \\\"proj\\\"/.git\"))"));
    }
}
