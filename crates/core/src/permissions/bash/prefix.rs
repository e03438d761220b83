//! The command prefix "allow for this session" offers: `git commit`, `npm run test`,
//! `cargo test`, `docker compose up`, as Claude Code's `Bash(git commit:*)` and Codex's
//! `prefix_rule` do.
//!
//! One command's program and arguments flow in (after wrappers and git's global options
//! were set aside); out comes the prefix a session rule may cover, or `None` when only the
//! exact command may be allowed. The prefix is the program and its subcommand words, up to
//! an arity per program: one word for the programs known to take a subcommand (`cargo
//! test`, `make check`: `SUBCOMMANDS`), two where the first names a group (`git stash pop`,
//! `npm run lint`, `docker compose up`), none for programs whose words are files or
//! options (`pytest`, `mkdir`). A program rein knows nothing of gets the exact command: its
//! first word may be a file, and a later option may run a program (`rsync a b -e sh`). A
//! word is a subcommand only when it looks like one: a literal made of letters, digits,
//! `-`, `_` and `:` (so `build.rs`, `-v`, `src/a` and `$X` end the prefix).
//!
//! Never a prefix: a bare interpreter or shell (`python`, `node`, `bash`, `sh -c` is seen
//! through before it gets here), a program that runs another (`env`, `sudo`, `xargs`,
//! `find`, `timeout`, `awk`, ...), a program run by path, or a runner's subcommand without
//! the program it runs (`uv run pytest` is a prefix, `uv run python` is not; `npx
//! prettier` is, `npx node` is not). A program that expects a subcommand gets none when
//! the command has none (`make` alone, `cargo --version`): the exact command then.
//! Python's `-m` takes the module along for a few well-known tools (`python3 -m pytest`).

use super::interpreters::{family, is_interpreter};
use crate::permissions::shell::Word;

/// Programs that run other programs or code, or act on anything their words say: only the
/// exact command may be allowed.
const EXACT_ONLY: &[&str] = &[
    "env",
    "sudo",
    "doas",
    "su",
    "xargs",
    "find",
    "exec",
    "eval",
    "command",
    "builtin",
    "nohup",
    "nice",
    "timeout",
    "time",
    "watch",
    "setsid",
    "stdbuf",
    "ionice",
    "chroot",
    "busybox",
    "toybox",
    "parallel",
    "ssh",
    "script",
    "expect",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "java",
    "jshell",
    "vim",
    "nvim",
    "vi",
    "emacs",
    "source",
    ".",
    "trap",
    "alias",
    "unshare",
    "nsenter",
    "flock",
    "strace",
    "ltrace",
    "gdb",
    "lldb",
    "valgrind",
    "perf",
    "taskset",
    "chrt",
    "runuser",
    "pkexec",
    "systemd-run",
    "open",
    "xdg-open",
    "bwrap",
];

/// Programs whose words are files or options, none of which runs another program: the
/// prefix is the program alone.
const NO_SUBCOMMAND: &[&str] = &[
    "pytest",
    "jest",
    "mocha",
    "eslint",
    "prettier",
    "tsc",
    "mypy",
    "black",
    "isort",
    "flake8",
    "pylint",
    "pyright",
    "rustfmt",
    "gofmt",
    "shellcheck",
    "clang-format",
    "ctest",
    "mkdir",
    "touch",
    "cp",
    "mv",
    "ln",
    "chmod",
    "rmdir",
];

/// Programs that take a subcommand: the prefix is the program and it (`cargo test`).
const SUBCOMMANDS: &[&str] = &[
    "git",
    "npm",
    "pnpm",
    "yarn",
    "cargo",
    "go",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "gh",
    "glab",
    "make",
    "just",
    "task",
    "mix",
    "dotnet",
    "rustup",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "pipenv",
    "pdm",
    "hatch",
    "rye",
    "pixi",
    "conda",
    "brew",
    "terraform",
    "tofu",
    "gradle",
    "mvn",
    "sbt",
    "lein",
    "bundle",
    "rake",
    "composer",
    "swift",
    "flutter",
    "dart",
    "zig",
    "nix",
    "meson",
    "ninja",
    "bazel",
    "turbo",
    "nx",
    "lerna",
    "firebase",
    "wrangler",
    "vercel",
    "netlify",
    "supabase",
    "prisma",
    "alembic",
    "tox",
    "nox",
    "pre-commit",
    "ruff",
    "biome",
    "vitest",
    "playwright",
    "cypress",
    "svn",
    "hg",
    "jj",
    "docker-compose",
    "conan",
    "vcpkg",
    "stack",
    "cabal",
    "opam",
    "dune",
    "elm",
    "gleam",
    "rebar3",
    "mise",
    "asdf",
];

/// A subcommand that names a group of subcommands: the prefix takes one word more
/// (`git stash pop`, `npm run test`, `docker compose up`).
const GROUPS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "stash",
            "remote",
            "worktree",
            "submodule",
            "notes",
            "lfs",
            "bisect",
            "sparse-checkout",
        ],
    ),
    ("npm", &["run", "run-script"]),
    ("pnpm", &["run"]),
    ("yarn", &["run", "workspace"]),
    ("bun", &["run"]),
    (
        "docker",
        &[
            "compose",
            "container",
            "image",
            "network",
            "volume",
            "buildx",
            "system",
            "context",
            "builder",
        ],
    ),
    (
        "podman",
        &[
            "compose",
            "container",
            "image",
            "network",
            "volume",
            "system",
        ],
    ),
    ("go", &["mod", "work"]),
    (
        "gh",
        &["pr", "issue", "repo", "release", "run", "workflow", "gist"],
    ),
    ("kubectl", &["config", "rollout"]),
    ("rustup", &["toolchain", "target", "component"]),
    ("terraform", &["state", "workspace"]),
];

/// A program, or a program's subcommand, whose next word is a program it runs: the prefix
/// must name that program too, and it must be one a prefix may cover.
const RUNNERS: &[(&str, Option<&str>)] = &[
    ("npx", None),
    ("pnpx", None),
    ("bunx", None),
    ("uvx", None),
    ("uv", Some("run")),
    ("poetry", Some("run")),
    ("pipenv", Some("run")),
    ("pdm", Some("run")),
    ("hatch", Some("run")),
    ("rye", Some("run")),
    ("pixi", Some("run")),
    ("conda", Some("run")),
    ("bundle", Some("exec")),
    ("npm", Some("exec")),
    ("pnpm", Some("exec")),
    ("pnpm", Some("dlx")),
    ("yarn", Some("exec")),
    ("yarn", Some("dlx")),
    ("bun", Some("x")),
    ("mise", Some("exec")),
    ("asdf", Some("exec")),
    ("docker", Some("run")),
    ("docker", Some("exec")),
    ("podman", Some("run")),
    ("podman", Some("exec")),
    ("kubectl", Some("exec")),
    ("nix", Some("run")),
    ("nix", Some("shell")),
    ("nix", Some("develop")),
    ("cargo", Some("exec")),
];

/// The subcommands of an interpreter that are no script: `bun test`, `deno fmt`.
const INTERPRETER_SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "bun",
        &["test", "install", "add", "remove", "build", "run", "x"],
    ),
    (
        "deno",
        &[
            "test", "fmt", "lint", "check", "task", "bench", "install", "cache",
        ],
    ),
];

/// Modules `python -m` may take into a prefix: tools, not a way to run any code.
const PYTHON_MODULES: &[&str] = &[
    "pytest", "pip", "unittest", "mypy", "black", "ruff", "isort", "flake8", "pylint", "build",
    "coverage", "tox", "venv", "pyright",
];

/// The most words a prefix has, the program included: `docker compose up`, `uv run
/// pytest`, `python3 -m pytest`.
pub const MAX_WORDS: usize = 3;

/// The prefix "allow for this session" may cover for `program` (its basename, not run by
/// path) with `args`, as words joined by single spaces; `None`: only the exact command.
pub(super) fn grant_prefix(program: &str, args: &[Word]) -> Option<String> {
    let prefix = words_of_prefix(program, args)?;
    // A script or binary named like an interpreter (`yarn node`, `npm run sh`) could be
    // one: no prefix holds such a word.
    let runs_code = prefix
        .split(' ')
        .skip(1)
        .any(|w| is_interpreter(w) || EXACT_ONLY.contains(&w));
    (!runs_code).then_some(prefix)
}

fn words_of_prefix(program: &str, args: &[Word]) -> Option<String> {
    if !is_plain(program) {
        return None;
    }
    let words: Vec<&str> = args
        .iter()
        .map_while(|w| w.literal_program().filter(|t| is_subcommand(t)))
        .collect();
    let mut prefix = vec![program];
    if is_interpreter(program) {
        return interpreter_prefix(program, args, &words);
    }
    if EXACT_ONLY.contains(&program) {
        return None;
    }
    if let Some(&(_, None)) = RUNNERS.iter().find(|(p, _)| *p == program) {
        prefix.push(runs(words.first())?);
        return Some(prefix.join(" "));
    }
    if NO_SUBCOMMAND.contains(&program) {
        return Some(program.to_string());
    }
    if !SUBCOMMANDS.contains(&program) && !GROUPS.iter().any(|(p, _)| *p == program) {
        return None;
    }
    let first = *words.first()?;
    prefix.push(first);
    if RUNNERS.contains(&(program, Some(first))) {
        prefix.push(runs(words.get(1))?);
    } else if group(program, first) {
        prefix.push(words.get(1)?);
    }
    Some(prefix.join(" "))
}

/// An interpreter's prefix: a subcommand that is no script (`bun test`), or `-m` with a
/// known tool (`python3 -m pytest`); otherwise none.
fn interpreter_prefix(program: &str, args: &[Word], words: &[&str]) -> Option<String> {
    let family = family(program);
    if matches!(family, "python" | "pypy") {
        let [flag, module, ..] = args else {
            return None;
        };
        let module = module.literal_program()?;
        return (flag.literal_program() == Some("-m") && PYTHON_MODULES.contains(&module))
            .then(|| format!("{program} -m {module}"));
    }
    let (_, subcommands) = INTERPRETER_SUBCOMMANDS.iter().find(|(p, _)| *p == family)?;
    let first = *words.first()?;
    if !subcommands.contains(&first) {
        return None;
    }
    if RUNNERS.contains(&(family, Some(first))) {
        return Some(format!("{program} {first} {}", runs(words.get(1))?));
    }
    if group(family, first) {
        return Some(format!("{program} {first} {}", words.get(1)?));
    }
    Some(format!("{program} {first}"))
}

/// The program a runner runs, when a prefix may name it.
fn runs<'w>(word: Option<&&'w str>) -> Option<&'w str> {
    let program = *word?;
    (!is_interpreter(program) && !EXACT_ONLY.contains(&program)).then_some(program)
}

fn group(program: &str, first: &str) -> bool {
    GROUPS
        .iter()
        .any(|(p, groups)| *p == program && groups.contains(&first))
}

/// Letters, digits, `-`, `_` and `:`, starting with a letter or digit: `test`, `test:unit`,
/// `sparse-checkout`; not an option, a path, a file name or a pattern.
fn is_subcommand(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_alphanumeric())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
}

/// A program's name a prefix may hold: a subcommand's characters and `.`, `+`
/// (`python3.12`, `g++`).
fn is_plain(program: &str) -> bool {
    program.starts_with(|c: char| c.is_ascii_alphanumeric())
        && program
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.' | '+'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(command: &str) -> Option<String> {
        let words: Vec<&str> = command.split(' ').collect();
        grant_prefix(words[0], &Word::plain(&words[1..]))
    }

    #[test]
    fn subcommands_up_to_the_programs_arity() {
        for (command, expected) in [
            ("git commit -m fix", "git commit"),
            ("git commit", "git commit"),
            ("git stash pop", "git stash pop"),
            ("git remote add origin x", "git remote add"),
            ("npm run test", "npm run test"),
            ("npm run test:unit -- --watch", "npm run test:unit"),
            ("npm test", "npm test"),
            ("npm install", "npm install"),
            ("cargo test --lib", "cargo test"),
            ("cargo build --release", "cargo build"),
            ("docker compose up -d", "docker compose up"),
            ("docker build .", "docker build"),
            ("make check", "make check"),
            ("go mod tidy", "go mod tidy"),
            ("go test ./...", "go test"),
            ("gh pr create --fill", "gh pr create"),
            ("pytest -x tests", "pytest"),
            ("pytest", "pytest"),
            ("mkdir -p build", "mkdir"),
            ("uv run pytest -q", "uv run pytest"),
            ("poetry run mypy src", "poetry run mypy"),
            ("npx prettier --write .", "npx prettier"),
            ("bun test", "bun test"),
            ("bun run build", "bun run build"),
            ("deno fmt", "deno fmt"),
            ("python3 -m pytest -x", "python3 -m pytest"),
            ("python3.12 -m pip install x", "python3.12 -m pip"),
            ("rustup target add wasm32", "rustup target add"),
        ] {
            assert_eq!(prefix(command).as_deref(), Some(expected), "{command}");
        }
    }

    /// A bare interpreter, a program that runs another, a runner without a program a
    /// prefix may name, a program by path, or no subcommand where one is expected: none.
    #[test]
    fn no_prefix_where_it_would_allow_any_program_or_code() {
        for command in [
            "python3 x.py",
            "python script.py",
            "python -c print",
            "python3 -m runpy x",
            "python3 -m http.server",
            "node index.js",
            "node",
            "bash build.sh",
            "sh -c ls",
            "zsh",
            "perl -e 1",
            "ruby x.rb",
            "env FOO=1 make",
            "sudo apt install",
            "xargs rm",
            "find . -name x",
            "awk {print}",
            "timeout 5 make",
            "bun x.ts",
            "bun run",
            "deno run x.ts",
            "uv run python x.py",
            "uv run bash",
            "uv run",
            "npx node x",
            "npx",
            "npm exec -- sh",
            "poetry run python",
            "docker run --rm -it ubuntu",
            "docker exec web sh",
            "make",
            "cargo --version",
            "git -C",
            "npm run",
            "./run.sh test",
            "my,tool x",
            "*",
            "yarn node x.js",
            "npm run sh",
            "yarn run bash",
        ] {
            assert_eq!(prefix(command), None, "{command}");
        }
    }

    /// Whatever the command, a prefix is its own first words, at most `MAX_WORDS` of
    /// them, and never an interpreter alone.
    #[test]
    fn a_prefix_is_the_commands_first_words() {
        let programs = [
            "git", "npm", "cargo", "docker", "python3", "node", "bash", "uv", "npx", "make", "bun",
            "kubectl", "yarn", "go", "gh", "pytest", "env", "sudo",
        ];
        let words = [
            "run", "test", "-m", "pytest", "exec", "compose", "up", "stash", "x.py", "-c", "sh",
            "python", "node", "pop", "add", "--", "a/b", "mod", "tidy", "lint:fix",
        ];
        let mut seen = 0;
        for program in programs {
            for a in words {
                for b in words {
                    for c in words {
                        let command = format!("{program} {a} {b} {c}");
                        let Some(got) = prefix(&command) else {
                            continue;
                        };
                        seen += 1;
                        let got_words: Vec<&str> = got.split(' ').collect();
                        let all: Vec<&str> = command.split(' ').collect();
                        assert_eq!(got_words[..], all[..got_words.len()], "{command}");
                        assert!(got_words.len() <= MAX_WORDS, "{command}: {got}");
                        assert!(
                            !(got_words.len() == 1 && is_interpreter(program)),
                            "{command}: {got}"
                        );
                        for word in &got_words[1..] {
                            assert!(!is_interpreter(word), "{command}: {got}");
                            assert!(!EXACT_ONLY.contains(word), "{command}: {got}");
                        }
                    }
                }
            }
        }
        assert!(seen > 1000, "{seen}");
    }
}
