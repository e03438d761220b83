//! Keeping a record under its quota: when its objects take more than
//! [`super::Settings::quota_bytes`], the oldest checkpoints' refs go first (the latest one
//! always stays) and `git gc` frees what only they held. Loose objects, and packs, are
//! packed into one once there are many. Run when a session starts, off the agent's way; a
//! rewind to a pruned checkpoint says so ([`super::CheckpointError::Pruned`]).

use super::{CheckpointError, Store};

/// Loose objects past which the record is packed.
const LOOSE_OBJECTS: u64 = 20_000;
/// Packs past which they are packed into one (each large batch makes one).
const PACKS: u64 = 50;

/// What a maintenance run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Maintained {
    /// Checkpoints dropped to fit the quota.
    pub pruned: usize,
    /// The record's size afterwards, in bytes.
    pub bytes: u64,
}

impl Store {
    /// The record's size on disk in bytes, its loose objects and its packs.
    fn size(&self) -> Result<(u64, u64, u64), CheckpointError> {
        let out = self.git.run(&["count-objects", "-v"], None)?;
        let text = String::from_utf8_lossy(&out);
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        let kib = field("size:") + field("size-pack:") + field("size-garbage:");
        Ok((kib * 1024, field("count:"), field("packs:")))
    }

    /// Prune and pack as the quota says: see the module doc.
    pub fn maintain(&self) -> Result<Maintained, CheckpointError> {
        let _lock = super::lock::RecordLock::take(&self.record)?;
        let (mut bytes, loose, packs) = self.size()?;
        let mut report = Maintained::default();
        if loose >= LOOSE_OBJECTS || packs >= PACKS {
            self.gc()?;
            bytes = self.size()?.0;
        }
        // Each round drops the older half of what is left.
        for _ in 0..16 {
            if bytes <= self.settings.quota_bytes {
                break;
            }
            let refs = self.refs_oldest_first()?;
            if refs.is_empty() {
                break;
            }
            let drop = (refs.len() / 2).max(1);
            let deletes: String = refs[..drop]
                .iter()
                .map(|r| format!("delete {r}\n"))
                .collect();
            self.git
                .run(&["update-ref", "--stdin"], Some(deletes.as_bytes()))?;
            report.pruned += drop;
            self.gc()?;
            bytes = self.size()?.0;
        }
        report.bytes = bytes;
        Ok(report)
    }

    fn gc(&self) -> Result<(), CheckpointError> {
        self.git.run(
            &["-c", "gc.reflogExpire=now", "gc", "--quiet", "--prune=now"],
            None,
        )?;
        Ok(())
    }

    /// The checkpoints' refs, oldest first, without the latest (the record's HEAD).
    fn refs_oldest_first(&self) -> Result<Vec<String>, CheckpointError> {
        let out = self.git.run(
            &[
                "for-each-ref",
                "--sort=committerdate",
                "--format=%(refname) %(objectname)",
                "refs/rein/",
            ],
            None,
        )?;
        let head = std::fs::read_to_string(self.git.git_dir().join("HEAD")).unwrap_or_default();
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(_, id)| *id != head.trim())
            .map(|(name, _)| name.to_string())
            .collect())
    }
}
