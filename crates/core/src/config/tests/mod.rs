//! Unit tests for the loader: precedence, sources, parsing and the one-line errors, one
//! file a topic. Every test injects its own `Environment` with temp dirs; none reads the
//! real process environment or home. This file holds the shared [`Fixture`].

mod display;
mod errors;
mod mcp_env;
mod permissions;
mod precedence;
mod window_timeout;

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
