//! Defaults and the order the sources win in, where the files are, and `~/.agents/env`.

use super::*;

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
