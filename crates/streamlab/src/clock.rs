//! UTC timestamps without a date library: RFC 3339 for JSON, a compact form for folders.
use std::time::{SystemTime, UNIX_EPOCH};

/// (year, month, day, hour, minute, second) of a Unix time, UTC.
pub fn civil(unix_seconds: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (unix_seconds / 86_400) as i64;
    let secs = unix_seconds % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        month,
        day,
        (secs / 3600) as u32,
        (secs % 3600 / 60) as u32,
        (secs % 60) as u32,
    )
}

fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `2026-11-22T19:58:03Z`
pub fn rfc3339(unix_seconds: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(unix_seconds);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `20261122T195803Z`, for folder names.
pub fn compact(unix_seconds: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(unix_seconds);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

pub fn now_rfc3339() -> String {
    rfc3339(now_seconds())
}

pub fn now_compact() -> String {
    compact(now_seconds())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_377_483), "2026-11-22T19:58:03Z");
        assert_eq!(compact(1_795_377_483), "20261122T195803Z");
    }
}
