//! How settings are shown (sources, masked secrets), and a project's routing and safety
//! settings, held until allowed.

use super::*;

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
