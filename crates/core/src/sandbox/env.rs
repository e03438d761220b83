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
//!   password, a PEM block, a JSON Web Token, an Azure connection string's key, or a word
//!   that is a token with a well-known prefix such as `ghp_`, `xoxp-`, `AIza`, `ya29.`);
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
/// their company), rein's own settings, and 1Password's unlocked sessions
/// (`OP_SESSION_<account>`).
const SECRET_PREFIXES: &[&str] = &["AWS_", "REIN_", "OPENAI_", "OP_SESSION_"];

/// Not secrets but access to them: the SSH and GPG agents' sockets (anyone with the
/// socket signs as you), a Kerberos ticket cache, an unlocked Bitwarden vault's session.
const SECRET_NAMES: &[&str] = &[
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "KRB5CCNAME",
    "BW_SESSION",
];

/// Prefixes of tokens that say what they are (GitHub, GitLab, Slack, OpenAI-style,
/// Stripe, Hugging Face, npm, AWS access key ids): a value made of one such token is a
/// secret under any name. (The same and more are found as a word of a longer value by
/// [`PREFIXED_WORDS`].)
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

/// Prefixes of tokens found as any word of a value (`Bearer xoxp-…`, `token=glptt-…`),
/// when what follows looks like a token rather than a word ([`token_like`]): GitHub
/// (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), GitLab (`glpat-`, `glptt-`,
/// `gldt-`, `glrt-`, `glcbt-`), Slack (`xoxa-`, `xoxb-`, `xoxp-`, `xoxr-`, `xoxs-`,
/// `xoxe-`, `xapp-`), Stripe (`sk_live_`, `rk_live_`, `sk_test_`, `rk_test_`, `whsec_`),
/// Google OAuth (`ya29.`), SendGrid (`SG.`), PyPI (`pypi-`), RubyGems (`rubygems_`),
/// Shopify (`shpat_`, `shpss_`, `shpca_`, `shppa_`), DigitalOcean (`dop_v1_`, `doo_v1_`,
/// `dor_v1_`), Doppler (`dp.pt.`, `dp.st.`, `dp.sa.`, `dp.ct.`), HashiCorp Vault (`hvs.`,
/// `hvb.`), Docker Hub (`dckr_pat_`), npm (`npm_`), Hugging Face (`hf_`), model providers
/// (`sk-`, which covers `sk-ant-` and `sk-proj-`; `gsk_`, `xai-`, `pplx-`, `nvapi-`,
/// `r8_`), Linear (`lin_api_`), Pulumi (`pul-`), Atlassian (`ATATT`), Sentry (`sntrys_`),
/// Grafana (`glc_`, `glsa_`), Figma (`figd_`), Square (`sq0atp-`, `sq0csp-`).
const PREFIXED_WORDS: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "glptt-",
    "gldt-",
    "glrt-",
    "glcbt-",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxr-",
    "xoxs-",
    "xoxe-",
    "xapp-",
    "sk_live_",
    "rk_live_",
    "sk_test_",
    "rk_test_",
    "whsec_",
    "ya29.",
    "SG.",
    "pypi-",
    "rubygems_",
    "shpat_",
    "shpss_",
    "shpca_",
    "shppa_",
    "dop_v1_",
    "doo_v1_",
    "dor_v1_",
    "dp.pt.",
    "dp.st.",
    "dp.sa.",
    "dp.ct.",
    "hvs.",
    "hvb.",
    "dckr_pat_",
    "npm_",
    "hf_",
    "sk-",
    "gsk_",
    "xai-",
    "pplx-",
    "nvapi-",
    "r8_",
    "lin_api_",
    "pul-",
    "ATATT",
    "sntrys_",
    "glc_",
    "glsa_",
    "figd_",
    "sq0atp-",
    "sq0csp-",
];

/// The fewest characters after a [`PREFIXED_WORDS`] prefix for a word to be a token.
const PREFIXED_REST_MIN: usize = 16;

/// Webhook URLs whose path is the secret (anyone with it posts as you).
const WEBHOOKS: &[&str] = &[
    "hooks.slack.com/services/",
    "discord.com/api/webhooks/",
    "discordapp.com/api/webhooks/",
];

/// Keys of a connection string whose value is the secret itself (Azure Storage, Service
/// Bus, Event Hubs, SignalR).
const CONNECTION_KEYS: &[&str] = &[
    "accountkey=",
    "sharedaccesskey=",
    "sharedaccesssignature=",
    "accesskey=",
];

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
/// (`postgres://app:pw@db/app`, a proxy with one), one token with a well-known prefix, a
/// PEM block (`-----BEGIN …`), a connection string with a key in it (`AccountKey=…`), or
/// a Slack or Discord webhook URL, or a value with a word that is a JSON Web Token, a
/// Google API key (`AIza…`), a Twilio API key (`SK` and 32 hex digits) or a token with one
/// of about sixty well-known prefixes (GitHub's, GitLab's, Slack's, Stripe's, …).
pub fn secret_value(value: &str) -> bool {
    url_with_password(value)
        || prefixed_token(value.trim())
        || value.contains("-----BEGIN ")
        || WEBHOOKS.iter().any(|w| value.contains(w))
        || connection_key(value)
        || value
            .split(|c: char| c.is_whitespace() || ",;:/?#&\"'=<>()[]{}|".contains(c))
            .any(secret_word)
}

/// A connection string's key with a value: `AccountKey=abc…;`, in any case.
fn connection_key(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    CONNECTION_KEYS.iter().any(|key| {
        lower.match_indices(key).any(|(at, _)| {
            let after = &value[at + key.len()..];
            // The key starts the value or a `;`-separated part, and has 8 characters or more.
            let starts_part = at == 0 || value[..at].ends_with(';');
            starts_part && after.split(';').next().is_some_and(|v| v.trim().len() >= 8)
        })
    })
}

/// One word of a value that is a credential by its shape alone.
fn secret_word(word: &str) -> bool {
    if word.len() < TOKEN_MIN {
        return false;
    }
    jwt(word)
        || google_api_key(word)
        || twilio_key(word)
        || PREFIXED_WORDS.iter().any(|prefix| {
            word.strip_prefix(prefix)
                .is_some_and(|rest| token_like(rest, PREFIXED_REST_MIN))
        })
}

/// Whether `rest` (what follows a token's prefix) looks like random characters, not
/// words: at least `min` of them, only letters, digits, `_`, `-` and `.`, and either upper
/// and lower case letters and digits mixed (base62, base64) or hexadecimal with at least
/// four digits (`dop_v1_`, Slack's numbers and hex). `sk-learn-experiments-v2` and
/// `hf_model_cache_dir_2024` are words.
fn token_like(rest: &str, min: usize) -> bool {
    let has = |f: fn(&u8) -> bool| rest.as_bytes().iter().any(f);
    let digits = rest.bytes().filter(u8::is_ascii_digit).count();
    let mixed = has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase) && digits > 0;
    let hex = digits >= 4
        && rest
            .bytes()
            .filter(u8::is_ascii_alphabetic)
            .all(|b| b.is_ascii_hexdigit());
    rest.len() >= min
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
        && (mixed || hex)
}

/// A Google API key: `AIza` and 35 characters of `[A-Za-z0-9_-]`.
fn google_api_key(word: &str) -> bool {
    word.strip_prefix("AIza").is_some_and(|rest| {
        rest.len() == 35
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}

/// A Twilio API key's SID: `SK` and 32 lower-case hex digits.
fn twilio_key(word: &str) -> bool {
    word.strip_prefix("SK").is_some_and(|rest| {
        rest.len() == 32 && rest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// A JSON Web Token: three base64url parts joined by dots (the last may be empty, an
/// unsigned token), the first decoding to a JSON object with an `alg`.
fn jwt(word: &str) -> bool {
    let parts: Vec<&str> = word.split('.').collect();
    let [header, payload, _signature] = parts[..] else {
        return false;
    };
    let base64url = |p: &str| {
        p.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'=')
    };
    if header.len() < 8
        || header.len() > 4096
        || payload.is_empty()
        || !parts.iter().all(|p| base64url(p))
    {
        return false;
    }
    let Some(bytes) = base64url_decode(header) else {
        return false;
    };
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .is_some_and(|v| v.get("alg").is_some())
}

/// `text` decoded as base64url (or standard base64), padding optional; `None` when it is
/// not.
fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in text.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
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

    /// A JSON Web Token's parts, made here: base64url of `header`, of a payload, and a
    /// signature-like tail.
    fn make_jwt(header: &str) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let encode = |bytes: &[u8]| {
            let mut out = String::new();
            for chunk in bytes.chunks(3) {
                let n = chunk.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b))
                    << (8 * (3 - chunk.len()));
                for i in 0..=chunk.len() {
                    out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
                }
            }
            out
        };
        format!(
            "{}.{}.{}",
            encode(header.as_bytes()),
            encode(br#"{"sub":"1234567890","name":"x","iat":1516239022}"#),
            "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
        )
    }

    #[test]
    fn the_decoder_reads_what_the_test_encoder_writes() {
        let token = make_jwt(r#"{"alg":"HS256","typ":"JWT"}"#);
        let header = token.split('.').next().unwrap();
        assert_eq!(
            base64url_decode(header).unwrap(),
            br#"{"alg":"HS256","typ":"JWT"}"#
        );
        assert_eq!(base64url_decode("a*b"), None);
    }

    /// Credentials by value, whole or as a word of a longer value, and the ordinary
    /// values that look a little like them and must stay.
    #[test]
    fn more_credentials_are_known_by_their_shape_and_words_are_not() {
        let jwt = make_jwt(r#"{"alg":"RS256","kid":"k1"}"#);
        let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----";
        for value in [
            jwt.as_str(),
            &format!("Bearer {jwt}"),
            &format!("Authorization: Bearer {jwt}"),
            pem,
            "-----BEGIN CERTIFICATE-----",
            "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
            "key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q&x=1",
            "xoxp-1234567890-1234567890-1234567890-0123456789abcdef0123456789abcdef",
            "xoxs-1234567890-1234567890-abcdef0123456789",
            "xapp-1-A0123456789-0123456789012-abcdef0123456789abcdef0123456789",
            "sk_live_51H8abcDEFghiJKLmnoPQRstu",
            "rk_live_51H8abcDEFghiJKLmnoPQRstu",
            "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
            "ya29.a0AfH6SMBx3kTq0Z9vYwz1Xk2LmNoPqRsTuV",
            "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",
            "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAw",
            "shpat_0123456789abcdef0123456789abcdef",
            "shpss_0123456789abcdef0123456789abcdef",
            "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "sk-ant-api03-AbCdEf0123456789GhIjKl",
            "gho_16C7e42F292c6912E7710c838347Ae178B4a",
            "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
            "https://x-access-token:@github.com ghu_16C7e42F292c6912E7710c838347Ae178B4a",
            "glptt-0123456789abcdef0123",
            "SKa0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5",
            "npm_AbCdEf0123456789GhIjKlMnOpQrStUvWx",
            "dp.pt.AbCdEf0123456789GhIjKlMnOpQrStUvWxYz",
            "hvs.CAESIAbCdEf0123456789GhIjKlMnOp",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4==;EndpointSuffix=core.windows.net",
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abcdEFGH1234ijkl=",
            "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2020-08-04&ss=b&sig=abc%2Bdef",
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        ] {
            assert!(secret_value(value), "{value} should go");
        }
        for value in [
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/home/me/.cargo/bin",
            "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:cd=40;33;01:or=40;31;01:mi=00:su=37;41:sg=30;43:ca=00:tw=30;42:ow=34;42:st=37;44:ex=01;32:*.tar=01;31",
            "/home/me/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde_json-1.0.128/src",
            "/work/target/debug/build/rein-0123456789abcdef/out",
            "9a4b0263c1f5e7d8b2a4c6e8f0a1b3c5d7e9f1a3",
            "main",
            "git checkout sk-learn-experiment-branch-two",
            "/data/hf_model_cache_dir_2024",
            "xoxo-hugs-and-kisses-to-everyone",
            "SKIP_THE_INTEGRATION_TESTS_PLEASE",
            "AIza short",
            "a.b.c",
            "eyJub3QiOiJhIGp3dCJ9.eyJzdWIiOiIxIn0.sig",
            "version=1.2.3; build=abc",
            "AccountName=acct;Protocol=https",
            "en_US.UTF-8",
            "xterm-256color",
            "https://hooks.example.com/services/x",
        ] {
            assert!(!secret_value(value), "{value} should stay");
        }
    }

    #[test]
    fn password_manager_sessions_go_by_name() {
        for name in ["BW_SESSION", "OP_SESSION_my", "op_session_team_acct"] {
            assert!(secret_name(name), "{name} should go");
        }
        for name in [
            "OP_ACCOUNT",
            "BW_CLIENTID_FILE",
            "SESSION_MANAGER",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            assert!(!secret_name(name), "{name} should stay");
        }
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
