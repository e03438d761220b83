//! The one way the record runs git: its own repository (`GIT_DIR` in rein's data folder)
//! over the project's work tree, and nothing of the user's.
//!
//! Every command gets an environment cleared of the caller's `GIT_*` variables, the record
//! as `GIT_DIR`, the work tree, no system or global config (`GIT_CONFIG_NOSYSTEM`,
//! `GIT_CONFIG_GLOBAL=/dev/null`: no filter, hook, fsmonitor or pager the user configured
//! runs on a project's files), literal pathspecs and a fixed locale. The record's own
//! config is written once by [`Git::init`]; its `info/attributes` turns off every content
//! conversion (line ends, filters, `ident`) so a restored file is byte for byte the one
//! recorded, whatever the project's `.gitattributes` say. The program is git from the
//! absolute folders of `PATH` ([`crate::host::program_path`]), never one in the project.
//!
//! What a command prints is read whole (the callers ask for lists, never file contents
//! except through [`Git::cat_blobs`], which reads exactly the sizes git announces).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::CheckpointError;

/// The record's repository and the work tree it records.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    program: PathBuf,
    git_dir: PathBuf,
    work_tree: PathBuf,
}

/// The record's config: what makes status fast on big trees and keeps the user's setup out.
const CONFIG: &[(&str, &str)] = &[
    ("core.bare", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.symlinks", "true"),
    ("core.filemode", "true"),
    ("core.ignorecase", "false"),
    ("core.untrackedCache", "true"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.logAllRefUpdates", "false"),
    ("index.version", "4"),
    ("index.skipHash", "true"),
    ("core.createObject", "rename"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("user.name", "rein"),
    ("user.email", "rein@localhost"),
    ("commit.gpgSign", "false"),
    ("submodule.recurse", "false"),
];

/// The largest file content read back from the record (the size cap's own maximum).
const MAX_BLOB: usize = 64 << 30;

/// Highest priority attributes: no conversion of any kind between the files and the record.
const ATTRIBUTES: &str = "* -text -eol -filter -ident -working-tree-encoding\n";

impl Git {
    /// The record at `git_dir` over `work_tree`, with git found in `PATH`'s absolute folders.
    pub(crate) fn new(git_dir: &Path, work_tree: &Path) -> Result<Git, CheckpointError> {
        let path = std::env::var_os("PATH");
        let program = crate::host::program_path::lookup("git", path.as_deref())
            .ok_or(CheckpointError::NoGit)?;
        Ok(Git {
            program,
            git_dir: git_dir.to_path_buf(),
            work_tree: work_tree.to_path_buf(),
        })
    }

    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    pub(crate) fn work_tree(&self) -> &Path {
        &self.work_tree
    }

    /// Make the record's repository if it is not there yet, and (again) its config and
    /// attributes, so a record made by an older rein gets today's.
    pub(crate) fn init(&self) -> Result<(), CheckpointError> {
        if !self.git_dir.join("HEAD").is_file() {
            crate::host::private_fs::create_dir(&self.git_dir).map_err(CheckpointError::io(
                "cannot make the checkpoint record",
                &self.git_dir,
            ))?;
            // No template: no sample hooks, nothing but what the record needs.
            let args = ["init", "--quiet", "--bare", "--template="];
            let mut command = self.command(&args);
            command
                .env_remove("GIT_WORK_TREE")
                .env_remove("GIT_DIR")
                .arg(&self.git_dir);
            self.run_with(command, &args, None)?;
        }
        let wanted: String = CONFIG.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        let stamp = self.git_dir.join("rein-config");
        if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
            for (key, value) in CONFIG {
                self.run(&["config", key, value], None)?;
            }
            crate::host::private_fs::replace(&stamp, wanted.as_bytes()).map_err(
                CheckpointError::io("cannot write to the checkpoint record", &stamp),
            )?;
        }
        let info = self.git_dir.join("info");
        crate::host::private_fs::create_dir(&info).map_err(CheckpointError::io(
            "cannot write to the checkpoint record",
            &info,
        ))?;
        let attributes = info.join("attributes");
        if std::fs::read_to_string(&attributes).ok().as_deref() != Some(ATTRIBUTES) {
            crate::host::private_fs::replace(&attributes, ATTRIBUTES.as_bytes()).map_err(
                CheckpointError::io("cannot write to the checkpoint record", &attributes),
            )?;
        }
        Ok(())
    }

    /// A git command over the record, in the work tree, in the isolated environment.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.program);
        let inherited: Vec<OsString> = std::env::vars_os()
            .map(|(k, _)| k)
            .filter(|k| k.to_string_lossy().starts_with("GIT_"))
            .collect();
        for key in inherited {
            command.env_remove(key);
        }
        command
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env("LC_ALL", "C")
            .current_dir(&self.work_tree)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // The record is the user's alone, as everything in the data folder: what git makes
        // there gets no group or other bits. A git still running when rein exits (a
        // checkpoint left to finish in the background) dies with it rather than write on
        // once rein's lock on the record is gone; the next rein clears what it left.
        // SAFETY: `umask` and `prctl` are async-signal-safe and touch nothing but the
        // child.
        unsafe {
            command.pre_exec(|| {
                libc::umask(0o077);
                #[cfg(target_os = "linux")]
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        command
    }

    /// Run `args`, with `input` on its standard input: what it printed, or its error.
    pub(crate) fn run(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError> {
        self.run_with(self.command(args), args, input)
    }

    /// Run `args` followed by `paths` (names as bytes, UTF-8 or not; `args` ends in `--`).
    pub(crate) fn run_paths(
        &self,
        args: &[&str],
        paths: &[&std::ffi::OsStr],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError> {
        let mut command = self.command(args);
        command.args(paths);
        self.run_with(command, args, input)
    }

    /// Run `command` (made by [`Git::command`] from `args`).
    pub(crate) fn run_with(
        &self,
        mut command: Command,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError> {
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let failed = |e: std::io::Error| CheckpointError::Git {
            command: args.first().copied().unwrap_or_default().to_string(),
            message: e.to_string(),
        };
        let mut child = command.spawn().map_err(failed)?;
        let writer = match (input, child.stdin.take()) {
            (Some(bytes), Some(mut stdin)) => {
                let bytes = bytes.to_vec();
                Some(std::thread::spawn(move || {
                    // A git that exits early closes the pipe: its status says why.
                    let _ = stdin.write_all(&bytes);
                }))
            }
            _ => None,
        };
        let output = child.wait_with_output().map_err(failed)?;
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        if !output.status.success() {
            let text = String::from_utf8_lossy(&output.stderr);
            let message = text.trim().lines().take(3).collect::<Vec<_>>().join("; ");
            return Err(CheckpointError::Git {
                command: args.first().copied().unwrap_or_default().to_string(),
                message: if message.is_empty() {
                    format!("exited with {}", output.status)
                } else {
                    message
                },
            });
        }
        Ok(output.stdout)
    }

    /// The contents of blobs `ids`, in order, through one `git cat-file --batch`.
    pub(crate) fn cat_blobs(&self, ids: &[String]) -> Result<Vec<Vec<u8>>, CheckpointError> {
        let args = ["cat-file", "--batch"];
        let mut command = self.command(&args);
        command.stdin(Stdio::piped());
        let failed = |message: String| CheckpointError::Git {
            command: "cat-file".to_string(),
            message,
        };
        let mut child = command.spawn().map_err(|e| failed(e.to_string()))?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| failed("no input".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| failed("no output".into()))?;
        let request: String = ids.iter().map(|id| format!("{id}\n")).collect();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(request.as_bytes());
        });
        let mut reader = BufReader::new(stdout);
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let mut header = String::new();
            reader
                .read_line(&mut header)
                .map_err(|e| failed(e.to_string()))?;
            let mut parts = header.split_whitespace();
            let (Some(_), Some(kind), Some(size)) = (parts.next(), parts.next(), parts.next())
            else {
                let _ = child.kill();
                return Err(failed(format!("{id} is missing from the record")));
            };
            let size: usize = size
                .parse()
                .map_err(|_| failed(format!("bad size for {id}")))?;
            // The record holds files under the size cap; a damaged one must not make rein
            // allocate whatever it says.
            if size > MAX_BLOB {
                let _ = child.kill();
                return Err(failed(format!(
                    "{id} is {size} bytes, more than rein restores"
                )));
            }
            if kind != "blob" {
                let _ = child.kill();
                return Err(failed(format!("{id} is a {kind}, not a file's content")));
            }
            let mut content = vec![0; size];
            reader
                .read_exact(&mut content)
                .map_err(|e| failed(e.to_string()))?;
            let mut newline = [0u8; 1];
            reader
                .read_exact(&mut newline)
                .map_err(|e| failed(e.to_string()))?;
            out.push(content);
        }
        let _ = writer.join();
        let _ = child.wait();
        Ok(out)
    }
}
