//! The environment a command gets: rein's own, less every variable that would hand the
//! model a secret or slip code past the permission check.
//!
//! In: rein's variables when the command starts, the secrets rein knows (a [`CommandEnv`]
//! built from the config: the provider keys, and the other tokens the config names) and
//! the names the user or the project passes through (`tools.env_passthrough`). Out: the
//! names to remove. A variable goes when
//! - its **name** is rein's own (`REIN_*`, `OPENAI_*`) or secret-shaped ([`secret_name`]:
//!   `*_API_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`, `AWS_*`, `SSH_AUTH_SOCK`, …);
//! - its **value** is, or holds (when the secret is at least [`CONTAINED_MIN`] long), a
//!   secret rein knows, or looks like a credential itself ([`secret_value`]: a URL with a
//!   password, a token with a well-known prefix such as `ghp_`);
//! - it is `BASH_ENV` or `ENV`, files a shell sources before the command, unseen by the
//!   permission check.
//!
//! A name passed through keeps its variable against the name rules and every value rule
//! but one: a value that is, or holds, a provider key (the key in use or any other rein
//! knows of) still goes, so a project cannot hand the model the user's API key by naming
//! the variable that holds it. `BASH_ENV` and `ENV` cannot be passed through.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;

/// A known secret at least this long is also found inside a longer value
/// (`Authorization=Bearer sk-…`, `https://h/?key=…`); a shorter one only as the whole value.
pub const CONTAINED_MIN: usize = 16;

/// Found anywhere in a name (upper case): `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`,
/// `GOOGLE_APPLICATION_CREDENTIALS`, `AZURE_STORAGE_CONNECTION_STRING`.
const SECRET_PARTS: &[&str] = &[
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "APIKEY",
    "API_KEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
    "CONNECTION_STRING",
];

/// A word of a name (between `_`s) that makes it secret wherever it stands:
/// `GITHUB_TOKEN`, `ACTIONS_ID_TOKEN_REQUEST_URL`, `SSH_AUTH_SOCK`, `DOCKER_AUTH_CONFIG`. A
/// word ending in `TOKEN` counts too (`GHTOKEN`); `TOKENIZERS_PARALLELISM` does not.
const SECRET_WORDS: &[&str] = &["TOKEN", "TOKENS", "AUTH", "AUTHORIZATION"];

/// The last word of a name of two words or more: `STRIPE_KEY`, `DB_PASS`, `MYSQL_PWD`,
/// `GITLAB_PAT`, `SENTRY_DSN` (`PWD` itself, the working folder, is one word and stays).
const SECRET_ENDINGS: &[&str] = &["KEY", "KEYS", "PASS", "PWD", "PAT", "DSN", "CREDS"];

/// Whole families: every AWS variable (`AWS_SESSION_TOKEN`, `AWS_ACCESS_KEY_ID` and
/// their company), and rein's own settings.
const SECRET_PREFIXES: &[&str] = &["AWS_", "REIN_", "OPENAI_"];

/// Not secrets but access to them: the SSH and GPG agents' sockets (anyone with the
/// socket signs as you), a Kerberos ticket cache.
const SECRET_NAMES: &[&str] = &["SSH_AGENT_PID", "GPG_AGENT_INFO", "KRB5CCNAME"];

/// Prefixes of tokens that say what they are (GitHub, GitLab, Slack, OpenAI-style,
/// Stripe, Hugging Face, npm, AWS access key ids): a value made of one such token is a
/// secret under any name.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxr-",
    "sk-",
    "sk_live_",
    "rk_live_",
    "hf_",
    "npm_",
    "AKIA",
    "ASIA",
];

/// The shortest value a token prefix makes a secret.
const TOKEN_MIN: usize = 20;

/// Names that are never passed through: shell start-up files.
const SOURCED: &[&str] = &["BASH_ENV", "ENV"];

/// Whether a variable named `name` holds a secret by the look of its name (case does
/// not matter).
pub fn secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper.split('_').filter(|w| !w.is_empty()).collect();
    SECRET_PARTS.iter().any(|p| upper.contains(p))
        || words
            .iter()
            .any(|w| SECRET_WORDS.contains(w) || w.ends_with("TOKEN"))
        || (words.len() >= 2 && words.last().is_some_and(|w| SECRET_ENDINGS.contains(w)))
        || SECRET_PREFIXES.iter().any(|p| upper.starts_with(p))
        || SECRET_NAMES.contains(&upper.as_str())
}

/// Whether `value` looks like a credential whatever its name: a URL with a password
/// (`postgres://app:pw@db/app`, a proxy with one) or one token with a well-known prefix.
pub fn secret_value(value: &str) -> bool {
    url_with_password(value) || prefixed_token(value.trim())
}

fn url_with_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let rest = &value[at + 3..];
        let authority = rest.split(['/', '?', '#', ' ']).next().unwrap_or("");
        match authority.rsplit_once('@') {
            Some((userinfo, _)) => userinfo
                .split_once(':')
                .is_some_and(|(_, password)| !password.is_empty()),
            None => false,
        }
    })
}

fn prefixed_token(value: &str) -> bool {
    value.len() >= TOKEN_MIN
        && TOKEN_PREFIXES.iter().any(|p| value.starts_with(p))
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// What the config tells the command environment: the secrets rein knows and the names
/// passed through. The default knows no secret and passes nothing: the name and shape
/// rules still hold.
#[derive(Clone, Default)]
pub struct CommandEnv {
    /// Provider keys: removed under any name, passed through or not.
    keys: Vec<String>,
    /// Other secrets (MCP servers' tokens and credentials): a passed-through name keeps
    /// its variable.
    tokens: Vec<String>,
    /// `tools.env_passthrough`.
    passthrough: Vec<String>,
}

/// Secrets are counted, never shown.
impl fmt::Debug for CommandEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandEnv")
            .field("keys", &self.keys.len())
            .field("tokens", &self.tokens.len())
            .field("passthrough", &self.passthrough)
            .finish()
    }
}

impl CommandEnv {
    /// Provider `keys`, other secret `tokens` (empty ones are dropped) and the names
    /// passed through.
    pub fn new(keys: Vec<String>, tokens: Vec<String>, passthrough: Vec<String>) -> CommandEnv {
        let clean = |list: Vec<String>| {
            let mut list: Vec<String> = list.into_iter().filter(|s| !s.is_empty()).collect();
            list.sort();
            list.dedup();
            list
        };
        CommandEnv {
            keys: clean(keys),
            tokens: clean(tokens),
            passthrough,
        }
    }

    /// The names passed through (`tools.env_passthrough`).
    pub fn passthrough(&self) -> &[String] {
        &self.passthrough
    }

    /// The names among `vars` (rein's environment) to remove from a command's;
    /// `keys_in_use` are provider keys known only now (the key of a model switched to).
    pub fn removed(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
        keys_in_use: &[String],
    ) -> Vec<OsString> {
        vars.into_iter()
            .filter(|(name, value)| self.is_removed(name, value, keys_in_use))
            .map(|(name, _)| name)
            .collect()
    }

    fn is_removed(&self, name: &OsStr, value: &OsStr, keys_in_use: &[String]) -> bool {
        let name = name.to_string_lossy();
        if SOURCED.contains(&name.as_ref()) {
            return true;
        }
        let value = value.as_bytes();
        let holds = |secret: &String| {
            let secret = secret.as_bytes();
            !secret.is_empty()
                && (value == secret
                    || (secret.len() >= CONTAINED_MIN
                        && value.windows(secret.len()).any(|w| w == secret)))
        };
        if self.keys.iter().chain(keys_in_use).any(holds) {
            return true;
        }
        if self.passthrough.iter().any(|p| *p == name) {
            return false;
        }
        secret_name(&name)
            || self.tokens.iter().any(holds)
            || secret_value(&String::from_utf8_lossy(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_shaped_names_go_and_ordinary_ones_stay() {
        for name in [
            "DEEPSEEK_API_KEY",
            "anthropic_api_key",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "NPM_TOKEN",
            "HF_TOKEN",
            "CARGO_REGISTRY_TOKEN",
            "HOMEBREW_GITHUB_API_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_URL",
            "CLIENT_SECRET",
            "AZURE_CLIENT_SECRET",
            "AZURE_STORAGE_CONNECTION_STRING",
            "DB_PASSWORD",
            "PGPASSWORD",
            "MYSQL_PWD",
            "SMTP_PASS",
            "STRIPE_KEY",
            "GITLAB_PAT",
            "SENTRY_DSN",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_PROFILE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SSH_AUTH_SOCK",
            "SSH_AGENT_PID",
            "GPG_AGENT_INFO",
            "DOCKER_AUTH_CONFIG",
            "REIN_API_KEY",
            "OPENAI_ORG_ID",
        ] {
            assert!(secret_name(name), "{name} should go");
        }
        for name in [
            "PATH",
            "HOME",
            "PWD",
            "OLDPWD",
            "USER",
            "SHELL",
            "TERM",
            "LANG",
            "LC_ALL",
            "TMPDIR",
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "RUSTUP_HOME",
            "RUSTUP_TOOLCHAIN",
            "RUST_LOG",
            "SSL_CERT_FILE",
            "GIT_ASKPASS",
            "SSH_ASKPASS",
            "KEY_LAYOUT",
            "TOKENIZERS_PARALLELISM",
            "XAUTHORITY",
            "XDG_RUNTIME_DIR",
            "SECURITYSESSIONID",
            "DISPLAY",
            "EDITOR",
            "VIRTUAL_ENV",
            "NODE_OPTIONS",
            "XREIN_NOT_PREFIX",
        ] {
            assert!(!secret_name(name), "{name} should stay");
        }
    }

    #[test]
    fn credentials_are_known_by_their_shape() {
        assert!(secret_value("postgres://app:hunter2@db:5432/app"));
        assert!(secret_value("http://me:pw@proxy:3128"));
        assert!(secret_value("ghp_0123456789abcdefghijABCDEFGHIJ012345"));
        assert!(secret_value("sk-proj-0123456789abcdefghij"));
        assert!(secret_value("AKIAIOSFODNN7EXAMPLE"));
        assert!(!secret_value("https://example.com/path?x=1"));
        assert!(
            !secret_value("ssh://git@github.com/o/r.git"),
            "a user, no password"
        );
        assert!(!secret_value("https://user:@host/"), "an empty password");
        assert!(!secret_value("sk-short"));
        assert!(!secret_value("sk- not a token at all, a sentence"));
        assert!(!secret_value("/usr/local/bin:/usr/bin"));
    }

    fn removed(env: &CommandEnv, vars: &[(&str, &str)], in_use: &[&str]) -> Vec<String> {
        let vars = vars.iter().map(|(n, v)| (n.into(), v.into()));
        let in_use: Vec<String> = in_use.iter().map(|s| s.to_string()).collect();
        env.removed(vars, &in_use)
            .into_iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn known_secrets_go_under_any_name_and_passing_a_name_through_keeps_all_but_keys() {
        let key = "the-key-in-use-0123456789";
        let other_key = "corp-provider-key-value";
        let token = "mcp-bearer-token-value";
        let env = CommandEnv::new(
            vec![other_key.into(), String::new()],
            vec![token.into(), "short".into()],
            vec![
                "GITHUB_TOKEN".into(),
                "SNEAKY".into(),
                "MY_BEARER".into(),
                "BASH_ENV".into(),
            ],
        );
        let vars = [
            ("HARMLESS", "still-here"),
            ("INNOCENT_COPY", key),
            ("WRAPPED", &format!("Bearer {key}")),
            ("CORP_LLM", other_key),
            ("COPY_OF_TOKEN", token),
            ("HOLDS_SHORT", "not-short-at-all"),
            ("IS_SHORT", "short"),
            ("GITHUB_TOKEN", "ghp_passed_through_on_purpose_123"),
            ("SNEAKY", key),
            ("MY_BEARER", token),
            ("BASH_ENV", "/tmp/evil"),
            ("ENV", "/tmp/evil"),
            ("DATABASE_URL", "postgres://app:pw@db/app"),
            ("PATH", "/usr/bin:/bin"),
        ];
        let got = removed(&env, &vars, &[key]);
        assert_eq!(
            got,
            [
                "INNOCENT_COPY",
                "WRAPPED",
                "CORP_LLM",
                "COPY_OF_TOKEN",
                "IS_SHORT",
                "SNEAKY",
                "BASH_ENV",
                "ENV",
                "DATABASE_URL",
            ]
        );
        // Without the key in use named, a copy of it under an innocent name stays: the
        // caller must pass it (the agent does, from its client).
        assert!(removed(&env, &[("INNOCENT_COPY", key)], &[]).is_empty());
        // The default still scrubs by name and shape.
        let plain = CommandEnv::default();
        assert_eq!(
            removed(
                &plain,
                &[("GH_TOKEN", "x"), ("HOME", "/h"), ("U", "https://a:b@c")],
                &[]
            ),
            ["GH_TOKEN", "U"]
        );
        assert!(!format!("{env:?}").contains(token), "{env:?}");
    }
}
