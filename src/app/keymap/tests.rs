//! Unit tests for the keymap: the compiled-in one parses, bad names are errors, key names
//! round-trip, presses are normalised and hints come from the descriptions.

use super::*;

#[test]
fn the_compiled_in_keymap_parses() {
    let keymap = Keymap::parse(DEFAULT_KEYMAP).unwrap_or_else(|e| panic!("{e}"));
    for mode in Mode::ALL {
        assert!(
            !keymap.bindings(mode).is_empty(),
            "{} is empty",
            mode.name()
        );
        for b in keymap.bindings(mode) {
            assert!(
                !b.desc.trim().is_empty(),
                "{:?} has no description",
                b.action
            );
            assert!(!b.keys.is_empty(), "{:?} has no keys", b.action);
        }
    }
    assert_eq!(super::keymap(), &keymap);
}

#[test]
fn unknown_key_names_and_actions_are_errors() {
    for bad in [
        r#"global = [{ on = "ctrl-cc", action = "cancel", desc = "x" }]"#,
        r#"global = [{ on = "hyper-x", action = "cancel", desc = "x" }]"#,
        r#"global = [{ on = "f99", action = "cancel", desc = "x" }]"#,
        r#"global = [{ on = "ctrl-", action = "cancel", desc = "x" }]"#,
        r#"global = [{ on = "shift-y", action = "cancel", desc = "x" }]"#,
        r#"global = [{ on = "ctrl-c", action = "explode", desc = "x" }]"#,
        r#"global = [{ on = "ctrl-c", action = "cancel", when = "sometimes", desc = "x" }]"#,
        r#"global = [{ on = "ctrl-c", action = "cancel" }]"#,
        r#"globl = [{ on = "ctrl-c", action = "cancel", desc = "x" }]"#,
        r#"global = [{ on = "ctrl-c", action = "cancel", desc = "x" }, { on = "ctrl-c", action = "quit", desc = "y" }]"#,
    ] {
        assert!(Keymap::parse(bad).is_err(), "accepted: {bad}");
    }
}

#[test]
fn key_names_parse_and_print() {
    let cases = [
        (
            "ctrl-c",
            KeyCode::Char('c'),
            KeyModifiers::CONTROL,
            "Ctrl-C",
        ),
        (
            "Ctrl-C",
            KeyCode::Char('c'),
            KeyModifiers::CONTROL,
            "Ctrl-C",
        ),
        (
            "shift-enter",
            KeyCode::Enter,
            KeyModifiers::SHIFT,
            "Shift-Enter",
        ),
        ("alt-enter", KeyCode::Enter, KeyModifiers::ALT, "Alt-Enter"),
        ("pgup", KeyCode::PageUp, KeyModifiers::NONE, "PgUp"),
        ("pagedown", KeyCode::PageDown, KeyModifiers::NONE, "PgDn"),
        ("f2", KeyCode::F(2), KeyModifiers::NONE, "F2"),
        ("y", KeyCode::Char('y'), KeyModifiers::NONE, "y"),
        ("Y", KeyCode::Char('Y'), KeyModifiers::NONE, "Y"),
        ("-", KeyCode::Char('-'), KeyModifiers::NONE, "-"),
        ("space", KeyCode::Char(' '), KeyModifiers::NONE, "Space"),
        (
            "ctrl-home",
            KeyCode::Home,
            KeyModifiers::CONTROL,
            "Ctrl-Home",
        ),
    ];
    for (name, code, modifiers, shown) in cases {
        let spec: KeySpec = name.parse().unwrap();
        assert_eq!(spec, KeySpec { code, modifiers }, "{name}");
        assert_eq!(spec.to_string(), shown);
    }
}

#[test]
fn presses_are_normalised() {
    let shifted = KeyEvent::new(KeyCode::Char('Y'), KeyModifiers::SHIFT);
    assert_eq!(KeySpec::from_event(&shifted), "Y".parse().unwrap());
    assert_ne!(KeySpec::from_event(&shifted), "y".parse().unwrap());
    let caps_ctrl = KeyEvent::new(KeyCode::Char('C'), KeyModifiers::CONTROL);
    assert_eq!(KeySpec::from_event(&caps_ctrl), "ctrl-c".parse().unwrap());
    let with_super = KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT | KeyModifiers::SUPER);
    assert_eq!(
        KeySpec::from_event(&with_super),
        "shift-enter".parse().unwrap()
    );
}

#[test]
fn hints_come_from_the_descriptions() {
    let keymap = keymap();
    let hints = keymap.hints(Mode::Composer);
    assert!(hints.contains(&("Shift-Enter/Alt-Enter/Ctrl-J".to_string(), "new line")));
    assert!(hints.contains(&("Home (input empty)".to_string(), "top of the transcript")));
    assert_eq!(
        keymap
            .keys_for(Mode::Global, Action::ToggleMouse)
            .as_deref(),
        Some("F2")
    );
    assert_eq!(
        keymap.keys_for(Mode::Approval, Action::Deny).as_deref(),
        Some("n/Esc/Ctrl-C")
    );
}
