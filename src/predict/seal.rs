//! The seal: a lock file that records, before the run, what the predictions said and what they
//! will be judged with — sha256 of the predictions (retractions left out), of the rules in force,
//! of every registry, the coroner version, the time and the git commit — and its verification.
//!
//! # Format
//!
//! `predictions.lock` is TOML:
//!
//! ```toml
//! format = 2
//! coroner_version = "0.1.0"
//! sealed_at = "2026-02-19T12:00:00Z"
//! clock = "given"                    # only when the time came from --now / COR_NOW
//! git_commit = "e589384…"            # absent outside a git repository
//! predictions_file = "predictions.toml"
//! predictions_sha256 = "…"
//! rules_sha256 = "…"
//! study = "../study/study.toml"      # absent when sealed without one
//! sealed_over = 68                   # only with --allow-late: trajectories that already existed
//! seal_sha256 = "…"                  # sha256 of every other field: the lock was not edited
//! [registries]                       # absent when no registry is in force
//! "registries/mini.json" = "…"
//! [[design]]                         # what each prediction's design could detect
//! id = "budget-share-think"
//! n = 34
//! detectable = 0.13
//! underpowered = false
//! note = "…"
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use miette::Diagnostic;
use serde::{Deserialize, Serialize};

use super::power::Detectable;

/// The lock format this build writes and reads. Format 1 had no `seal_sha256`, so nothing
/// showed a hand edit of its unhashed fields (the commit, the time); it is refused.
pub const LOCK_FORMAT: u32 = 2;

/// A sealed predictions file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    pub format: u32,
    pub coroner_version: String,
    /// RFC 3339, UTC.
    pub sealed_at: String,
    /// `"given"` when `sealed_at` came from `--now` or `COR_NOW` rather than the clock: the
    /// time is then the sealer's claim, and `check` says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    pub predictions_file: String,
    pub predictions_sha256: String,
    pub rules_sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<String>,
    /// sha256 of every registry in force, by file.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub registries: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub design: Vec<Detectable>,
    /// How many of the study's trajectories existed when it was sealed (`--allow-late`): the
    /// sealer could have read their outcomes, so `check` reports the seal as late whatever its
    /// time says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_over: Option<u64>,
    /// sha256 of the lock's TOML with this field empty. A lock arrives in pull requests: without
    /// it, a commit or a time could be changed by hand and still be read as sealed. A forger who
    /// recomputes it is stopped by the lock's git history instead (the commit date check).
    #[serde(default)]
    pub seal_sha256: String,
}

const HEADER: &str = "# Sealed by `coroner predict seal`; verified by `coroner predict check`. Do not edit.\n\
# predictions_sha256 leaves out `retracted` entries, so `coroner predict retract` keeps this seal valid.\n";

impl Lock {
    /// The lock as TOML, with a header saying what it is.
    ///
    /// # Errors
    /// When serialization fails (it does not for these types).
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        let mut sealed = self.clone();
        sealed.seal_sha256 = self.digest()?;
        Ok(format!("{HEADER}{}", toml::to_string(&sealed)?))
    }

    /// sha256 of the lock with `seal_sha256` left empty: what `seal_sha256` must be.
    ///
    /// # Errors
    /// When serialization fails (it does not for these types).
    pub fn digest(&self) -> Result<String, toml::ser::Error> {
        let mut bare = self.clone();
        bare.seal_sha256 = String::new();
        Ok(crate::util::sha256_hex(toml::to_string(&bare)?.as_bytes()))
    }

    /// Reads a lock file.
    ///
    /// # Errors
    /// Unreadable, not TOML, or not a lock (with the span).
    #[expect(clippy::result_large_err, reason = "the diagnostic carries its source for the labels; it is built once, on the way out")]
    pub fn read(path: &Path) -> Result<Self, LockError> {
        let shown = crate::util::display_path(path);
        let text = std::fs::read_to_string(path).map_err(|e| LockError {
            file: shown.clone(),
            message: if e.kind() == std::io::ErrorKind::NotFound { "it does not exist".into() } else { format!("cannot read it: {e}") },
            src: None,
            span: None,
            help: Some("seal the predictions before the run: `coroner predict seal predictions.toml --study study.toml`".into()),
        })?;
        let lock: Lock = toml::from_str(&text).map_err(|e| LockError {
            file: shown.clone(),
            message: e.message().trim().to_string(),
            src: Some(miette::NamedSource::new(&shown, text.clone())),
            span: e.span().map(Into::into),
            help: Some("a lock is written by `coroner predict seal` and is not edited by hand".into()),
        })?;
        if lock.format != LOCK_FORMAT {
            return Err(LockError {
                file: shown,
                message: format!("lock format {} is not {LOCK_FORMAT}", lock.format),
                src: None,
                span: None,
                help: Some(if lock.format < LOCK_FORMAT {
                    "it was written by an older coroner, whose locks did not cover every field; seal again before the run".into()
                } else {
                    "it was written by a newer coroner version; check with that version".into()
                }),
            });
        }
        if let Err(message) = lock.validate() {
            return Err(LockError {
                file: shown.clone(),
                message,
                src: None,
                span: None,
                help: Some("a lock is written by `coroner predict seal` and is not edited by hand".into()),
            });
        }
        Ok(lock)
    }

    /// Every field checked for the shape `seal` writes, before any of them is used: a lock
    /// arrives in pull requests, and its commit reaches a `git` command line.
    ///
    /// # Errors
    /// The first field that is not as sealed, in words.
    pub fn validate(&self) -> Result<(), String> {
        let sha = |name: &str, v: &str| {
            if is_hex(v, &[64]) { Ok(()) } else { Err(format!("{name} is not a sha256 (64 lowercase hex digits)")) }
        };
        sha("predictions_sha256", &self.predictions_sha256)?;
        sha("rules_sha256", &self.rules_sha256)?;
        sha("seal_sha256", &self.seal_sha256)?;
        for (file, h) in &self.registries {
            sha(&format!("the registry {file:?}"), h)?;
        }
        if let Some(c) = &self.git_commit
            && !is_hex(c, &[40, 64])
        {
            return Err("git_commit is not a commit id (40 or 64 lowercase hex digits)".into());
        }
        if crate::util::parse_time(&self.sealed_at).is_none() {
            return Err("sealed_at is not an RFC 3339 time".into());
        }
        if self.clock.as_deref().is_some_and(|c| c != "given") {
            return Err("clock is neither absent nor \"given\"".into());
        }
        let f = &self.predictions_file;
        if f.is_empty() || f.contains(['/', '\\']) || f.starts_with(['-', '.']) || f.chars().any(char::is_control) {
            return Err("predictions_file is not a plain file name".into());
        }
        if self.study.as_deref().is_some_and(|s| s.chars().any(char::is_control)) {
            return Err("study holds control characters".into());
        }
        Ok(())
    }
}

/// `s` is lowercase hex of one of `lens` digits.
fn is_hex(s: &str, lens: &[usize]) -> bool {
    lens.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A lock file that cannot be read.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("failed to read the seal {file}: {message}")]
#[diagnostic(code(coroner::predict::lock))]
pub struct LockError {
    pub file: String,
    pub message: String,
    #[source_code]
    src: Option<miette::NamedSource<String>>,
    #[label("here")]
    span: Option<miette::SourceSpan>,
    #[help]
    help: Option<String>,
}

/// One way the run differs from what was sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum SealProblem {
    /// The predictions file changed (other than by retractions).
    Predictions { sealed: String, now: String },
    /// The rules in force differ (`--rules`, or a coroner with other built-in rules).
    Rules { sealed: String, now: String },
    /// A registry's contents changed.
    RegistryChanged { file: String, sealed: String, now: String },
    /// A sealed registry is not in force.
    RegistryMissing { file: String, sealed: String },
    /// A registry in force was not sealed.
    RegistryAdded { file: String, now: String },
    /// The seal is later than the run's first trajectory.
    Late { sealed_at: String, earliest: String },
    /// The study's trajectories already existed when it was sealed (`seal --allow-late`).
    SealedOver { trajectories: u64 },
    /// A field of the lock changed after sealing: `seal_sha256` does not match the rest.
    LockEdited { sealed: String, now: String },
}

fn short(h: &str) -> &str {
    h.get(..12).unwrap_or(h)
}

impl SealProblem {
    /// Which hash (or time) differs, as a sentence.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            SealProblem::Predictions { sealed, now } => {
                format!("the predictions file changed since sealing (predictions_sha256 {}…, now {}…)", short(sealed), short(now))
            }
            SealProblem::Rules { sealed, now } => {
                format!("the rules in force differ from the sealed rules (rules_sha256 {}…, now {}…)", short(sealed), short(now))
            }
            SealProblem::RegistryChanged { file, sealed, now } => {
                format!("the registry {file} changed since sealing (sha256 {}…, now {}…)", short(sealed), short(now))
            }
            SealProblem::RegistryMissing { file, sealed } => {
                format!("the sealed registry {file} (sha256 {}…) is not in force", short(sealed))
            }
            SealProblem::RegistryAdded { file, now } => {
                format!("the registry {file} (sha256 {}…) is in force but was not sealed", short(now))
            }
            SealProblem::Late { sealed_at, earliest } => {
                format!("the seal ({sealed_at}) is later than the run's first trajectory ({earliest})")
            }
            SealProblem::SealedOver { trajectories } => {
                format!("it was sealed when {trajectories} of the study's trajectories already existed (seal --allow-late)")
            }
            SealProblem::LockEdited { sealed, now } => {
                format!("the lock was edited after sealing (seal_sha256 {}…, its fields now hash to {}…)", short(sealed), short(now))
            }
        }
    }
}

/// The seal does not hold.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("failed to verify the seal {lock}: {}", problems.iter().map(SealProblem::describe).collect::<Vec<_>>().join("; "))]
#[diagnostic(code(coroner::predict::seal))]
pub struct SealError {
    pub lock: String,
    pub problems: Vec<SealProblem>,
    #[help]
    pub help: Option<String>,
}

impl SealError {
    #[must_use]
    pub fn new(lock: &str, problems: Vec<SealProblem>) -> Self {
        let is_late = |p: &SealProblem| matches!(p, SealProblem::Late { .. } | SealProblem::SealedOver { .. });
        let late = problems.iter().any(is_late);
        let changed = problems.iter().any(|p| !is_late(p));
        let help = match (changed, late) {
            (true, _) => {
                "predictions are judged with what was sealed: restore the sealed files (git shows what changed), or seal again before a new run"
            }
            (false, _) => {
                "predictions sealed after the run began are not pre-registered; `--allow-late` checks them anyway and reports them as late"
            }
        };
        Self { lock: lock.into(), problems, help: Some(help.into()) }
    }
}

/// The differences between a lock and what is in force now; registries match by content, so a
/// registry named by another relative path still matches.
#[must_use]
pub fn verify(lock: &Lock, predictions: &str, rules: &str, registries: &BTreeMap<String, String>) -> Vec<SealProblem> {
    let mut out = Vec::new();
    let now = lock.digest().unwrap_or_default();
    if lock.seal_sha256 != now {
        out.push(SealProblem::LockEdited { sealed: lock.seal_sha256.clone(), now });
    }
    if lock.predictions_sha256 != predictions {
        out.push(SealProblem::Predictions { sealed: lock.predictions_sha256.clone(), now: predictions.into() });
    }
    if lock.rules_sha256 != rules {
        out.push(SealProblem::Rules { sealed: lock.rules_sha256.clone(), now: rules.into() });
    }
    let mut unmatched_now: Vec<(&String, &String)> = registries.iter().collect();
    let mut unmatched_sealed = Vec::new();
    for (file, sha) in &lock.registries {
        if let Some(i) = unmatched_now.iter().position(|(_, h)| *h == sha) {
            unmatched_now.remove(i);
        } else {
            unmatched_sealed.push((file, sha));
        }
    }
    for (file, sealed) in unmatched_sealed {
        if let Some(i) = unmatched_now.iter().position(|(f, _)| *f == file) {
            let (_, now) = unmatched_now.remove(i);
            out.push(SealProblem::RegistryChanged { file: file.clone(), sealed: sealed.clone(), now: now.clone() });
        } else {
            out.push(SealProblem::RegistryMissing { file: file.clone(), sealed: sealed.clone() });
        }
    }
    for (file, now) in unmatched_now {
        out.push(SealProblem::RegistryAdded { file: file.clone(), now: now.clone() });
    }
    out
}

/// The time a seal or retraction is made: `--now`, else `COR_NOW`, else the clock (to the
/// second), as RFC 3339 UTC.
///
/// # Errors
/// A `--now` or `COR_NOW` that is not an RFC 3339 time.
pub fn now(flag: Option<&str>) -> Result<String, String> {
    let given = flag.map(String::from).or_else(|| std::env::var("COR_NOW").ok().filter(|s| !s.is_empty()));
    match given {
        Some(s) => s
            .parse::<jiff::Timestamp>()
            .map(|t| t.to_string())
            .map_err(|e| format!("`{s}` is not an RFC 3339 time (for example 2026-02-19T12:00:00Z): {e}")),
        None => {
            let t = jiff::Timestamp::now();
            Ok(jiff::Timestamp::from_second(t.as_second()).unwrap_or(t).to_string())
        }
    }
}

/// Whether the time of a seal or retraction is given by hand rather than read from the clock.
#[must_use]
pub fn time_given(flag: Option<&str>) -> bool {
    flag.is_some() || std::env::var("COR_NOW").is_ok_and(|s| !s.is_empty())
}

/// The committer date of `commit` (RFC 3339), when git knows it in `dir`. Only a commit id
/// reaches git.
#[must_use]
pub fn commit_time(dir: &Path, commit: &str) -> Option<String> {
    if !is_hex(commit, &[40, 64]) {
        return None;
    }
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        // `--end-of-options`: whatever the value, git never reads it as an option.
        .args(["show", "-s", "--format=%cI", "--end-of-options", commit, "--"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// `git rev-parse HEAD` in `dir`, when git exists and `dir` is in a repository.
#[must_use]
pub fn git_commit(dir: &Path) -> Option<String> {
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && s.len() >= 40 && s.chars().all(|c| c.is_ascii_hexdigit())).then_some(s)
}

/// The earliest of the run's first-trajectory times, by time rather than by text.
#[must_use]
pub fn earliest<'a>(times: impl IntoIterator<Item = &'a str>) -> Option<(jiff::Timestamp, &'a str)> {
    times.into_iter().filter_map(|s| crate::util::parse_time(s).map(|t| (t, s))).min_by_key(|(t, _)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock() -> Lock {
        Lock {
            format: LOCK_FORMAT,
            coroner_version: "0.1.0".into(),
            sealed_at: "2026-02-19T12:00:00Z".into(),
            clock: None,
            git_commit: None,
            predictions_file: "p.toml".into(),
            predictions_sha256: "aa".into(),
            rules_sha256: "bb".into(),
            study: None,
            registries: [("reg/a.json".to_string(), "r1".to_string()), ("reg/b.json".to_string(), "r2".to_string())].into(),
            design: Vec::new(),
            sealed_over: None,
            seal_sha256: String::new(),
        }
    }

    #[test]
    fn verify_names_each_hash_that_differs() {
        let mut l = lock();
        l.seal_sha256 = l.digest().unwrap();
        let same: BTreeMap<String, String> =
            [("./reg/a.json".to_string(), "r1".to_string()), ("b.json".to_string(), "r2".to_string())].into();
        assert!(verify(&l, "aa", "bb", &same).is_empty(), "registries match by content");
        let now: BTreeMap<String, String> =
            [("reg/a.json".to_string(), "r9".to_string()), ("reg/c.json".to_string(), "r3".to_string())].into();
        let p = verify(&l, "ax", "bx", &now);
        assert_eq!(
            p,
            vec![
                SealProblem::Predictions { sealed: "aa".into(), now: "ax".into() },
                SealProblem::Rules { sealed: "bb".into(), now: "bx".into() },
                SealProblem::RegistryChanged { file: "reg/a.json".into(), sealed: "r1".into(), now: "r9".into() },
                SealProblem::RegistryMissing { file: "reg/b.json".into(), sealed: "r2".into() },
                SealProblem::RegistryAdded { file: "reg/c.json".into(), now: "r3".into() },
            ]
        );
    }

    #[test]
    fn the_lock_round_trips_through_toml() {
        let l = lock();
        let text = l.to_toml().unwrap();
        assert!(text.starts_with("# Sealed by"));
        let back: Lock = toml::from_str(&text).unwrap();
        assert_eq!(back.seal_sha256, l.digest().unwrap());
        assert_eq!(Lock { seal_sha256: String::new(), ..back }, l);
    }

    fn valid() -> Lock {
        let h = "a".repeat(64);
        let mut l = Lock {
            predictions_sha256: h.clone(),
            rules_sha256: h.clone(),
            registries: [("r.json".to_string(), h)].into(),
            git_commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
            ..lock()
        };
        l.seal_sha256 = l.digest().unwrap();
        l
    }

    #[test]
    fn every_field_is_checked_before_use() {
        assert_eq!(valid().validate(), Ok(()));
        let bad: [(&str, Lock); 8] = [
            ("git_commit", Lock { git_commit: Some("--output=predictions.md".into()), ..valid() }),
            ("git_commit", Lock { git_commit: Some("HEAD".into()), ..valid() }),
            ("predictions_sha256", Lock { predictions_sha256: "AA".into(), ..valid() }),
            ("seal_sha256", Lock { seal_sha256: String::new(), ..valid() }),
            ("registry", Lock { registries: [("r".to_string(), "x".to_string())].into(), ..valid() }),
            ("sealed_at", Lock { sealed_at: "yesterday".into(), ..valid() }),
            ("clock", Lock { clock: Some("mine".into()), ..valid() }),
            ("predictions_file", Lock { predictions_file: "../../etc/passwd".into(), ..valid() }),
        ];
        for (field, l) in bad {
            let e = l.validate().expect_err(field);
            assert!(e.contains(field), "{field}: {e}");
        }
        assert_eq!(commit_time(Path::new("."), "--output=x"), None, "an option never reaches git");
    }

    #[test]
    fn an_edited_field_breaks_the_seal() {
        let l = valid();
        let h = "a".repeat(64);
        assert!(verify(&l, &h, &h, &[("r.json".to_string(), h.clone())].into()).is_empty());
        let edited = Lock { sealed_at: "2026-01-01T00:00:00Z".into(), ..l };
        let p = verify(&edited, &h, &h, &[("r.json".to_string(), h.clone())].into());
        assert!(matches!(p.as_slice(), [SealProblem::LockEdited { .. }]), "{p:?}");
    }

    #[test]
    fn times_come_from_the_flag_then_the_environment() {
        assert_eq!(now(Some("2026-02-19T12:00:00+01:00")).unwrap(), "2026-02-19T11:00:00Z");
        assert!(now(Some("yesterday")).is_err());
        let t = now(None).unwrap();
        assert!(crate::util::parse_time(&t).is_some(), "{t}");
        let e = earliest(["2026-02-20T10:00:00Z", "2026-02-20T09:30:00+00:00", "garbage"]).unwrap();
        assert_eq!(e.1, "2026-02-20T09:30:00+00:00");
    }
}
