//! Small helpers every stage may use, below all of them: shown paths, hex digests, time
//! parsing, and the snake-case names of the model's enums. Nothing here knows a format.

use std::path::Path;

use sha2::{Digest, Sha256};

/// Shown path for `path`: as given, with `/` separators.
#[must_use]
pub fn display_path(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// Lower-case hex of a digest.
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The sum of counts read from transcripts (tokens, calls), saturating: a hostile file can hold
/// `u64::MAX` (a huge float reads as that), and wrapping or a debug-build panic would turn one
/// record into a wrong total or a lost run.
pub fn sat_sum(counts: impl IntoIterator<Item = u64>) -> u64 {
    counts.into_iter().fold(0, u64::saturating_add)
}

/// Adds a count read from a transcript to a running total that may not have started, saturating
/// as [`sat_sum`] does.
pub fn add_count(total: &mut Option<u64>, n: Option<u64>) {
    if let Some(n) = n {
        *total = Some(total.unwrap_or(0).saturating_add(n));
    }
}

/// The deepest flow nesting (`[`, `{`) a YAML input may have. serde_yaml_ng refuses anything
/// deeper than 128 levels anyway, but only after libyaml's scanner has run over it, and that
/// scanner is quadratic in the nesting (`yaml_parser_stale_simple_keys`): 200,000 brackets take
/// minutes. Checked first, the same inputs are refused at once.
pub const YAML_MAX_DEPTH: usize = 128;

/// The byte offset at which `text` nests flow collections deeper than [`YAML_MAX_DEPTH`], by a
/// lexical count that skips quoted scalars and comments; None when it does not.
#[must_use]
pub fn yaml_too_deep(text: &str) -> Option<usize> {
    let (mut depth, mut quote, mut comment, mut prev) = (0usize, None::<u8>, false, b'\n');
    for (i, &b) in text.as_bytes().iter().enumerate() {
        match (quote, b) {
            _ if comment => comment = b != b'\n',
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') if matches!(prev, b' ' | b'\t' | b'\n' | b'[' | b'{' | b',' | b':') => quote = Some(b),
            (None, b'#') if matches!(prev, b' ' | b'\t' | b'\n') => comment = true,
            (None, b'[' | b'{') => {
                depth += 1;
                if depth > YAML_MAX_DEPTH {
                    return Some(i);
                }
            }
            (None, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        prev = b;
    }
    None
}

#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// An RFC 3339 timestamp, or a naive ISO 8601 one read as UTC (several harnesses write those).
#[must_use]
pub fn parse_time(s: &str) -> Option<jiff::Timestamp> {
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Some(t);
    }
    let dt = s.parse::<jiff::civil::DateTime>().ok()?;
    dt.to_zoned(jiff::tz::TimeZone::UTC).ok().map(|z| z.timestamp())
}

/// Seconds between two timestamps [`parse_time`] reads.
#[must_use]
pub fn seconds_between(start: &str, end: &str) -> Option<f64> {
    let a = parse_time(start)?;
    let b = parse_time(end)?;
    Some(b.duration_since(a).as_secs_f64())
}

/// The serde name of a unit enum variant (`budget`, `wall_time`, ...).
#[must_use]
pub fn snake<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_with_and_without_zone() {
        assert_eq!(seconds_between("2026-01-25T21:47:36Z", "2026-01-25T21:48:36.5Z"), Some(60.5));
        assert_eq!(seconds_between("2026-01-25T16:36:01", "2026-01-25T16:36:02"), Some(1.0));
    }

    #[test]
    fn names_and_digests() {
        assert_eq!(snake(&crate::model::Budget::WallTime), "wall_time");
        assert_eq!(hex(&[0, 255]), "00ff");
        assert_eq!(display_path(Path::new("a/b")), "a/b");
    }

    #[test]
    fn yaml_depth_counts_flow_brackets_outside_quotes_and_comments() {
        let deep = |n: usize| format!("k: {}{}\n", "[".repeat(n), "]".repeat(n));
        assert_eq!(yaml_too_deep(&deep(128)), None);
        assert_eq!(yaml_too_deep(&deep(129)), Some(3 + 128));
        let noise = format!("a: \"{}\"\nb: '{}' # {}\nc: it's [1, {{x: 2}}]\n", "[".repeat(500), "{".repeat(500), "[".repeat(500));
        assert_eq!(yaml_too_deep(&noise), None, "brackets in quotes and comments do not nest");
        assert_eq!(yaml_too_deep("a: 1\nb: [x, y]\n"), None);
    }
}
