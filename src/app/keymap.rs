//! Key bindings as data: `assets/keymap.toml`, per mode, with descriptions for the footer
//! and `/help`.
