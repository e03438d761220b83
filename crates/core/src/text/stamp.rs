//! Timestamps and session ids, without a date library.
//!
//! Entries carry an RFC 3339 UTC time with milliseconds (`2026-11-30T03:15:00.123Z`). A
//! session id is the UTC start time to the second plus six hex digits
//! (`20261130-031500-a3f09c`), so ids sort by start time and two sessions started in the same
//! second, even by the same process, still differ.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as RFC 3339 in UTC with milliseconds. Times before 1970 print as the epoch.
pub fn rfc3339(time: SystemTime) -> String {
    let c = Civil::of(time);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second, c.millis
    )
}

/// The current time, as [`rfc3339`] writes it.
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// A fresh session id: `YYYYMMDD-HHMMSS-xxxxxx` from the current UTC time.
pub fn new_session_id() -> String {
    session_id_at(SystemTime::now())
}

pub(crate) fn session_id_at(time: SystemTime) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let c = Civil::of(time);
    // RandomState is keyed at random per process; the time, pid and counter keep ids apart
    // within one process too.
    let mut h = RandomState::new().build_hasher();
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
        .hash(&mut h);
    std::process::id().hash(&mut h);
    COUNTER.fetch_add(1, Ordering::Relaxed).hash(&mut h);
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}-{:06x}",
        c.year,
        c.month,
        c.day,
        c.hour,
        c.minute,
        c.second,
        h.finish() & 0xff_ffff
    )
}

/// A UTC calendar time.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    millis: u32,
}

impl Civil {
    fn of(time: SystemTime) -> Civil {
        let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = since.as_secs();
        let (year, month, day) = civil_from_days((secs / 86_400) as i64);
        let rest = (secs % 86_400) as u32;
        Civil {
            year,
            month,
            day,
            hour: rest / 3600,
            minute: rest / 60 % 60,
            second: rest % 60,
            millis: since.subsec_millis(),
        }
    }
}

/// Days since 1970-01-01 to (year, month, day), after Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March first
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The time an [`rfc3339`] text names (`YYYY-MM-DDTHH:MM:SS[.mmm]Z`, the form rein writes);
/// `None` for anything else.
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<u64> {
        let part = text.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || b.get(10) != Some(&b'T') {
        return None;
    }
    if b.get(13) != Some(&b':') || b.get(16) != Some(&b':') || b.last() != Some(&b'Z') {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let millis = match &text[19..text.len() - 1] {
        "" => 0,
        fraction => {
            let digits = fraction.strip_prefix('.')?;
            if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|c| c.is_ascii_digit())
            {
                return None;
            }
            digits.get(..3).unwrap_or(digits).parse::<u64>().ok()?
                * 10u64.pow(3u32.saturating_sub(digits.len() as u32))
        }
    };
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_from_civil(year as i64, month as u32, day as u32);
    let secs = u64::try_from(days).ok()? * 86_400 + hour * 3600 + minute * 60 + second;
    Some(UNIX_EPOCH + std::time::Duration::from_millis(secs * 1000 + millis))
}

/// Days since 1970-01-01 of a civil date (the inverse of `civil_from_days`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = year - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64, millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(secs * 1000 + millis)
    }

    #[test]
    fn what_rfc3339_writes_parses_back() {
        for secs in [
            0,
            1,
            59,
            86_399,
            86_400,
            951_782_400,
            1_764_000_000,
            4_102_444_800,
        ] {
            for millis in [0, 7, 999] {
                let t = at(secs, millis);
                assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t), "{}", rfc3339(t));
            }
        }
        assert_eq!(
            parse_rfc3339("2026-12-04T10:00:00Z"),
            Some(at(1_796_378_400, 0))
        );
        assert_eq!(
            parse_rfc3339("2026-12-04T10:00:00.5Z"),
            Some(at(1_796_378_400, 500))
        );
        for bad in [
            "",
            "2026-12-04",
            "2026-12-04T10:00:00",
            "2026-13-04T10:00:00Z",
            "2026-12-04T10:00:00.Z",
            "2026-12-04T1a:00:00Z",
            "x026-12-04T10:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century leap year).
        assert_eq!(rfc3339(at(951_782_400, 7)), "2000-02-29T00:00:00.007Z");
        assert_eq!(rfc3339(at(1_700_000_000, 123)), "2023-11-14T22:13:20.123Z");
        // The last second of 2026.
        assert_eq!(rfc3339(at(1_798_761_599, 999)), "2026-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(at(4_107_542_400, 0)), "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn ids_sort_by_time_and_differ_within_a_second() {
        let a = session_id_at(at(1_700_000_000, 0));
        let b = session_id_at(at(1_700_000_000, 0));
        assert!(a.starts_with("20231114-221320-"), "{a}");
        assert_eq!(a.len(), "20231114-221320-".len() + 6);
        assert_ne!(a, b);
        let later = session_id_at(at(1_700_000_001, 0));
        assert!(later > a && later > b);
    }
}
