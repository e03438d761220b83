//! The one-line errors of bad settings, naming the file and key, and the checks on values.

use super::*;

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
