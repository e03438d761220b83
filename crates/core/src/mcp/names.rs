//! The names the model sees for MCP tools: `mcp__SERVER__TOOL`.
//!
//! Providers accept function names of `[A-Za-z0-9_-]` up to 64 characters (OpenAI's limit,
//! the tightest), so every other character becomes `_`. A name that is still too long, or
//! that two different tools would share after sanitising (`a.b` and `a_b`), gets a suffix
//! `_` + 12 hex digits of a hash of the raw server and tool names, after a prefix cut to
//! fit: every member of a clash is suffixed, so a name does not depend on which tool was
//! listed first. The raw names stay with each tool for the call (Codex does the same).

/// The longest function name providers accept.
pub const MAX_NAME_LEN: usize = 64;
const HASH_HEX: usize = 12;

/// The qualified name of each `(server, tool)` pair, in the same order; all distinct.
pub fn qualify(tools: &[(&str, &str)]) -> Vec<String> {
    let plain: Vec<String> = tools
        .iter()
        .map(|(server, tool)| sanitize(&format!("mcp__{server}__{tool}")))
        .collect();
    let mut names: Vec<String> = plain
        .iter()
        .zip(tools)
        .map(|(name, (server, tool))| {
            let shared = plain.iter().filter(|n| *n == name).count() > 1;
            if shared || name.len() > MAX_NAME_LEN {
                hashed(name, server, tool, 0)
            } else {
                name.clone()
            }
        })
        .collect();
    // A hashed name could still meet a plain one (or, astronomically rarely, another hash):
    // rehash the later one with an attempt number until every name is unique.
    for i in 0..names.len() {
        let mut attempt = 1;
        while names[..i].contains(&names[i]) {
            let (server, tool) = tools[i];
            names[i] = hashed(&plain[i], server, tool, attempt);
            attempt += 1;
        }
    }
    names
}

/// Every character outside `[A-Za-z0-9_-]` becomes `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn hashed(name: &str, server: &str, tool: &str, attempt: u32) -> String {
    let mut identity = format!("{server}\0{tool}");
    if attempt > 0 {
        identity.push_str(&format!("\0{attempt}"));
    }
    let hash = format!("{:016x}", fnv1a(identity.as_bytes()));
    let keep = MAX_NAME_LEN - HASH_HEX - 1;
    // `name` is ASCII after sanitising, so any byte index is a character boundary.
    let prefix = &name[..name.len().min(keep)];
    format!("{prefix}_{}", &hash[..HASH_HEX])
}

/// 64-bit FNV-1a: stable across runs and platforms (a name must not change between
/// sessions), and enough to tell a handful of tools apart.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_kept_and_others_sanitised() {
        assert_eq!(
            qualify(&[
                ("everything", "echo"),
                ("fs", "read.file"),
                ("t", "get time!")
            ]),
            [
                "mcp__everything__echo",
                "mcp__fs__read_file",
                "mcp__t__get_time_"
            ]
        );
    }

    #[test]
    fn long_names_are_cut_with_a_hash_and_stay_within_the_limit() {
        let tool = "a_really_long_tool_name_that_goes_on_and_on_for_quite_a_while";
        let names = qualify(&[("server", tool), ("server", &format!("{tool}_2"))]);
        for name in &names {
            assert_eq!(name.len(), MAX_NAME_LEN, "{name}");
            assert!(name.starts_with("mcp__server__a_really_long_tool_name"));
            assert!(name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        }
        assert_ne!(names[0], names[1]);
        // Deterministic: the same tools give the same names in any order.
        let again = qualify(&[("server", &format!("{tool}_2")), ("server", tool)]);
        assert_eq!(again, [names[1].clone(), names[0].clone()]);
    }

    #[test]
    fn a_clash_after_sanitising_suffixes_both_members() {
        let names = qualify(&[("s", "a.b"), ("s", "a_b"), ("s", "c")]);
        assert_ne!(names[0], names[1]);
        assert!(
            names[0].starts_with("mcp__s__a_b_") && names[0].len() == "mcp__s__a_b_".len() + 12
        );
        assert!(names[1].starts_with("mcp__s__a_b_"));
        assert_eq!(names[2], "mcp__s__c");
        // Server names clash too: `a-b`/`c` vs `a`/`b-c` are different tools.
        let names = qualify(&[("a__b", "c"), ("a", "b__c")]);
        assert_ne!(names[0], names[1]);
    }

    #[test]
    fn a_hashed_name_meeting_a_plain_one_is_rehashed() {
        let long = "x".repeat(80);
        let first = qualify(&[("s", &long)])[0].clone();
        // A tool whose plain name happens to be that hashed name.
        let tool = first.strip_prefix("mcp__s__").unwrap().to_string();
        let names = qualify(&[("s", &tool), ("s", &long)]);
        assert_eq!(names[0], first);
        assert_ne!(names[1], first);
        assert_eq!(names[1].len(), MAX_NAME_LEN);
    }
}
