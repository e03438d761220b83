//! Skills: instructions for particular kinds of task, kept in files, that the model loads
//! when a task fits one.
//!
//! A skill is a folder with a `SKILL.md` whose front matter gives a `name` and a
//! `description` ([`front_matter`]). [`SkillSet::discover`] looks in these places, in this
//! order: the user's `~/.claude/skills/*/SKILL.md` (Claude Code's) and
//! `~/.agents/skills/*/SKILL.md`, rein's data dir (`$REIN_HOME/skills/*/SKILL.md`), and the
//! project's `.claude/skills/*/SKILL.md` and `.agents/skills/*/SKILL.md`; on a name clash
//! the later place wins, so the project has the last word (and `.agents/` wins over
//! `.claude/` beside it). Only the front matter is read at startup: the system
//! prompt lists one `- name: description` line per skill ([`SkillSet::prompt_section`]) and
//! the `read_skill` tool reads the whole file when the model asks for it. A skill that
//! cannot be used (malformed front matter, unreadable or oversized file) is skipped with a
//! notice naming the file and the problem; discovery itself never fails.

pub mod front_matter;

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";
/// Largest `SKILL.md` accepted; a bigger one is skipped with a notice (and refused by
/// `read_skill` if it grows past this later).
pub const MAX_SKILL_BYTES: u64 = 256 * 1024;
/// Most skills offered to the model; beyond this the rest (by name) are left out with a
/// notice, as every skill costs a line of every request.
pub const MAX_SKILLS: usize = 100;

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkillSource {
    /// `~/.agents/skills`, shared with other agents, or Claude Code's `~/.claude/skills`.
    User,
    /// `skills` in rein's data dir (`$REIN_HOME/skills`).
    Rein,
    /// The project's `.agents/skills` or `.claude/skills`.
    Project,
}

/// One usable skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    /// One line, at most [`front_matter::MAX_DESCRIPTION_CHARS`] characters.
    pub description: String,
    /// The `SKILL.md` file.
    pub path: PathBuf,
    pub source: SkillSource,
}

/// The skills of a session, sorted by name, and what was skipped on the way.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    skills: Vec<Skill>,
    /// One sentence per skill left out, naming the file and the problem.
    pub notices: Vec<String>,
}

impl SkillSet {
    /// No skills (tests, or a front end that offers none).
    pub fn empty() -> SkillSet {
        SkillSet::default()
    }

    /// Find the skills of the user (`home`), of rein (`data_dir`) and of the project.
    pub fn discover(home: Option<&Path>, data_dir: &Path, project: &Path) -> SkillSet {
        let mut places = Vec::new();
        if let Some(home) = home {
            places.push((home.join(".claude").join("skills"), SkillSource::User));
            places.push((home.join(".agents").join("skills"), SkillSource::User));
        }
        places.push((data_dir.join("skills"), SkillSource::Rein));
        places.push((project.join(".claude").join("skills"), SkillSource::Project));
        places.push((project.join(".agents").join("skills"), SkillSource::Project));
        SkillSet::from_places(&places)
    }

    /// Find the skills in `places`, each a folder of skill folders; a later place wins on a
    /// name clash.
    pub fn from_places(places: &[(PathBuf, SkillSource)]) -> SkillSet {
        let mut notices = Vec::new();
        let mut by_name: BTreeMap<String, Skill> = BTreeMap::new();
        for (dir, source) in distinct_places(places) {
            for skill in scan_place(dir, *source, &mut notices) {
                by_name.insert(skill.name.clone(), skill);
            }
        }
        let mut skills: Vec<Skill> = by_name.into_values().collect();
        if skills.len() > MAX_SKILLS {
            let left_out: Vec<String> = skills[MAX_SKILLS..]
                .iter()
                .map(|s| s.name.clone())
                .collect();
            notices.push(format!(
                "{} skills were found; only the first {MAX_SKILLS} by name are offered to the model (left out: {})",
                skills.len(),
                left_out.join(", ")
            ));
            skills.truncate(MAX_SKILLS);
        }
        SkillSet { skills, notices }
    }

    /// The skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// The skills, by name.
    pub fn iter(&self) -> std::slice::Iter<'_, Skill> {
        self.skills.iter()
    }

    /// The skills' names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.name.as_str()).collect()
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The system prompt's part about skills: a sentence on when to load one, then one
    /// `- name: description` line per skill. Empty when there are no skills.
    pub fn prompt_section(&self) -> String {
        if self.skills.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "Skills: written instructions for particular tasks. When the user's task fits one of \
             these skills, call `read_skill` with its name first, before other tools, and follow \
             what it says.\n",
        );
        for skill in &self.skills {
            out.push_str(&format!("- {}: {}\n", skill.name, skill.description));
        }
        out
    }
}

/// The skills in one place: every folder in `dir` with a usable `SKILL.md`, in folder-name
/// order. A missing `dir` is no skills, quietly.
fn scan_place(dir: &Path, source: SkillSource, notices: &mut Vec<String>) -> Vec<Skill> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            notices.push(format!(
                "skills in {} skipped: cannot read the folder: {e}",
                dir.display()
            ));
            return Vec::new();
        }
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    let mut found: Vec<Skill> = Vec::new();
    for folder in folders {
        let path = folder.join(SKILL_FILE);
        let front = match read_front_matter(&path) {
            Ok(Some(front)) => front,
            Ok(None) => continue,
            Err(problem) => {
                notices.push(format!("skill {} skipped: {problem}", path.display()));
                continue;
            }
        };
        if let Some(first) = found.iter().find(|s| s.name == front.name) {
            notices.push(format!(
                "skill {} skipped: the name \"{}\" is already used by {}",
                path.display(),
                front.name,
                first.path.display()
            ));
            continue;
        }
        found.push(Skill {
            name: front.name,
            description: front.description,
            path,
            source,
        });
    }
    found
}

/// The front matter of the `SKILL.md` at `path`; `None` when there is no such file (the
/// folder is not a skill), else a sentence saying what is wrong.
fn read_front_matter(path: &Path) -> Result<Option<front_matter::FrontMatter>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    if !meta.is_file() {
        return Err("it is not a file".to_string());
    }
    if meta.len() > MAX_SKILL_BYTES {
        return Err(format!(
            "it is {} KiB; a SKILL.md may be at most {} KiB",
            meta.len().div_ceil(1024),
            MAX_SKILL_BYTES / 1024
        ));
    }
    // Read bounded, and only a regular file: the check above may be raced (a named pipe
    // swapped in would block the read forever).
    let text = crate::host::safe_fs::read_small_text(path, MAX_SKILL_BYTES).map_err(|e| match e
        .kind()
    {
        ErrorKind::InvalidData | ErrorKind::InvalidInput => e.to_string(),
        _ => format!("cannot read it: {e}"),
    })?;
    front_matter::parse(&text)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// `places` less the folders reached again later (rein started in the home folder, where
/// the user's and the project's folder are one): each is read once, as the later place.
pub fn distinct_places<T>(places: &[(PathBuf, T)]) -> impl Iterator<Item = &(PathBuf, T)> {
    let canonical: Vec<Option<PathBuf>> = places
        .iter()
        .map(|(dir, _)| dir.canonicalize().ok())
        .collect();
    places.iter().enumerate().filter_map(move |(i, place)| {
        let seen_later = canonical[i]
            .as_ref()
            .is_some_and(|c| canonical[i + 1..].iter().any(|o| o.as_ref() == Some(c)));
        (!seen_later).then_some(place)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three places under one temporary folder: home, data dir, project.
    struct Places {
        _dir: tempfile::TempDir,
        home: PathBuf,
        data: PathBuf,
        project: PathBuf,
    }

    impl Places {
        fn new() -> Places {
            let dir = tempfile::tempdir().unwrap();
            let home = dir.path().join("home");
            let data = dir.path().join("data");
            let project = dir.path().join("project");
            for d in [&home, &data, &project] {
                std::fs::create_dir_all(d).unwrap();
            }
            Places {
                _dir: dir,
                home,
                data,
                project,
            }
        }

        fn home_skills(&self) -> PathBuf {
            self.home.join(".agents/skills")
        }

        fn data_skills(&self) -> PathBuf {
            self.data.join("skills")
        }

        fn project_skills(&self) -> PathBuf {
            self.project.join(".agents/skills")
        }

        fn discover(&self) -> SkillSet {
            SkillSet::discover(Some(&self.home), &self.data, &self.project)
        }
    }

    /// Write `skills/folder/SKILL.md`; returns its path.
    fn write(skills: &Path, folder: &str, text: &str) -> PathBuf {
        let dir = skills.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(SKILL_FILE);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn skill_md(name: &str, description: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nDo it well.\n")
    }

    #[test]
    fn nothing_anywhere_is_no_skills_and_no_notices() {
        let p = Places::new();
        let set = p.discover();
        assert!(set.is_empty());
        assert!(set.notices.is_empty(), "{:?}", set.notices);
        assert_eq!(set.prompt_section(), "");
        let set = SkillSet::discover(None, &p.data, &p.project);
        assert!(set.is_empty());
    }

    /// Claude Code's `.claude/skills` (the user's and the project's) are skills too, with
    /// their own front matter keys ignored; beside `.agents/skills` the `.agents` one wins.
    #[test]
    fn claude_code_skills_are_found_and_agents_wins_beside_them() {
        let p = Places::new();
        let claude_home = p.home.join(".claude/skills");
        let claude_project = p.project.join(".claude/skills");
        write(
            &claude_home,
            "pdf",
            "---\nname: pdf\ndescription: Fill PDF forms.\nlicense: MIT\nallowed-tools: Read, Bash\nmetadata:\n  version: 2\n---\nbody\n",
        );
        write(
            &claude_project,
            "release",
            &skill_md("release", "Claude's release."),
        );
        write(
            &p.project_skills(),
            "release",
            &skill_md("release", "rein's release."),
        );
        write(
            &claude_project,
            "review",
            &skill_md("review", "Review a diff."),
        );
        let set = p.discover();
        assert!(set.notices.is_empty(), "{:?}", set.notices);
        assert_eq!(set.names(), ["pdf", "release", "review"]);
        let pdf = set.get("pdf").unwrap();
        assert_eq!(
            (pdf.source, pdf.description.as_str()),
            (SkillSource::User, "Fill PDF forms.")
        );
        assert_eq!(pdf.path, claude_home.join("pdf/SKILL.md"));
        let release = set.get("release").unwrap();
        assert_eq!(release.description, "rein's release.");
        let review = set.get("review").unwrap();
        assert_eq!(review.source, SkillSource::Project);
        assert_eq!(review.path, claude_project.join("review/SKILL.md"));
    }

    #[test]
    fn all_three_places_are_found_and_sorted_by_name() {
        let p = Places::new();
        write(&p.home_skills(), "zeta", &skill_md("zeta", "From home."));
        write(&p.data_skills(), "mid", &skill_md("mid", "From rein."));
        write(
            &p.project_skills(),
            "alpha",
            &skill_md("alpha", "From the project."),
        );
        let set = p.discover();
        assert!(set.notices.is_empty(), "{:?}", set.notices);
        assert_eq!(set.names(), ["alpha", "mid", "zeta"]);
        let sources: Vec<SkillSource> = set.iter().map(|s| s.source).collect();
        assert_eq!(
            sources,
            [SkillSource::Project, SkillSource::Rein, SkillSource::User]
        );
        let zeta = set.get("zeta").unwrap();
        assert_eq!(zeta.description, "From home.");
        assert_eq!(zeta.path, p.home_skills().join("zeta/SKILL.md"));
        assert!(set.get("nope").is_none());
    }

    #[test]
    fn a_later_place_wins_a_clash_and_the_project_wins_all() {
        let p = Places::new();
        write(&p.home_skills(), "a", &skill_md("shared", "home"));
        write(&p.data_skills(), "b", &skill_md("shared", "rein"));
        write(&p.home_skills(), "c", &skill_md("two", "home"));
        write(&p.data_skills(), "d", &skill_md("two", "rein"));
        write(&p.project_skills(), "e", &skill_md("shared", "project"));
        let set = p.discover();
        assert!(set.notices.is_empty(), "{:?}", set.notices);
        assert_eq!(set.names(), ["shared", "two"]);
        let shared = set.get("shared").unwrap();
        assert_eq!(shared.description, "project");
        assert_eq!(shared.source, SkillSource::Project);
        assert_eq!(shared.path, p.project_skills().join("e/SKILL.md"));
        // Without a project copy, rein's data dir beats the home folder.
        let two = set.get("two").unwrap();
        assert_eq!(
            (two.description.as_str(), two.source),
            ("rein", SkillSource::Rein)
        );
    }

    #[test]
    fn the_name_comes_from_the_front_matter_not_the_folder() {
        let p = Places::new();
        write(
            &p.project_skills(),
            "folder-name",
            &skill_md("real-name", "d"),
        );
        assert_eq!(p.discover().names(), ["real-name"]);
    }

    #[test]
    fn a_clash_within_one_place_keeps_the_first_folder_with_a_notice() {
        let p = Places::new();
        let first = write(&p.project_skills(), "a", &skill_md("dup", "first"));
        let second = write(&p.project_skills(), "b", &skill_md("dup", "second"));
        let set = p.discover();
        assert_eq!(set.get("dup").unwrap().description, "first");
        assert_eq!(
            set.notices,
            [format!(
                "skill {} skipped: the name \"dup\" is already used by {}",
                second.display(),
                first.display()
            )]
        );
    }

    #[test]
    fn malformed_skills_are_skipped_each_with_a_notice_naming_the_file() {
        let p = Places::new();
        let dir = p.project_skills();
        write(&dir, "good", &skill_md("good", "Works."));
        let cases = [
            (
                "no-dashes",
                "name: x\ndescription: y\n",
                "it does not start with a front matter",
            ),
            (
                "unclosed",
                "---\nname: x\ndescription: y\n# body\n",
                "no closing `---` line",
            ),
            (
                "no-name",
                "---\ndescription: y\n---\n",
                "has no `name: ...` line",
            ),
            (
                "no-desc",
                "---\nname: x\n---\n",
                "has no `description: ...` line",
            ),
            (
                "empty-name",
                "---\nname: ''\ndescription: y\n---\n",
                "`name` is empty",
            ),
            (
                "empty-desc",
                "---\nname: x\ndescription:\n---\n",
                "`description` is empty",
            ),
            (
                "spaced",
                "---\nname: my skill\ndescription: y\n---\n",
                "the name \"my skill\" has whitespace in it",
            ),
            (
                "slashed",
                "---\nname: a/b\ndescription: y\n---\n",
                "the name \"a/b\" has a `/`",
            ),
            ("empty-file", "", "it does not start with a front matter"),
        ];
        let mut paths = Vec::new();
        for (folder, text, _) in &cases {
            paths.push(write(&dir, folder, text));
        }
        // Not UTF-8, and too big.
        let dir_bin = dir.join("binary");
        std::fs::create_dir_all(&dir_bin).unwrap();
        std::fs::write(dir_bin.join(SKILL_FILE), b"---\nname: \xff\xfe\n---\n").unwrap();
        let big = format!(
            "{}{}",
            skill_md("big", "Too big."),
            "x".repeat(MAX_SKILL_BYTES as usize)
        );
        let big_path = write(&dir, "big", &big);
        // Folders that are not skills are passed over quietly.
        std::fs::create_dir_all(dir.join("no-skill-file")).unwrap();
        std::fs::create_dir_all(dir.join(".hidden")).unwrap();
        std::fs::write(dir.join("README.md"), "not a skill").unwrap();

        let set = p.discover();
        assert_eq!(set.names(), ["good"]);
        for ((_, _, problem), path) in cases.iter().zip(&paths) {
            let prefix = format!("skill {} skipped: ", path.display());
            assert!(
                set.notices
                    .iter()
                    .any(|n| n.starts_with(&prefix) && n.contains(problem)),
                "no notice for {} with {problem:?}: {:#?}",
                path.display(),
                set.notices
            );
        }
        assert!(set.notices.contains(&format!(
            "skill {} skipped: it is not UTF-8 text",
            dir_bin.join(SKILL_FILE).display()
        )));
        assert!(set.notices.contains(&format!(
            "skill {} skipped: it is 257 KiB; a SKILL.md may be at most 256 KiB",
            big_path.display()
        )));
        assert_eq!(set.notices.len(), cases.len() + 2, "{:#?}", set.notices);
    }

    #[test]
    fn a_malformed_project_skill_does_not_hide_the_user_one() {
        let p = Places::new();
        write(&p.home_skills(), "x", &skill_md("x", "from home"));
        write(&p.project_skills(), "x", "---\nname: x\n---\n");
        let set = p.discover();
        assert_eq!(set.get("x").unwrap().description, "from home");
        assert_eq!(set.notices.len(), 1);
    }

    #[test]
    fn a_skill_md_that_is_a_folder_is_a_notice() {
        let p = Places::new();
        std::fs::create_dir_all(p.project_skills().join("odd").join(SKILL_FILE)).unwrap();
        let set = p.discover();
        assert!(set.is_empty());
        assert_eq!(
            set.notices,
            [format!(
                "skill {} skipped: it is not a file",
                p.project_skills().join("odd").join(SKILL_FILE).display()
            )]
        );
    }

    #[test]
    fn a_skills_path_that_is_a_file_is_a_notice_not_a_crash() {
        let p = Places::new();
        std::fs::create_dir_all(p.project.join(".agents")).unwrap();
        std::fs::write(p.project_skills(), "oops").unwrap();
        let set = p.discover();
        assert!(set.is_empty());
        assert_eq!(set.notices.len(), 1);
        assert!(
            set.notices[0].starts_with(&format!(
                "skills in {} skipped: cannot read the folder",
                p.project_skills().display()
            )),
            "{:?}",
            set.notices
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_unreadable_skill_is_a_notice() {
        use std::os::unix::fs::PermissionsExt;
        let p = Places::new();
        let path = write(&p.project_skills(), "locked", &skill_md("locked", "d"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::read(&path).is_ok() {
            return; // running as root: permissions do not apply
        }
        let set = p.discover();
        assert!(set.is_empty());
        assert_eq!(set.notices.len(), 1);
        assert!(
            set.notices[0].starts_with(&format!(
                "skill {} skipped: cannot read it: ",
                path.display()
            )),
            "{:?}",
            set.notices
        );
    }

    #[test]
    fn the_project_in_the_home_directory_reads_the_folder_once() {
        let p = Places::new();
        write(&p.home_skills(), "bad", "no front matter");
        write(&p.home_skills(), "ok", &skill_md("ok", "d"));
        let set = SkillSet::discover(Some(&p.home), &p.data, &p.home);
        assert_eq!(set.names(), ["ok"]);
        assert_eq!(set.get("ok").unwrap().source, SkillSource::Project);
        assert_eq!(set.notices.len(), 1, "{:?}", set.notices);
    }

    #[test]
    fn too_many_skills_are_capped_with_a_notice() {
        let p = Places::new();
        for i in 0..MAX_SKILLS + 2 {
            let name = format!("s{i:03}");
            write(&p.project_skills(), &name, &skill_md(&name, "d"));
        }
        let set = p.discover();
        assert_eq!(set.len(), MAX_SKILLS);
        assert_eq!(set.names().last(), Some(&"s099"));
        assert_eq!(
            set.notices,
            ["102 skills were found; only the first 100 by name are offered to the model (left out: s100, s101)"]
        );
    }

    #[test]
    fn the_prompt_section_lists_each_skill_on_one_line() {
        let p = Places::new();
        write(
            &p.project_skills(),
            "b",
            &skill_md("release", "Cut a release: bump, tag, notes."),
        );
        write(
            &p.home_skills(),
            "a",
            &skill_md("pdf", "\"Fill in PDF forms.\""),
        );
        let section = p.discover().prompt_section();
        assert_eq!(
            section,
            "Skills: written instructions for particular tasks. When the user's task fits one of \
             these skills, call `read_skill` with its name first, before other tools, and follow \
             what it says.\n\
             - pdf: Fill in PDF forms.\n\
             - release: Cut a release: bump, tag, notes.\n"
        );
        assert_eq!(SkillSet::empty().prompt_section(), "");
    }
}
