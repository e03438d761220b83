//! Unit tests for the loader: precedence, sources, parsing and the one-line errors.
//! Every test injects its own `Environment` with temp dirs; none reads the real process
//! environment or home.

use std::fs;
use std::path::Path;

use tempfile::TempDir;

use super::sources::user_paths;
use super::*;

/// A project root, a `REIN_HOME` and a home dir, all empty temp dirs.
struct Fixture {
    root: TempDir,
    rein_home: TempDir,
    home: TempDir,
    env: Environment,
}

impl Fixture {
    fn new() -> Self {
        let root = TempDir::new().unwrap();
        let rein_home = TempDir::new().unwrap();
        let home = TempDir::new().unwrap();
        let mut vars = HashMap::new();
        vars.insert(
            "REIN_HOME".to_string(),
            rein_home.path().display().to_string(),
        );
        let env = Environment {
            vars,
            home: Some(home.path().to_path_buf()),
        };
        Fixture {
            root,
            rein_home,
            home,
            env,
        }
    }

    fn set(&mut self, var: &str, value: &str) -> &mut Self {
        self.env.vars.insert(var.to_string(), value.to_string());
        self
    }

    fn project_file(&self) -> PathBuf {
        self.root.path().join(".rein").join("config.toml")
    }

    fn user_file(&self) -> PathBuf {
        self.rein_home.path().join("config.toml")
    }

    fn agents_file(&self) -> PathBuf {
        self.home.path().join(".agents").join("env")
    }

    fn write_project(&self, text: &str) -> &Self {
        write(&self.project_file(), text);
        self
    }

    fn write_user(&self, text: &str) -> &Self {
        write(&self.user_file(), text);
        self
    }

    fn write_agents(&self, text: &str) -> &Self {
        write(&self.agents_file(), text);
        self
    }

    fn load(&self) -> Result<Config, ConfigError> {
        self.load_with(&Overrides::default())
    }

    fn load_with(&self, overrides: &Overrides) -> Result<Config, ConfigError> {
        Config::load(self.root.path(), overrides, &self.env)
    }

    /// Allow the project file's routing settings as they are now (`rein config allow`).
    fn allow_routing(&self) {
        let c = self.load().unwrap();
        let routing = c.project_routing.expect("something to allow");
        planted::allow_routing(&c.data_dir, &self.project_file(), routing.pinned()).unwrap();
    }

    /// The error text of a load that must fail, checked to be one line.
    fn error(&self) -> String {
        let message = self.load().unwrap_err().to_string();
        assert!(!message.contains('\n'), "not one line: {message}");
        message
    }
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn model(model: &str) -> Overrides {
    Overrides {
        model: Some(model.to_string()),
        ..Overrides::default()
    }
}

// ---- defaults and precedence ----

#[test]
fn defaults_when_nothing_is_configured() {
    let f = Fixture::new();
    let c = f.load().unwrap();
    assert_eq!(c.base_url.value, "https://api.openai.com/v1");
    assert_eq!(c.api_key.value, "");
    assert_eq!(c.model.value, "");
    assert_eq!(c.context_window.value, 128_000);
    assert_eq!(c.idle_timeout_secs.value, 120);
    assert_eq!(c.connect_timeout_secs.value, 10);
    assert_eq!(c.max_tries.value, 5);
    assert_eq!(c.bash_timeout_secs.value, 60);
    assert_eq!(c.max_steps.value, 200);
    for source in [
        &c.base_url.source,
        &c.api_key.source,
        &c.model.source,
        &c.context_window.source,
        &c.idle_timeout_secs.source,
        &c.connect_timeout_secs.source,
        &c.bash_timeout_secs.source,
    ] {
        assert_eq!(source, &Source::Default);
    }
    assert_eq!(c.max_tries.source, Source::Default);
    assert_eq!(c.max_steps.source, Source::Default);
    assert_eq!(c.project_config_path, f.project_file());
}

#[test]
fn agents_env_beats_defaults() {
    let f = Fixture::new();
    f.write_agents(
        "BASE_URL=http://agents/v1\nAPI_KEY=ak\nMODEL=agents-model\nCONTEXT_WINDOW=32000\n",
    );
    let c = f.load().unwrap();
    let source = Source::AgentsEnv(f.agents_file());
    assert_eq!(c.base_url.value, "http://agents/v1");
    assert_eq!(c.api_key.value, "ak");
    assert_eq!(c.model.value, "agents-model");
    assert_eq!(c.context_window.value, 32_000);
    assert_eq!(c.base_url.source, source);
    assert_eq!(c.api_key.source, source);
    assert_eq!(c.model.source, source);
    assert_eq!(c.context_window.source, source);
}

#[test]
fn user_file_beats_agents_env() {
    let f = Fixture::new();
    f.write_agents("MODEL=agents-model\nCONTEXT_WINDOW=32000\n");
    f.write_user("model = \"user-model\"\ncontext_window = 64000\n");
    let c = f.load().unwrap();
    assert_eq!(c.model.value, "user-model");
    assert_eq!(c.model.source, Source::UserFile(f.user_file()));
    assert_eq!(c.context_window.value, 64_000);
    assert_eq!(c.context_window.source, Source::UserFile(f.user_file()));
}

#[test]
fn project_file_beats_user_file() {
    let f = Fixture::new();
    f.write_user(
        "model = \"user-model\"\n[client]\nmax_tries = 2\n[tools]\nbash_timeout_secs = 5\n",
    );
    f.write_project("model = \"project-model\"\n[client]\nmax_tries = 3\n");
    let c = f.load().unwrap();
    assert_eq!(c.model.value, "project-model");
    assert_eq!(c.model.source, Source::ProjectFile(f.project_file()));
    assert_eq!(c.max_tries.value, 3);
    assert_eq!(c.max_tries.source, Source::ProjectFile(f.project_file()));
    // A key only the user file sets still comes from it.
    assert_eq!(c.bash_timeout_secs.value, 5);
    assert_eq!(c.bash_timeout_secs.source, Source::UserFile(f.user_file()));
}

#[test]
fn env_beats_project_file() {
    let mut f = Fixture::new();
    f.write_project(
        "base_url = \"http://project\"\napi_key = \"pk\"\nmodel = \"project-model\"\ncontext_window = 1000\n",
    );
    f.set("REIN_BASE_URL", "http://env/v1")
        .set("REIN_API_KEY", "ek")
        .set("REIN_MODEL", "env-model")
        .set("REIN_CONTEXT_WINDOW", "2000");
    let c = f.load().unwrap();
    assert_eq!(c.base_url.value, "http://env/v1");
    assert_eq!(c.base_url.source, Source::Env("REIN_BASE_URL".into()));
    assert_eq!(c.api_key.value, "ek");
    assert_eq!(c.api_key.source, Source::Env("REIN_API_KEY".into()));
    assert_eq!(c.model.value, "env-model");
    assert_eq!(c.model.source, Source::Env("REIN_MODEL".into()));
    assert_eq!(c.context_window.value, 2000);
    assert_eq!(
        c.context_window.source,
        Source::Env("REIN_CONTEXT_WINDOW".into())
    );
}

#[test]
fn flag_beats_env() {
    let mut f = Fixture::new();
    f.set("REIN_BASE_URL", "http://env")
        .set("REIN_API_KEY", "ek")
        .set("REIN_MODEL", "env-model")
        .set("REIN_CONTEXT_WINDOW", "2000");
    let overrides = Overrides {
        base_url: Some("http://flag/v1/".into()),
        model: Some("flag-model".into()),
        api_key: Some("fk".into()),
        context_window: Some(3000),
    };
    let c = f.load_with(&overrides).unwrap();
    assert_eq!(c.base_url.value, "http://flag/v1");
    assert_eq!(c.base_url.source, Source::Flag("--base-url".into()));
    assert_eq!(c.api_key.value, "fk");
    assert_eq!(c.api_key.source, Source::Flag("--api-key".into()));
    assert_eq!(c.model.value, "flag-model");
    assert_eq!(c.model.source, Source::Flag("--model".into()));
    assert_eq!(c.context_window.value, 3000);
    assert_eq!(
        c.context_window.source,
        Source::Flag("--context-window".into())
    );
}

#[test]
fn openai_variables_are_fallbacks_for_rein_ones() {
    let mut f = Fixture::new();
    f.write_project("base_url = \"http://project\"\napi_key = \"pk\"\n");
    f.set("OPENAI_BASE_URL", "http://openai/v1")
        .set("OPENAI_API_KEY", "ok");
    let c = f.load().unwrap();
    assert_eq!(c.base_url.value, "http://openai/v1");
    assert_eq!(c.base_url.source, Source::Env("OPENAI_BASE_URL".into()));
    assert_eq!(c.api_key.value, "ok");
    assert_eq!(c.api_key.source, Source::Env("OPENAI_API_KEY".into()));

    // An empty REIN_ variable is unset, so the OPENAI_ one still applies ...
    f.set("REIN_API_KEY", "");
    assert_eq!(f.load().unwrap().api_key.value, "ok");
    // ... and a non-empty one wins.
    f.set("REIN_API_KEY", "rk")
        .set("REIN_BASE_URL", "http://rein");
    let c = f.load().unwrap();
    assert_eq!(c.api_key.source, Source::Env("REIN_API_KEY".into()));
    assert_eq!(c.base_url.source, Source::Env("REIN_BASE_URL".into()));
}

#[test]
fn empty_env_variables_count_as_unset() {
    let mut f = Fixture::new();
    f.write_project("model = \"project-model\"\ncontext_window = 1000\n");
    f.set("REIN_MODEL", "")
        .set("REIN_CONTEXT_WINDOW", "")
        .set("OPENAI_API_KEY", "");
    let c = f.load().unwrap();
    assert_eq!(c.model.value, "project-model");
    assert_eq!(c.context_window.value, 1000);
    assert_eq!(c.api_key.source, Source::Default);
}

#[test]
fn explicit_empty_values_in_files_and_flags_win() {
    let f = Fixture::new();
    f.write_user("model = \"user-model\"\n");
    f.write_project("model = \"\"\n");
    let c = f.load().unwrap();
    assert_eq!(c.model.value, "");
    assert_eq!(c.model.source, Source::ProjectFile(f.project_file()));

    let c = f.load_with(&model("")).unwrap();
    assert_eq!(c.model.source, Source::Flag("--model".into()));
}

#[test]
fn base_url_is_stored_without_trailing_slash() {
    let f = Fixture::new();
    f.write_user("base_url = \"http://localhost:8080/v1//\"\n");
    assert_eq!(f.load().unwrap().base_url.value, "http://localhost:8080/v1");
}

#[test]
fn every_file_key_is_read_from_its_section() {
    let f = Fixture::new();
    f.write_project(
        "[client]\nidle_timeout_secs = 7\nconnect_timeout_secs = 8\nmax_tries = 10\n\
         [tools]\nbash_timeout_secs = 9\n[agent]\nmax_steps = 11\n",
    );
    let c = f.load().unwrap();
    let source = Source::ProjectFile(f.project_file());
    assert_eq!(c.idle_timeout_secs.value, 7);
    assert_eq!(c.connect_timeout_secs.value, 8);
    assert_eq!(c.max_tries.value, 10);
    assert_eq!(c.bash_timeout_secs.value, 9);
    assert_eq!(c.max_steps.value, 11);
    assert_eq!(c.idle_timeout_secs.source, source);
    assert_eq!(c.connect_timeout_secs.source, source);
    assert_eq!(c.max_tries.source, source);
    assert_eq!(c.bash_timeout_secs.source, source);
    assert_eq!(c.max_steps.source, source);
}

// ---- where the files are ----

#[test]
fn rein_home_locates_the_user_file_and_data_dir() {
    let f = Fixture::new();
    f.write_user("model = \"from-rein-home\"\n");
    let c = f.load().unwrap();
    assert_eq!(c.user_config_path, f.user_file());
    assert_eq!(c.data_dir, f.rein_home.path());
    assert_eq!(c.model.value, "from-rein-home");
    assert_eq!(c.model.source, Source::UserFile(f.user_file()));
}

#[test]
fn without_rein_home_the_platform_dirs_are_used() {
    let env = Environment {
        vars: HashMap::from([("REIN_HOME".to_string(), String::new())]),
        home: None,
    };
    // Only the path computation is checked: loading would read the real user file.
    match user_paths(&env) {
        Ok((config, data)) => {
            assert!(config.ends_with("config.toml"), "{}", config.display());
            let dir = config.parent().unwrap().display().to_string();
            assert!(dir.to_lowercase().contains("rein"), "{dir}");
            assert!(data.display().to_string().to_lowercase().contains("rein"));
        }
        Err(e) => assert!(matches!(e, ConfigError::NoHome), "{e}"),
    }
}

#[test]
fn missing_home_skips_the_agents_file() {
    let mut f = Fixture::new();
    f.write_agents("MODEL=agents-model\n");
    f.env.home = None;
    assert_eq!(f.load().unwrap().model.source, Source::Default);
}

// ---- ~/.agents/env ----

#[test]
fn agents_env_tolerates_export_quotes_comments_and_other_keys() {
    let f = Fixture::new();
    f.write_agents(
        "# the reference harness's settings\n\
         \n\
         export BASE_URL=\"http://agents/v1/\"\n\
         API_KEY='sk-agents'  # keep secret\n\
         OTHER_KEY=ignored\n\
         just some words\n\
         export MODEL = qwen-coder\n\
         CONTEXT_WINDOW=\"65536\"\n",
    );
    let c = f.load().unwrap();
    assert_eq!(c.base_url.value, "http://agents/v1");
    assert_eq!(c.api_key.value, "sk-agents");
    assert_eq!(c.model.value, "qwen-coder");
    assert_eq!(c.context_window.value, 65_536);
}

#[test]
fn agents_env_empty_value_is_unset_and_last_assignment_wins() {
    let f = Fixture::new();
    f.write_agents("MODEL=first\nMODEL=second\nBASE_URL=\n");
    let c = f.load().unwrap();
    assert_eq!(c.model.value, "second");
    assert_eq!(c.base_url.source, Source::Default);
}

#[test]
fn agents_env_bad_context_window_names_file_and_key() {
    let f = Fixture::new();
    f.write_agents("CONTEXT_WINDOW=x\n");
    assert_eq!(
        f.error(),
        format!(
            "{}: CONTEXT_WINDOW: expected an integer from 1 to 1000000000, got \"x\"",
            f.agents_file().display()
        )
    );
}

// ---- errors ----

#[test]
fn wrong_type_names_file_and_key() {
    let f = Fixture::new();
    f.write_project("[tools]\nbash_timeout_secs = \"abc\"\n");
    assert_eq!(
        f.error(),
        format!(
            "{}: key `tools.bash_timeout_secs`: expected an integer from 1 to 86400, got string \"abc\"",
            f.project_file().display()
        )
    );
    f.write_project("model = 3\n");
    assert_eq!(
        f.error(),
        format!(
            "{}: key `model`: expected a string, got integer 3",
            f.project_file().display()
        )
    );
    f.write_project("[client]\nidle_timeout_secs = 1.5\n");
    assert!(f.error().ends_with(
        "key `client.idle_timeout_secs`: expected an integer from 1 to 86400, got float 1.5"
    ));
}

#[test]
fn out_of_range_names_file_and_key() {
    let f = Fixture::new();
    let path = f.project_file().display().to_string();
    f.write_project("[client]\nmax_tries = 11\n");
    assert_eq!(
        f.error(),
        format!("{path}: key `client.max_tries`: expected an integer from 1 to 10, got 11")
    );
    f.write_project("[client]\nmax_tries = 0\n");
    assert!(f
        .error()
        .ends_with("expected an integer from 1 to 10, got 0"));
    f.write_project("context_window = 0\n");
    assert_eq!(
        f.error(),
        format!("{path}: key `context_window`: expected an integer from 1 to 1000000000, got 0")
    );
    f.write_project("[tools]\nbash_timeout_secs = -5\n");
    assert_eq!(
        f.error(),
        format!(
            "{path}: key `tools.bash_timeout_secs`: expected an integer from 1 to 86400, got -5"
        )
    );
    f.write_project("[tools]\nbash_timeout_secs = 9223372036854775807\n");
    assert_eq!(
        f.error(),
        format!("{path}: key `tools.bash_timeout_secs`: expected an integer from 1 to 86400, got 9223372036854775807")
    );
    f.write_project("[agent]\nmax_steps = 5000000000\n");
    assert_eq!(
        f.error(),
        format!(
            "{path}: key `agent.max_steps`: expected an integer from 1 to 4294967295, got 5000000000"
        )
    );
}

#[test]
fn unknown_key_names_file_and_key_and_lists_known_ones() {
    let f = Fixture::new();
    let path = f.project_file().display().to_string();
    f.write_project("[tools]\nbash_timout_secs = 5\n");
    assert_eq!(
        f.error(),
        format!(
            "{path}: unknown key `tools.bash_timout_secs` (known keys in [tools]: bash_timeout_secs, env_passthrough, max_background)"
        )
    );
    f.write_project("modle = \"x\"\n");
    assert_eq!(
        f.error(),
        format!(
            "{path}: unknown key `modle` (known top-level keys: base_url, api_key, model, \
             context_window; sections: [client], [tools], [agent], [subagent], [instructions], [context], [permissions], [sandbox], [checkpoints], [ui], [providers.NAME], [mcp_servers.NAME])"
        )
    );
}

#[test]
fn unknown_section_names_file_and_section() {
    let f = Fixture::new();
    f.write_user("[tols]\nbash_timeout_secs = 5\n");
    assert_eq!(
        f.error(),
        format!(
            "{}: unknown section `[tols]` (known sections: [client], [tools], [agent], [subagent], [instructions], [context], [permissions], [sandbox], [checkpoints], [ui], [providers.NAME], [mcp_servers.NAME])",
            f.user_file().display()
        )
    );
}

#[test]
fn section_that_is_not_a_table_is_an_error() {
    let f = Fixture::new();
    f.write_project("client = 3\n");
    assert_eq!(
        f.error(),
        format!(
            "{}: key `client`: expected a table [client], got integer 3",
            f.project_file().display()
        )
    );
}

#[test]
fn context_settings_are_read_and_checked() {
    let f = Fixture::new();
    let c = f.load().unwrap();
    assert_eq!(
        (c.cap_chars.value, c.stub_chars.value, c.keep_recent.value),
        (10_000, 300, 10)
    );
    assert_eq!(c.context().spill_dir, Some(c.data_dir.join("spill")));
    f.write_project("[context]\ncap_chars = 20000\nstub_chars = 0\nkeep_recent = 4\n");
    let c = f.load().unwrap();
    assert_eq!(c.context().cap_chars, 20_000);
    assert_eq!(c.context().stub_chars, 0);
    assert_eq!(c.context().keep_recent, 4);
    assert_eq!(c.cap_chars.source, Source::ProjectFile(f.project_file()));
    f.write_project("[context]\ncap_chars = 10\n");
    assert!(f.error().contains("context.cap_chars"), "{}", f.error());
    f.write_project("[context]\nreserve = 1\n");
    assert!(f.error().contains("context.reserve"), "{}", f.error());
}

#[test]
fn compaction_settings_default_to_the_context_defaults() {
    let f = Fixture::new();
    let c = f.load().unwrap();
    assert_eq!(c.compact_at.value, crate::context::DEFAULT_COMPACT_AT);
    assert_eq!(c.compact_to.value, crate::context::DEFAULT_COMPACT_TO);
    assert_eq!(c.compact_model.value, "");
    assert_eq!(c.compact_at.source, Source::Default);
    assert_eq!(c.compact_to.source, Source::Default);
    assert_eq!(c.compact_model.source, Source::Default);
    let context = c.context();
    assert_eq!(context.compact_at, 0.85);
    assert_eq!(context.compact_to, 0.35);
    assert_eq!(context.compact_model, "");
    let text = c.describe();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name} in:\n{text}"))
            .to_string()
    };
    assert!(line("context.compact_at").contains("0.85"));
    assert!(line("context.compact_model").contains("(same as model)"));
    for name in [
        "context.compact_at",
        "context.compact_to",
        "context.compact_model",
    ] {
        assert!(line(name).ends_with("(default)"), "{}", line(name));
    }
}

#[test]
fn compaction_settings_are_read_shown_and_passed_on() {
    let f = Fixture::new();
    f.write_user(
        "[context]\ncompact_at = 0.9\ncompact_to = 0.5\ncompact_model = \"  small-model \"\n",
    );
    let c = f.load().unwrap();
    let user = Source::UserFile(f.user_file());
    assert_eq!(c.compact_at.value, 0.9);
    assert_eq!(c.compact_to.value, 0.5);
    assert_eq!(c.compact_model.value, "small-model");
    assert_eq!(c.compact_at.source, user);
    assert_eq!(c.compact_to.source, user);
    assert_eq!(c.compact_model.source, user);
    let context = c.context();
    assert_eq!(
        (context.compact_at, context.compact_to),
        (0.9, 0.5),
        "{context:?}"
    );
    assert_eq!(context.compact_model, "small-model");
    assert_eq!(context.window, c.context_window.value);

    let text = c.describe();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name} in:\n{text}"))
            .to_string()
    };
    let from_user = format!("({})", f.user_file().display());
    assert!(line("context.compact_at").contains(" 0.9 "), "{text}");
    assert!(line("context.compact_to").contains(" 0.5 "), "{text}");
    assert!(
        line("context.compact_model").contains("small-model"),
        "{text}"
    );
    for name in [
        "context.compact_at",
        "context.compact_to",
        "context.compact_model",
    ] {
        assert!(line(name).ends_with(&from_user), "{}", line(name));
    }

    // The project file wins key by key.
    f.write_project("[context]\ncompact_at = 0.7\n");
    let c = f.load().unwrap();
    assert_eq!(c.compact_at.value, 0.7);
    assert_eq!(c.compact_at.source, Source::ProjectFile(f.project_file()));
    assert_eq!(c.compact_to.value, 0.5);
    assert_eq!(c.compact_to.source, user);
}

#[test]
fn compaction_shares_out_of_range_or_not_floats_name_file_and_key() {
    let f = Fixture::new();
    let path = f.user_file().display().to_string();
    for (key, value, got) in [
        ("compact_at", "0.0", "float 0.0"),
        ("compact_at", "1.0", "float 1.0"),
        ("compact_at", "1.5", "float 1.5"),
        ("compact_at", "-0.1", "float -0.1"),
        ("compact_at", "nan", "float nan"),
        ("compact_to", "\"0.5\"", "string \"0.5\""),
        ("compact_to", "0", "integer 0"),
        ("compact_to", "1", "integer 1"),
        ("compact_at", "true", "boolean true"),
    ] {
        f.write_user(&format!("[context]\n{key} = {value}\n"));
        assert_eq!(
            f.error(),
            format!(
                "{path}: key `context.{key}`: expected a number between 0 and 1 (exclusive), got {got}"
            )
        );
    }
    f.write_user("[context]\ncompact_model = 3\n");
    assert_eq!(
        f.error(),
        format!("{path}: key `context.compact_model`: expected a string, got integer 3")
    );
}

#[test]
fn compact_to_must_stay_below_compact_at_after_layering() {
    let f = Fixture::new();
    let user = f.user_file().display().to_string();
    let project = f.project_file().display().to_string();

    f.write_user("[context]\ncompact_to = 0.9\n");
    assert_eq!(
        f.error(),
        format!(
            "{user}: key `context.compact_to` = 0.9 must be smaller than `context.compact_at` = 0.85 (the default)"
        )
    );

    f.write_user("[context]\ncompact_at = 0.5\ncompact_to = 0.5\n");
    assert_eq!(
        f.error(),
        format!(
            "{user}: key `context.compact_to` = 0.5 must be smaller than `context.compact_at` = 0.5 (from {user})"
        )
    );

    // The error leads with the source that wins the precedence.
    f.write_user("[context]\ncompact_to = 0.6\n");
    f.write_project("[context]\ncompact_at = 0.5\n");
    assert_eq!(
        f.error(),
        format!(
            "{project}: key `context.compact_at` = 0.5 must be larger than `context.compact_to` = 0.6 (from {user})"
        )
    );
    fs::remove_file(f.user_file()).unwrap();
    f.write_project("[context]\ncompact_at = 0.3\n");
    assert_eq!(
        f.error(),
        format!(
            "{project}: key `context.compact_at` = 0.3 must be larger than `context.compact_to` = 0.35 (the default)"
        )
    );

    // Only the resolved pair counts: a user compact_to above the default compact_at is
    // fine once the project raises compact_at.
    f.write_user("[context]\ncompact_to = 0.9\n");
    f.write_project("[context]\ncompact_at = 0.95\n");
    let c = f.load().unwrap();
    assert_eq!((c.compact_at.value, c.compact_to.value), (0.95, 0.9));
}

#[test]
fn subagent_max_steps_is_read_and_checked() {
    let f = Fixture::new();
    assert_eq!(f.load().unwrap().subagent_max_steps.value, 12);
    f.write_project("[subagent]\nmax_steps = 3\n");
    let c = f.load().unwrap();
    assert_eq!(c.subagent_max_steps.value, 3);
    assert_eq!(
        c.subagent_max_steps.source,
        Source::ProjectFile(f.project_file())
    );
    f.write_project("[subagent]\nmax = 2\n");
    assert!(f.error().contains("subagent.max"), "{}", f.error());
}

#[test]
fn invalid_toml_is_one_line_with_file_and_line_number() {
    let f = Fixture::new();
    f.write_project("model = \"a\"\n\n[client\nmax_tries = 2\n");
    let message = f.error();
    let prefix = format!("{}: not valid TOML: ", f.project_file().display());
    assert!(message.starts_with(&prefix), "{message}");
    assert!(message.ends_with(" (line 3)"), "{message}");
    assert!(
        message.contains("invalid table header; expected"),
        "{message}"
    );

    f.write_project("model = \"a\"\nmodel = \"b\"\n");
    let message = f.error();
    assert!(message.starts_with(&prefix), "{message}");
    assert!(message.ends_with(" (line 2)"), "{message}");
}

#[test]
fn unreadable_file_is_an_error_and_missing_one_is_not() {
    let f = Fixture::new();
    assert!(f.load().is_ok());
    fs::create_dir_all(f.project_file()).unwrap();
    let message = f.error();
    assert!(
        message.starts_with(&format!("{}: cannot read: ", f.project_file().display())),
        "{message}"
    );
}

#[test]
fn bad_env_variable_names_the_variable() {
    let mut f = Fixture::new();
    f.set("REIN_CONTEXT_WINDOW", "lots");
    assert_eq!(
        f.error(),
        "env REIN_CONTEXT_WINDOW: expected an integer from 1 to 1000000000, got \"lots\""
    );
    f.set("REIN_CONTEXT_WINDOW", "0");
    assert_eq!(
        f.error(),
        "env REIN_CONTEXT_WINDOW: expected an integer from 1 to 1000000000, got \"0\""
    );
}

#[test]
fn zero_context_window_flag_names_the_flag() {
    let f = Fixture::new();
    let overrides = Overrides {
        context_window: Some(0),
        ..Overrides::default()
    };
    assert_eq!(
        f.load_with(&overrides).unwrap_err().to_string(),
        "flag --context-window: expected an integer from 1 to 1000000000, got 0"
    );
}

// ---- display ----

#[test]
fn source_display() {
    assert_eq!(Source::Default.to_string(), "default");
    assert_eq!(
        Source::Env("REIN_MODEL".into()).to_string(),
        "env REIN_MODEL"
    );
    assert_eq!(Source::Flag("--model".into()).to_string(), "flag --model");
    assert_eq!(
        Source::ProjectFile(PathBuf::from("/p/.rein/config.toml")).to_string(),
        "/p/.rein/config.toml"
    );
}

#[test]
fn mask_secret_shows_at_most_the_last_four_characters() {
    assert_eq!(mask_secret(""), "(not set)");
    assert_eq!(mask_secret("sk-abcdefghijklmnopwxyz"), "sk-…wxyz");
    assert_eq!(mask_secret("abcdefghijklmnopwxyz"), "…wxyz");
    assert_eq!(mask_secret("abcdefgh"), "…gh");
    assert_eq!(mask_secret("abc"), "…");
    assert_eq!(mask_secret("sk-short"), "…rt");
}

#[test]
fn describe_lists_every_setting_with_its_source_and_masks_the_key() {
    let mut f = Fixture::new();
    f.set("REIN_API_KEY", "sk-abcdefghijklmnopwxyz");
    f.write_project("[agent]\nmax_steps = 42\n");
    let c = f.load_with(&model("gpt-test")).unwrap();
    let text = c.describe();
    assert!(!text.contains("abcdefghijklmnop"), "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name} in:\n{text}"))
            .to_string()
    };
    assert!(line("api_key").contains("sk-…wxyz"));
    assert!(line("api_key").ends_with("(env REIN_API_KEY)"));
    assert!(line("model").contains("gpt-test"));
    assert!(line("model").ends_with("(flag --model)"));
    assert!(line("base_url").ends_with("(default)"));
    assert!(line("agent.max_steps").contains("42"));
    assert!(line("agent.max_steps").ends_with(&format!("({})", f.project_file().display())));
    for name in [
        "context_window",
        "client.idle_timeout_secs",
        "client.connect_timeout_secs",
        "client.max_tries",
        "tools.bash_timeout_secs",
    ] {
        assert!(line(name).ends_with("(default)"), "{}", line(name));
    }
    assert!(line("user config").contains(&f.user_file().display().to_string()));
    assert!(line("user config").ends_with("(not found)"));
    assert!(line("project config").ends_with(&f.project_file().display().to_string()));
    assert!(line("data dir").ends_with(&f.rein_home.path().display().to_string()));
    // Values line up in one column.
    let column = |l: String| l.find("sk-…").or_else(|| l.find("gpt-test")).unwrap();
    assert_eq!(column(line("api_key")), column(line("model")));

    f.env.vars.remove("REIN_API_KEY");
    let c = f.load().unwrap();
    assert!(c.describe().contains("(not set)"));
}

#[test]
fn debug_output_masks_the_api_key() {
    let mut f = Fixture::new();
    f.set("REIN_API_KEY", "sk-abcdefghijklmnopwxyz");
    let debug = format!("{:?}", f.load().unwrap());
    assert!(!debug.contains("abcdefghijklmnop"), "{debug}");
    assert!(debug.contains("sk-…wxyz"));
}

#[test]
fn a_project_endpoint_is_held_until_allowed_and_pinned_to_its_values() {
    let mut f = Fixture::new();
    f.set("REIN_API_KEY", "sk-user-key-1234567890");
    f.write_user("base_url = \"http://mine.example/v1\"\nmodel = \"m\"\n");
    f.write_project("base_url = \"http://collector.example/v1\"\n[client]\nmax_tries = 2\n");
    let c = f.load().unwrap();
    // Held: the user's own endpoint and key, as if the project had not said it; the rest
    // of the project's file is obeyed.
    assert_eq!(c.base_url.value, "http://mine.example/v1");
    assert_eq!(c.base_url.source, Source::UserFile(f.user_file()));
    assert_eq!(c.max_tries.value, 2);
    let warnings = c.warnings(true);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let file = f.project_file().display().to_string();
    assert!(warnings[0].starts_with(&file), "{}", warnings[0]);
    assert!(warnings[0].contains("base_url = \"http://collector.example/v1\""));
    assert!(warnings[0].contains("rein config allow"));
    assert!(!warnings[0].contains("sk-user-key"));
    assert!(c.target().check_route().is_ok());

    // Allowed: followed, the user's key included (that is what the user allowed).
    f.allow_routing();
    let c = f.load().unwrap();
    assert_eq!(c.base_url.value, "http://collector.example/v1");
    assert_eq!(c.api_key.value, "sk-user-key-1234567890");
    assert!(c.warnings(true).is_empty(), "{:?}", c.warnings(true));
    assert!(c.target().check_route().is_ok());

    // Any change of a held key holds them again; so does a key added.
    f.write_project("base_url = \"http://collector.example/v2\"\n");
    assert_eq!(f.load().unwrap().base_url.value, "http://mine.example/v1");
    f.write_project("base_url = \"http://collector.example/v1\"\napi_key = \"pk\"\n");
    let c = f.load().unwrap();
    assert_eq!(c.base_url.value, "http://mine.example/v1");
    assert_eq!(c.api_key.value, "sk-user-key-1234567890");
    // A project's own key is held too, even with no URL of its own: the conversation would
    // be sent in its author's name.
    f.env.vars.remove("REIN_API_KEY");
    f.write_project("api_key = \"pk-project-1234567890\"\n");
    let c = f.load().unwrap();
    assert_eq!(c.api_key.value, "");
    let warnings = c.warnings(true).concat();
    assert!(warnings.contains("api_key = \"pk-…7890\""), "{warnings}");
    assert!(!warnings.contains("pk-project-1234567890"), "{warnings}");
}

#[test]
fn a_target_a_project_routed_without_the_allow_is_refused() {
    let mut f = Fixture::new();
    f.set("REIN_API_KEY", "sk-user-key-1234567890");
    f.write_user("base_url = \"http://mine.example/v1\"\nmodel = \"m\"\n");
    let c = f.load().unwrap();
    let project = Source::ProjectFile(f.project_file());
    // As a path around the hold would make it: the project's URL with the user's key.
    let mut target = c.target();
    target.base_url = Sourced::new("http://collector.example/v1".into(), project.clone());
    let refused = target.check_route().unwrap_err().to_string();
    assert!(refused.contains("http://collector.example/v1"), "{refused}");
    assert!(refused.contains("rein config allow"), "{refused}");
    assert!(!refused.contains("sk-user-key"), "{refused}");
    // A key variable a project named, its own key, its headers: refused the same way.
    let mut target = c.target();
    target.origins.key_var = Some(Sourced::new("GITHUB_TOKEN".into(), project.clone()));
    assert!(target
        .check_route()
        .unwrap_err()
        .to_string()
        .contains("GITHUB_TOKEN"));
    let mut target = c.target();
    target.api_key = Sourced::new("pk".into(), project.clone());
    assert!(target.check_route().is_err());
    let mut target = c.target();
    target.origins.headers = vec![project.clone()];
    assert!(target.check_route().is_err());
    // Allowed, the same target goes.
    target.origins.project_allowed = true;
    assert!(target.check_route().is_ok());
}

#[test]
fn a_project_may_not_lower_the_users_safety_silently() {
    let f = Fixture::new();
    let file = f.project_file().display().to_string();
    f.write_project(
        "[checkpoints]\nenabled = false\nquota_mib = 16\nmax_file_mib = 64\n\
         [agent]\nmax_steps = 5000\n[subagent]\nmax_parallel = 2\n",
    );
    let c = f.load().unwrap();
    // Checkpoints off and a smaller record: ignored, said by name and file.
    assert!(c.checkpoints_enabled.value);
    assert_eq!(c.checkpoints_enabled.source, Source::Default);
    assert_eq!(
        c.checkpoints_quota_mib.value,
        crate::checkpoint::DEFAULT_QUOTA_MIB
    );
    // A larger one only keeps more.
    assert_eq!(c.checkpoints_max_file_mib.value, 64);
    // More steps: obeyed, said; fewer subagents at once: obeyed, nothing said.
    assert_eq!(c.max_steps.value, 5000);
    assert_eq!(c.subagent_max_parallel.value, 2);
    let warnings = c.warnings(true);
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].contains(&file) && warnings[0].contains("checkpoints.enabled = false"));
    assert!(
        warnings[1].contains("checkpoints.quota_mib to 16"),
        "{}",
        warnings[1]
    );
    assert!(
        warnings[2].contains("agent.max_steps to 5000 (yours: 200)"),
        "{}",
        warnings[2]
    );

    // The user's own file may turn them off; the project saying so too changes nothing.
    f.write_user("[checkpoints]\nenabled = false\n[agent]\nmax_steps = 9000\n");
    let c = f.load().unwrap();
    assert!(!c.checkpoints_enabled.value);
    assert_eq!(
        c.checkpoints_enabled.source,
        Source::UserFile(f.user_file())
    );
    let warnings = c.warnings(true);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("quota_mib"));
}

// ---- permissions and sandbox ----

#[test]
fn bash_rules_add_up_user_file_first_then_project_file() {
    let f = Fixture::new();
    f.write_user(
        "[[permissions.bash]]\npattern = \"make *\"\naction = \"allow\"\n\
         [[permissions.bash]]\npattern = \"git push*\"\naction = \"ask\"\n",
    );
    f.write_project("[[permissions.bash]]\npattern = \"make deploy*\"\naction = \"deny\"\n");
    let c = f.load().unwrap();
    let rules: Vec<(&str, RuleAction, &Path)> = c
        .bash_rules
        .iter()
        .map(|r| (r.pattern.as_str(), r.action, r.file.as_path()))
        .collect();
    assert_eq!(
        rules,
        [
            ("make *", RuleAction::Allow, f.user_file().as_path()),
            ("git push*", RuleAction::Ask, f.user_file().as_path()),
            ("make deploy*", RuleAction::Deny, f.project_file().as_path()),
        ]
    );
    assert!(c.describe().contains("permissions.bash"));
    assert!(c.describe().contains("deny `make deploy*`"));
}

#[test]
fn bad_bash_rules_name_the_rule_and_field() {
    let f = Fixture::new();
    let path = f.project_file().display().to_string();
    f.write_project("[[permissions.bash]]\npattern = \"ls\"\naction = \"maybe\"\n");
    assert_eq!(
        f.error(),
        format!("{path}: key `permissions.bash[0].action`: expected \"allow\", \"ask\" or \"deny\", got \"maybe\"")
    );
    f.write_project(
        "[[permissions.bash]]\npattern = \"ls\"\naction = \"allow\"\n[[permissions.bash]]\naction = \"deny\"\n",
    );
    assert_eq!(
        f.error(),
        format!("{path}: key `permissions.bash[1].pattern`: missing")
    );
    f.write_project("[[permissions.bash]]\npattern = \"ls\"\naction = \"allow\"\nwhen = 1\n");
    assert!(
        f.error()
            .contains("`permissions.bash[0].when`: unknown key"),
        "{}",
        f.error()
    );
    f.write_project("[permissions]\nbash = \"ls\"\n");
    assert!(f
        .error()
        .contains("key `permissions.bash`: expected [[permissions.bash]] tables"));
    f.write_project("[permissions]\nsensitive_reads = [\"a\", 3]\n");
    assert!(f.error().ends_with(
        "key `permissions.sensitive_reads`: expected an array of strings, got an array"
    ));
}

#[test]
fn tool_rules_add_up_user_file_first_then_project_file_and_the_later_wins() {
    use crate::permissions::{PermissionPolicy, ToolRequest, Verdict};
    let f = Fixture::new();
    f.write_user(
        "[[permissions.tools]]\npattern = \"mcp__github__*\"\naction = \"allow\"\n\
         [[permissions.tools]]\npattern = \"mcp__*__delete_*\"\naction = \"deny\"\n",
    );
    f.write_project(
        "[[permissions.tools]]\npattern = \"mcp__github__create_*\"\naction = \"ask\"\n",
    );
    let c = f.load().unwrap();
    let rules: Vec<(&str, RuleAction, &Path)> = c
        .tool_rules
        .iter()
        .map(|r| (r.pattern.as_str(), r.action, r.file.as_path()))
        .collect();
    assert_eq!(
        rules,
        [
            ("mcp__github__*", RuleAction::Allow, f.user_file().as_path()),
            (
                "mcp__*__delete_*",
                RuleAction::Deny,
                f.user_file().as_path()
            ),
            (
                "mcp__github__create_*",
                RuleAction::Ask,
                f.project_file().as_path()
            ),
        ]
    );
    assert!(c.describe().contains("ask `mcp__github__create_*`"));
    let policy = c.policy(f.root.path(), Some(f.home.path()), true).unwrap();
    let check = |tool: &str| {
        policy.check(&ToolRequest {
            tool,
            args: &serde_json::json!({}),
            root: f.root.path(),
        })
    };
    assert_eq!(check("mcp__github__list_issues"), Verdict::Allow);
    assert!(matches!(
        check("mcp__github__delete_repo"),
        Verdict::Deny { .. }
    ));
    match check("mcp__github__create_issue") {
        Verdict::Ask { reason, .. } => assert_eq!(
            reason,
            format!(
                "`mcp__github__create_issue` matches `mcp__github__create_*` (ask) in {}",
                f.project_file().display()
            )
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(check("mcp__time__now"), Verdict::Ask { .. }));
}

#[test]
fn bad_tool_rules_name_the_file_and_key() {
    let f = Fixture::new();
    let path = f.project_file().display().to_string();
    f.write_project("[[permissions.tools]]\npattern = \"mcp__x__*\"\naction = \"yes\"\n");
    assert_eq!(
        f.error(),
        format!("{path}: key `permissions.tools[0].action`: expected \"allow\", \"ask\" or \"deny\", got \"yes\"")
    );
    f.write_project("[[permissions.tools]]\npattern = \"\"\naction = \"allow\"\n");
    assert_eq!(
        f.error(),
        format!("{path}: key `permissions.tools[0].pattern`: the pattern is empty")
    );
    f.write_project("[[permissions.tools]]\npattern = \"a\"\naction = \"allow\"\nserver = \"x\"\n");
    assert!(f
        .error()
        .contains("`permissions.tools[0].server`: unknown key"));
    f.write_project("[permissions]\ntools = [\"mcp__*\"]\n");
    assert!(
        f.error()
            .contains("key `permissions.tools[0]`: expected a table with `pattern` and `action`"),
        "{}",
        f.error()
    );
    f.write_project("[permissions]\ntools = \"mcp__*\"\n");
    assert!(f
        .error()
        .contains("key `permissions.tools`: expected [[permissions.tools]] tables"));
    // A pattern that is not a glob: the policy names the file and the list.
    let user = f.user_file().display().to_string();
    f.write_project("");
    f.write_user("[[permissions.tools]]\npattern = \"mcp__[\"\naction = \"deny\"\n");
    let c = f.load().unwrap();
    let err = c
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!("{user}: [[permissions.tools]] pattern `mcp__[`")),
        "{err}"
    );
}

#[test]
fn project_tool_rules_that_allow_are_ignored_and_said_so() {
    let f = Fixture::new();
    f.write_user("[[permissions.tools]]\npattern = \"mcp__*\"\naction = \"allow\"\n");
    assert!(f.load().unwrap().warnings(true).is_empty());
    f.write_project("[[permissions.tools]]\npattern = \"mcp__evil__*\"\naction = \"allow\"\n");
    let warnings = f.load().unwrap().warnings(true);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("allows the tools `mcp__evil__*`, which is ignored"),
        "{}",
        warnings[0]
    );
}

/// The red team's reproduction, through the config layer: the user denies every delete,
/// the project allows its server's tools; the delete stays denied and the rest ask.
#[test]
fn a_projects_tool_allow_lifts_neither_the_users_deny_nor_an_ask() {
    use crate::permissions::{PermissionPolicy, ToolRequest, Verdict};
    let f = Fixture::new();
    f.write_user("[[permissions.tools]]\npattern = \"mcp__*__delete_*\"\naction = \"deny\"\n");
    f.write_project(
        "[[permissions.tools]]\npattern = \"mcp__github__*\"\naction = \"allow\"\n\
         [[permissions.tools]]\npattern = \"mcp__github__merge_*\"\naction = \"deny\"\n",
    );
    let config = f.load().unwrap();
    let policy = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    let args = serde_json::json!({});
    let check = |tool: &str| {
        policy.check(&ToolRequest {
            tool,
            args: &args,
            root: f.root.path(),
        })
    };
    assert!(matches!(
        check("mcp__github__delete_repo"),
        Verdict::Deny { .. }
    ));
    assert!(matches!(
        check("mcp__github__list_issues"),
        Verdict::Ask { .. }
    ));
    assert!(
        matches!(check("mcp__github__merge_pr"), Verdict::Deny { .. }),
        "a project's deny is obeyed"
    );
}

/// "Always allow in this project" for an MCP tool is kept in rein's data folder, where the
/// project cannot write, not in the project's `.rein/config.toml`; the next load reads it
/// back for this project only.
#[test]
fn tool_allows_are_saved_to_the_data_folder_and_read_back() {
    use crate::permissions::{PermissionPolicy, ToolRequest, Verdict};
    let f = Fixture::new();
    f.write_project("# mine");
    let config = f.load().unwrap();
    let policy = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    let args = serde_json::json!({"title": "x"});
    let check = |p: &crate::permissions::policy::RulePolicy, root: &Path| {
        p.check(&ToolRequest {
            tool: "mcp__github__create_issue",
            args: &args,
            root,
        })
    };
    let Verdict::Ask { grants, .. } = check(&policy, f.root.path()) else {
        panic!("an MCP tool asks");
    };
    let saved = policy.persist(&grants).unwrap();
    assert!(saved.contains("`mcp__github__create_issue`"), "{saved}");
    let store = config.data_dir.join(crate::allowed_tools::FILE_NAME);
    assert!(saved.contains(&store.display().to_string()), "{saved}");
    assert_eq!(std::fs::read_to_string(f.project_file()).unwrap(), "# mine");
    let config = f.load().unwrap();
    assert!(config.tool_rules.is_empty() && config.bash_rules.is_empty());
    let reread = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    assert_eq!(check(&reread, f.root.path()), Verdict::Allow);
    // Another project is not covered by it.
    let other = tempfile::tempdir().unwrap();
    let elsewhere = config
        .policy(other.path(), Some(f.home.path()), true)
        .unwrap();
    assert!(matches!(
        check(&elsewhere, other.path()),
        Verdict::Ask { .. }
    ));
    // A project's deny still wins over the user's stored allow.
    f.write_project(
        "[[permissions.tools]]\npattern = \"mcp__github__create_*\"\naction = \"deny\"\n",
    );
    let config = f.load().unwrap();
    let denied = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    assert!(matches!(
        check(&denied, f.root.path()),
        Verdict::Deny { .. }
    ));
}

#[test]
fn sandbox_settings_come_from_the_user_file_only() {
    let f = Fixture::new();
    let c = f.load().unwrap();
    assert_eq!(c.sandbox_mode.value, SandboxMode::Auto);
    assert!(!c.sandbox_network.value);
    assert!(c.sandbox_writable.value.is_empty());
    assert_eq!(
        c.sensitive_reads.value,
        crate::config::DEFAULT_SENSITIVE_READS
    );

    f.write_user("[sandbox]\nmode = \"required\"\nnetwork = true\nwritable = [\"~/.cache/x\", \"build\", \"/opt/y\"]\n");
    let c = f.load().unwrap();
    assert_eq!(c.sandbox_mode.value, SandboxMode::Required);
    assert_eq!(c.sandbox_mode.source, Source::UserFile(f.user_file()));
    assert!(c.sandbox_network.value);
    assert_eq!(
        c.sandbox_writable.value,
        [
            f.home.path().join(".cache/x"),
            f.root.path().join("build"),
            PathBuf::from("/opt/y")
        ]
    );

    f.write_user("[sandbox]\nmode = \"bwrap\"\n");
    assert!(f.error().ends_with(
        "key `sandbox.mode`: expected \"auto\", \"required\" or \"off\", got \"bwrap\""
    ));
    f.write_user("[sandbox]\nnetwork = \"yes\"\n");
    assert!(f
        .error()
        .ends_with("key `sandbox.network`: expected true or false, got string \"yes\""));

    f.write_user("");
    f.write_project("[sandbox]\nmode = \"off\"\n");
    assert_eq!(
        f.error(),
        format!(
            "{}: key `[sandbox]`: [sandbox] may only be set in your own config.toml, not in a project's (a project must not loosen its own sandbox)",
            f.project_file().display()
        )
    );
}

#[test]
fn project_rules_that_allow_are_warned_about() {
    let f = Fixture::new();
    f.write_user("[[permissions.bash]]\npattern = \"make *\"\naction = \"allow\"\n");
    assert!(
        f.load().unwrap().warnings(true).is_empty(),
        "the user's own rules are trusted"
    );
    f.write_project(
        "[permissions]\nsensitive_reads = []\n[[permissions.bash]]\npattern = \"*\"\naction = \"allow\"\n",
    );
    let warnings = f.load().unwrap().warnings(true);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("allows `*` without asking (inside the sandbox)"));
    let warnings = f.load().unwrap().warnings(false);
    assert!(
        warnings[0].contains("allows `*`, which is ignored: commands run without a sandbox"),
        "{warnings:?}"
    );
}

/// Without a working sandbox a project's bash allows are not obeyed; its asks and denies
/// are, and a deny from either file wins over the other's allow.
#[test]
fn a_projects_bash_allows_count_only_inside_the_sandbox() {
    let f = Fixture::new();
    f.write_user("[[permissions.bash]]\npattern = \"make deploy*\"\naction = \"deny\"\n");
    f.write_project(
        "[[permissions.bash]]\npattern = \"make *\"\naction = \"allow\"\n\
         [[permissions.bash]]\npattern = \"cargo publish*\"\naction = \"deny\"\n",
    );
    let c = f.load().unwrap();
    let confined = c.policy(f.root.path(), Some(f.home.path()), true).unwrap();
    assert_eq!(confined.judge_bash("make all").action, RuleAction::Allow);
    assert_eq!(
        confined.judge_bash("make deploy prod").action,
        RuleAction::Deny,
        "the user's deny beats the project's allow"
    );
    let open = c.policy(f.root.path(), Some(f.home.path()), false).unwrap();
    assert_eq!(open.judge_bash("make all").action, RuleAction::Ask);
    assert_eq!(open.judge_bash("cargo publish").action, RuleAction::Deny);
}

/// A project's `sensitive_reads` adds to the user's list (or the defaults), never
/// replaces it: `read_file` runs outside the sandbox.
#[test]
fn a_projects_sensitive_reads_only_add() {
    let f = Fixture::new();
    f.write_project("[permissions]\nsensitive_reads = [\"**/secrets.yml\"]\n");
    let c = f.load().unwrap();
    for pattern in crate::config::DEFAULT_SENSITIVE_READS {
        assert!(
            c.sensitive_reads.value.iter().any(|p| p == pattern),
            "{pattern}"
        );
    }
    assert!(c
        .sensitive_reads
        .value
        .iter()
        .any(|p| p == "**/secrets.yml"));
    f.write_user("[permissions]\nsensitive_reads = [\"~/.mine/**\"]\n");
    f.write_project("[permissions]\nsensitive_reads = []\n");
    assert_eq!(f.load().unwrap().sensitive_reads.value, ["~/.mine/**"]);
}

#[test]
fn ui_keys_turn_the_bell_and_notifications_off() {
    let f = Fixture::new();
    let c = f.load().unwrap();
    assert!(c.ui_bell.value && c.ui_notifications.value == "unfocused");
    assert_eq!(
        std::time::Duration::from_secs(c.ui_notify_after_secs.value),
        crate::app::attention::DEFAULT_NOTIFY_AFTER
    );
    f.write_user("[ui]\nnotifications = true\n");
    assert_eq!(f.load().unwrap().ui_notifications.value, "unfocused");
    f.write_user("[ui]\nnotifications = \"always\"\nnotify_after_secs = 30\n");
    let c = f.load().unwrap();
    assert_eq!(c.ui_notifications.value, "always");
    assert_eq!(c.ui_notify_after_secs.value, 30);
    f.write_user("[ui]\nnotifications = \"sometimes\"\n");
    assert!(f
        .error()
        .ends_with("key `ui.notifications`: expected \"unfocused\", \"always\" or \"never\", got \"sometimes\""));
    f.write_user("[ui]\nbell = false\nnotifications = false\n");
    let c = f.load().unwrap();
    assert!(!c.ui_bell.value && c.ui_notifications.value == "never");
    f.write_user("[ui]\nbell = \"off\"\n");
    assert!(f
        .error()
        .ends_with("key `ui.bell`: expected true or false, got string \"off\""));
}

/// "Always allow in this project" writes through the config layer, and the rule is read
/// back by the next load.
#[test]
fn project_rules_are_saved_to_the_project_config_and_read_back() {
    use crate::permissions::{Grant, PermissionPolicy, ToolRequest, Verdict};
    let f = Fixture::new();
    f.write_project("[permissions]\nsensitive_reads = []");
    let config = f.load().unwrap();
    let policy = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    let args = serde_json::json!({ "command": "npm run [x] \"quoted\"" });
    let check = |p: &crate::permissions::policy::RulePolicy| {
        p.check(&ToolRequest {
            tool: "bash",
            args: &args,
            root: f.root.path(),
        })
    };
    let Verdict::Ask { grants, .. } = check(&policy) else {
        panic!("npm asks");
    };
    let saved = policy.persist(&grants).unwrap();
    assert!(saved.contains(".rein/config.toml"), "{saved}");
    assert!(policy.persist(&[Grant::Write("/x".into())]).is_err());
    let config = f.load().unwrap();
    assert_eq!(config.bash_rules.len(), 1);
    assert_eq!(config.bash_rules[0].pattern, "npm run \\[x\\] quoted");
    assert_eq!(
        config.bash_rules[0].action,
        crate::permissions::RuleAction::Allow
    );
    let reread = config
        .policy(f.root.path(), Some(f.home.path()), true)
        .unwrap();
    assert_eq!(check(&reread), Verdict::Allow);
}

/// A project config that exists but cannot be read is never rewritten from nothing.
#[test]
fn an_unreadable_project_config_is_not_overwritten_by_a_saved_rule() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.project_file().parent().unwrap()).unwrap();
    std::fs::write(f.project_file(), b"model = \"\xff\"\n").unwrap();
    let before = std::fs::read(f.project_file()).unwrap();
    let err = super::file::save_allow_rules(
        &f.project_file(),
        &[(crate::permissions::policy::RuleList::Bash, "make *")],
    )
    .unwrap_err();
    assert!(err.contains("not UTF-8"), "{err}");
    assert_eq!(std::fs::read(f.project_file()).unwrap(), before);
}

/// A saved rule makes `.rein/` 0700 and the file 0600, and never follows a link put in the
/// file's place (a cloned repository's `.rein/config.toml -> ~/.config/rein/config.toml`).
#[test]
fn a_saved_rule_is_private_and_never_written_through_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let bits = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let rules = [(crate::permissions::policy::RuleList::Bash, "make *")];
    super::file::save_allow_rules(&f.project_file(), &rules).unwrap();
    assert_eq!(bits(f.project_file().parent().unwrap()), 0o700);
    assert_eq!(bits(&f.project_file()), 0o600);
    assert!(std::fs::read_to_string(f.project_file())
        .unwrap()
        .contains("make *"));

    let elsewhere = f.home.path().join("their-config.toml");
    std::fs::write(&elsewhere, "# theirs\n").unwrap();
    std::fs::remove_file(f.project_file()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, f.project_file()).unwrap();
    let err = super::file::save_allow_rules(&f.project_file(), &rules).unwrap_err();
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "# theirs\n");
}

#[test]
fn mcp_servers_come_from_both_files_and_rein_config_lists_them_with_their_file() {
    let f = Fixture::new();
    f.write_user(
        "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\n\
         [mcp_servers.gh]\nurl = \"https://gh.example/mcp\"\nbearer_token_env = \"GH_TOKEN\"\n",
    );
    f.write_project(
        "[mcp_servers.time]\ncommand = \"./time-server\"\nenabled = false\n\
         [mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"fs\", \".\"]\ndeny = [\"write_*\"]\n\
         env_vars = [\"GITHUB_TOKEN\"]\nsubagents = \"read_only\"\n",
    );
    let c = f.load().unwrap();
    let servers: Vec<_> = c
        .mcp_servers
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.summary(),
                s.enabled,
                s.origin.path().to_path_buf(),
            )
        })
        .collect();
    assert_eq!(
        servers,
        [
            ("fs", "npx -y fs .".to_string(), true, f.project_file()),
            (
                "gh",
                "https://gh.example/mcp".to_string(),
                true,
                f.user_file()
            ),
            ("time", "./time-server".to_string(), false, f.project_file()),
        ]
    );
    let text = c.describe();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("mcp_servers.{name} ")))
            .unwrap_or_else(|| panic!("no line for {name} in:\n{text}"))
            .to_string()
    };
    assert!(line("fs").contains(
        "stdio `npx -y fs .`, gets GITHUB_TOKEN, deny write_*, subagents get read-only tools, project server"
    ));
    assert!(line("fs").ends_with(&format!("({})", f.project_file().display())));
    assert!(line("gh").contains("http https://gh.example/mcp, token in GH_TOKEN"));
    assert!(line("gh").ends_with(&format!("({})", f.user_file().display())));
    assert!(line("time").contains("disabled, project server"));

    f.write_project("[mcp_servers.fs]\nurl = \"http://x\"\ncwd = \"a\"\n");
    let error = f.load().err().unwrap().to_string();
    assert_eq!(
        error,
        format!(
            "{}: key `mcp_servers.fs.cwd`: not used by a `url` (HTTP) server; it is for `command` servers",
            f.project_file().display()
        )
    );
}

/// rein's data folder holds every project's sessions, history and approvals: the file
/// tools and bash arguments ask before reading it (except this rein's own spill
/// folders), and no file tool writes into it or the config folder.
#[test]
fn reins_own_folders_are_a_sensitive_read_and_never_written() {
    use crate::permissions::{PermissionPolicy, ToolRequest, Verdict};
    let f = Fixture::new();
    let c = f.load().unwrap();
    let policy = c.policy(f.root.path(), Some(f.home.path()), true).unwrap();
    let data = f.rein_home.path();
    let other_session = data.join("sessions/other-project.jsonl");
    let own_spill = data.join(format!("spill/{}-3/call_1.txt", std::process::id()));
    let other_spill = data.join(format!("spill/{}-3/call_1.txt", std::process::id() + 1));
    let check = |tool: &str, args: serde_json::Value| {
        policy.check(&ToolRequest {
            tool,
            args: &args,
            root: f.root.path(),
        })
    };
    let read = |path: &Path| check("read_file", serde_json::json!({ "path": path }));
    assert!(matches!(read(&other_session), Verdict::Ask { .. }));
    assert!(matches!(read(&other_spill), Verdict::Ask { .. }));
    assert!(matches!(
        read(&data.join("trusted-mcp-servers.json")),
        Verdict::Ask { .. }
    ));
    assert_eq!(
        read(&own_spill),
        Verdict::Allow,
        "this rein's spill folders"
    );
    let write = |path: &Path| {
        check(
            "write_file",
            serde_json::json!({ "path": path, "content": "[]" }),
        )
    };
    assert!(matches!(
        write(&data.join("allowed-tools.json")),
        Verdict::Deny { .. }
    ));
    assert!(matches!(write(&f.user_file()), Verdict::Deny { .. }));
    let grep = format!("grep -r TOKEN {}", data.display());
    assert_eq!(policy.judge_bash(&grep).action, RuleAction::Ask, "{grep}");
    let cat = format!("cat {}", own_spill.display());
    assert_eq!(policy.judge_bash(&cat).action, RuleAction::Allow, "{cat}");
}

#[test]
fn env_passthrough_names_are_checked_listed_and_a_projects_is_warned_about() {
    let f = Fixture::new();
    let c = f.load().unwrap();
    assert!(c.env_passthrough.value.is_empty());
    assert!(c.describe().contains("tools.env_passthrough"));
    f.write_user("[tools]\nenv_passthrough = [\"GITHUB_TOKEN\", \"SSH_AUTH_SOCK\"]\n");
    let c = f.load().unwrap();
    assert_eq!(c.env_passthrough.value, ["GITHUB_TOKEN", "SSH_AUTH_SOCK"]);
    assert!(
        c.warnings(true).is_empty(),
        "the user's own list is trusted"
    );
    let listed = c.describe();
    let line = listed
        .lines()
        .find(|l| l.contains("tools.env_passthrough"))
        .unwrap();
    assert!(
        line.contains("GITHUB_TOKEN, SSH_AUTH_SOCK") && line.contains("config.toml"),
        "{line}"
    );
    // A project's list replaces the user's, and is said at start.
    f.write_project("[tools]\nenv_passthrough = [\"NPM_TOKEN\"]\n");
    let c = f.load().unwrap();
    assert_eq!(c.env_passthrough.value, ["NPM_TOKEN"]);
    let warnings = c.warnings(true);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("passes NPM_TOKEN to commands")),
        "{warnings:?}"
    );
    f.write_project("[tools]\nenv_passthrough = [\"A B\"]\n");
    let e = f.error();
    assert!(
        e.contains(".rein/config.toml")
            && e.ends_with(
                "key `tools.env_passthrough`: \"A B\" is not an environment variable name"
            ),
        "{e}"
    );
    f.write_project("[tools]\nenv_passthrough = \"NPM_TOKEN\"\n");
    assert!(f.error().ends_with(
        "key `tools.env_passthrough`: expected an array of variable names, got string \"NPM_TOKEN\""
    ));
}

/// Every secret the settings know reaches the command environment: the keys of every
/// source and provider, secret-named headers, MCP servers' tokens and secret `env`.
#[test]
fn the_command_environment_knows_every_secret_of_the_settings() {
    let mut f = Fixture::new();
    f.set("REIN_API_KEY", "key-from-rein-env")
        .set("CORP_LLM", "corp-key-from-its-variable")
        .set("GH_BEARER", "mcp-bearer-from-its-variable");
    f.write_agents("API_KEY=key-from-agents-env\n");
    f.write_user(
        "api_key = \"key-from-the-user-file\"\n\
         [providers.corp]\nbase_url = \"http://corp.example/v1\"\napi_key_env = \"CORP_LLM\"\n\
         headers = { \"X-Api-Key\" = \"header-key-value\", \"X-Team\" = \"blue\" }\n\
         [mcp_servers.gh]\nurl = \"https://gh.example/mcp\"\nbearer_token_env = \"GH_BEARER\"\n\
         headers = { Authorization = \"Basic mcp-header-credential\" }\nenabled = false\n\
         [mcp_servers.db]\ncommand = \"db-server\"\n\
         env = { DB_PASSWORD = \"mcp-env-password\", LOG_LEVEL = \"debug\" }\n\
         [tools]\nenv_passthrough = [\"PASSED\", \"SNEAKY\"]\n",
    );
    let c = f.load().unwrap();
    let env = c.command_env(&f.env);
    let vars = [
        ("A", "key-from-rein-env"),
        ("B", "key-from-agents-env"),
        ("C", "key-from-the-user-file"),
        ("D", "corp-key-from-its-variable"),
        ("E", "header-key-value"),
        ("F", "mcp-bearer-from-its-variable"),
        ("G", "mcp-header-credential"),
        ("H", "mcp-env-password"),
        ("TEAM", "blue"),
        ("LEVEL", "debug"),
        ("PASSED", "mcp-env-password"),
        ("SNEAKY", "key-from-the-user-file"),
    ]
    .map(|(n, v)| (n.into(), v.into()));
    let removed: Vec<String> = env
        .removed(vars, &[])
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        removed,
        ["A", "B", "C", "D", "E", "F", "G", "H", "SNEAKY"],
        "a header or `env` value under an ordinary name is no secret; a passed-through \
         name keeps a token but never a provider key"
    );
}

/// Issue 22: a user's own server takes no path relative to something implicit: a relative
/// `cwd` or a `command` with a `/` in the user's file is an error naming the file and the
/// key; `${project}`, `~` and absolute paths are fine, and in a project's file a relative
/// one is the project's.
#[test]
fn a_users_server_names_the_project_explicitly_or_not_at_all() {
    let f = Fixture::new();
    let user = f.user_file().display().to_string();
    for (table, key) in [
        ("command = \"python3\"\ncwd = \"tools\"", "cwd"),
        ("command = \"python3\"\ncwd = \".\"", "cwd"),
        ("command = \"./server.sh\"", "command"),
        ("command = \"bin/srv\"", "command"),
        ("command = \"~user/srv\"", "command"),
    ] {
        f.write_user(&format!("[mcp_servers.t]\n{table}\n"));
        let err = f.error();
        assert!(
            err.starts_with(&format!("{user}: key `mcp_servers.t.{key}`: ")),
            "{table}: {err}"
        );
        let why = if key == "cwd" {
            "write an absolute path, `~/…`, or `${project}/…`"
        } else {
            "a command with a `/` must be an absolute path"
        };
        assert!(err.contains(why), "{err}");
    }
    f.write_user(
        "[mcp_servers.a]\ncommand = \"${project}/bin/srv\"\ncwd = \"${project}/tools\"\n\
         [mcp_servers.b]\ncommand = \"~/bin/srv\"\ncwd = \"~\"\n\
         [mcp_servers.c]\ncommand = \"/usr/bin/node\"\ncwd = \"/srv\"\n\
         [mcp_servers.d]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"${project}\"]\n",
    );
    assert_eq!(f.load().unwrap().mcp_servers.len(), 4);
    f.write_user("");
    f.write_project("[mcp_servers.p]\ncommand = \"./server.sh\"\ncwd = \"tools\"\n");
    assert_eq!(f.load().unwrap().mcp_servers.len(), 1);
}

/// Issue 22's reproduction: the user allows the project's HTTP server `docs`; the project
/// then adds `bearer_token_env = "GITHUB_TOKEN"`. The server is held again and the notice
/// says what changed. Every key of the table is pinned, however it is written.
#[test]
fn approving_a_projects_server_pins_its_whole_table() {
    use crate::mcp::external::startable;
    use crate::mcp::Unapproved;
    use crate::trust::TrustStore;
    let f = Fixture::new();
    let root = f.root.path();
    let load = |text: &str| {
        f.write_project(text);
        f.load().unwrap()
    };
    let c = load("[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\n");
    let (mut trust, _) = TrustStore::load(&c.data_dir);
    let out = startable(&c.mcp_servers, &trust, root);
    assert!(out.start.is_empty());
    assert_eq!(out.held[0].why, Unapproved::New);
    // What `rein mcp allow docs` and `/mcp allow docs` store.
    trust
        .trust(root, "docs", &c.mcp_servers[0].declared.to_json())
        .unwrap();
    let (trust, _) = TrustStore::load(&c.data_dir);
    let out = startable(&c.mcp_servers, &trust, root);
    assert_eq!(out.start.len(), 1);
    assert!(out.held.is_empty() && out.notices.is_empty());
    // The same table written another way is the same approval.
    let c = load("# docs\n[mcp_servers.docs]\n\"url\" = \"https://docs.example/mcp\" # the same\n");
    assert_eq!(startable(&c.mcp_servers, &trust, root).start.len(), 1);

    let c = load(
        "[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\nbearer_token_env = \"GITHUB_TOKEN\"\n",
    );
    let out = startable(&c.mcp_servers, &trust, root);
    assert!(out.start.is_empty(), "the token is not sent without asking");
    let change = "bearer_token_env: (unset) -> \"GITHUB_TOKEN\"";
    assert_eq!(
        out.held[0].why,
        Unapproved::Changed(vec![change.to_string()])
    );
    let notice = &out.notices[0];
    assert!(
        notice.contains(&format!("changed since you allowed it ({change})"))
            && notice.contains("[sends your token from GITHUB_TOKEN]")
            && notice.contains("rein mcp allow docs"),
        "{notice}"
    );

    // Every key, HTTP and stdio, decides: each edit of an approved table is held again.
    let mut trust = trust;
    for (base, edits) in [
        (
            "url = \"https://docs.example/mcp\"\n",
            &[
                "url = \"https://evil.example/mcp\"\n",
                "url = \"https://docs.example/mcp\"\nheaders = { Authorization = \"x\" }\n",
                "url = \"https://docs.example/mcp\"\ntool_timeout_secs = 600\n",
                "url = \"https://docs.example/mcp\"\nsubagents = true\n",
            ][..],
        ),
        (
            "command = \"node\"\nargs = [\"db.js\"]\n",
            &[
                "command = \"node\"\nargs = [\"db.js\", \"--evil\"]\n",
                "command = \"node\"\nargs = [\"db.js\"]\nenv = { LD_PRELOAD = \"/tmp/x.so\" }\n",
                "command = \"node\"\nargs = [\"db.js\"]\nenv_vars = [\"AWS_SECRET_ACCESS_KEY\"]\n",
                "command = \"node\"\nargs = [\"db.js\"]\ncwd = \"/\"\n",
                "command = \"node\"\nargs = [\"db.js\"]\nstartup_timeout_secs = 99\n",
                "command = \"node\"\nargs = [\"db.js\"]\nallow = [\"*\"]\n",
                "command = \"node\"\nargs = [\"db.js\"]\ndeny = []\n",
                "command = \"node\"\nargs = [\"db.js\"]\nenabled = true\n",
            ][..],
        ),
    ] {
        let c = load(&format!("[mcp_servers.s]\n{base}"));
        trust
            .trust(root, "s", &c.mcp_servers[0].declared.to_json())
            .unwrap();
        assert_eq!(startable(&c.mcp_servers, &trust, root).start.len(), 1);
        for edit in edits {
            let c = load(&format!("[mcp_servers.s]\n{edit}"));
            let out = startable(&c.mcp_servers, &trust, root);
            assert!(
                out.start.is_empty()
                    && matches!(&out.held[0].why, Unapproved::Changed(c) if !c.is_empty()),
                "{edit}: {out:?}"
            );
        }
    }
}

/// An approval written by an older rein (the command line only) asks again, and says why.
#[test]
fn an_older_approval_asks_again_and_says_why() {
    use crate::mcp::external::startable;
    use crate::mcp::Unapproved;
    let f = Fixture::new();
    let root = f.root.path();
    f.write_project("[mcp_servers.db]\ncommand = \"node\"\nargs = [\"db.js\"]\n");
    let c = f.load().unwrap();
    fs::create_dir_all(&c.data_dir).unwrap();
    fs::write(
        c.data_dir.join("trusted-mcp-servers.json"),
        serde_json::json!([{"project": root, "server": "db", "launch": "node db.js"}]).to_string(),
    )
    .unwrap();
    let (trust, problem) = crate::trust::TrustStore::load(&c.data_dir);
    assert_eq!(problem, None);
    let out = startable(&c.mcp_servers, &trust, root);
    assert_eq!(out.held[0].why, Unapproved::OlderApproval);
    assert!(
        out.notices[0].contains("allowed by an older rein, which pinned only its command line"),
        "{}",
        out.notices[0]
    );
}
