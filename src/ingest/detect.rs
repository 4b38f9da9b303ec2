//! Chooses the adapter for a file: the detection cascade.
//!
//! Order of evidence, strongest first (difftastic's `guess_language`): a `--format` override;
//! an explicit marker field; a structural sniff; the file name. Files no adapter claims are
//! either known non-transcripts (skipped, with the reason) or quarantined with a diagnostic that
//! lists every format tried and why each was rejected.

use super::diag::{InputError, InputErrorKind};
use super::format::{Adapter, Detection, FileRole, Strength};
use super::probe::{MAX_DEPTH, Probe};

/// The result of detection for one file.
pub enum Detected {
    Adapter { adapter: &'static dyn Adapter, detection: Detection },
    Skip(String),
    Quarantine(InputError),
}

/// Extensions that are never transcripts, with the reason shown in the summary.
const SKIP_EXTENSIONS: &[(&[&str], &str)] = &[
    (&["png", "jpg", "jpeg", "gif", "webp", "svg", "ico", "pdf", "mp4", "webm"], "image or media file"),
    (&["gz", "tgz", "tar", "bz2", "xz", "zst", "whl", "so", "pyc", "o", "a"], "archive or compiled file"),
    (&["md", "rst", "html", "css"], "document, not a transcript"),
    (&["patch", "diff"], "patch file"),
    (
        &[
            "py",
            "sh",
            "rs",
            "go",
            "ts",
            "js",
            "tsx",
            "jsx",
            "c",
            "h",
            "cc",
            "cpp",
            "hpp",
            "java",
            "kt",
            "gradle",
            "rb",
            "php",
            "cs",
            "swift",
            "scala",
            "ex",
            "exs",
            "toml",
            "lock",
            "cfg",
            "ini",
            "dockerfile",
            "xml",
            "properties",
            "mod",
            "sum",
        ],
        "source or configuration file",
    ),
    (&["log", "txt", "out", "err", "cast"], "plain log without a known transcript format"),
];

const SKIP_NAMES: &[(&str, &str)] = &[
    (".ds_store", "Finder metadata"),
    (".gitignore", "git metadata"),
    (".gitkeep", "git metadata"),
    ("package.json", "source or configuration file"),
    ("package-lock.json", "source or configuration file"),
    ("tsconfig.json", "source or configuration file"),
    ("composer.json", "source or configuration file"),
    (".eslintrc.json", "source or configuration file"),
    ("settings.json", "source or configuration file"),
];

/// Runs the cascade over every adapter.
#[must_use]
pub fn detect(probe: &Probe, display: &str, adapters: &[&'static dyn Adapter], forced: Option<&'static dyn Adapter>) -> Detected {
    if let Some((_, reason)) = SKIP_NAMES.iter().find(|(n, _)| *n == probe.name) {
        return Detected::Skip((*reason).to_string());
    }
    if probe.size == 0 {
        return Detected::Quarantine(
            InputError::new(InputErrorKind::Empty, display, "read a transcript: the file is empty")
                .with_help("an empty file usually means the harness crashed before writing; rerun the trial or remove the file"),
        );
    }
    let ext = probe.ext();
    let media = SKIP_EXTENSIONS.iter().take(2).find(|(exts, _)| exts.contains(&ext));
    if let Some((_, reason)) = media {
        return Detected::Skip((*reason).to_string());
    }

    let (mut best, mut rejections) = sniff_all(probe, adapters);
    // Key order and value size must not decide the format: when the probe ended inside a large
    // early value and nothing claimed the file, look at the keys of the whole document.
    let skimmed = if best.is_none() { probe.skimmed() } else { None };
    if let Some(s) = &skimmed {
        (best, rejections) = sniff_all(s, adapters);
    }
    let probe = skimmed.as_ref().unwrap_or(probe);
    if let Some(f) = forced {
        // An override never turns a verdict file or run metadata into a transcript.
        let keep = best.as_ref().is_some_and(|(a, d)| a.role() != FileRole::Transcript && d.strength == Strength::Marker);
        if !keep {
            return Detected::Adapter { adapter: f, detection: Detection { strength: Strength::Marker, reason: "--format".into() } };
        }
    }
    if let Some((adapter, detection)) = best {
        return Detected::Adapter { adapter, detection };
    }
    if let Some((_, reason)) = SKIP_EXTENSIONS.iter().skip(2).find(|(exts, _)| exts.contains(&ext))
        && !probe.binary
    {
        return Detected::Skip((*reason).to_string());
    }
    if let Some(reason) = own_output(probe) {
        return Detected::Skip(reason.to_string());
    }
    Detected::Quarantine(unknown(probe, display, &rejections))
}

type Sniffs = (Option<(&'static dyn Adapter, Detection)>, Vec<(&'static str, String)>);

/// The strongest detection among `adapters`, and why each of the others said no.
fn sniff_all(probe: &Probe, adapters: &[&'static dyn Adapter]) -> Sniffs {
    let mut rejections: Vec<(&'static str, String)> = Vec::new();
    let mut best: Option<(&'static dyn Adapter, Detection)> = None;
    for &a in adapters {
        match a.sniff(probe) {
            Ok(d) => {
                if best.as_ref().is_none_or(|(_, b)| d.strength > b.strength) {
                    best = Some((a, d));
                }
            }
            Err(why) => rejections.push((a.name(), why)),
        }
    }
    (best, rejections)
}

/// coroner's own outputs often sit beside the runs they describe; reading a run directory
/// back must not quarantine them as broken transcripts.
fn own_output(probe: &Probe) -> Option<&'static str> {
    if let Some(j) = probe.json.as_ref().filter(|j| j.error.is_none() && !j.top_is_array)
        && j.has("registry_version")
        && j.has("tools")
    {
        return Some("coroner tool registry (pass it with --registry)");
    }
    if let Some(j) = probe.jsonl.as_ref()
        && ["trajectory_id", "primary", "classes", "mechanics", "evidence"].iter().all(|k| j.has(k))
    {
        return Some("coroner verdicts (classify output)");
    }
    None
}

fn unknown(probe: &Probe, display: &str, rejections: &[(&'static str, String)]) -> InputError {
    let tried = rejections.iter().map(|(n, why)| format!("{n}: {why}")).collect::<Vec<_>>().join("; ");
    if probe.binary {
        if let Some(nul) = memchr::memchr(0, &probe.prefix) {
            return InputError::new(InputErrorKind::Binary, display, "read a transcript: the file is binary")
                .with_help("no supported format is binary except Inspect `.eval` (ZIP) logs; is this the right file?")
                .at_offset(&probe.prefix, nul, "NUL byte");
        }
        if let Err(e) = std::str::from_utf8(&probe.prefix) {
            return InputError::invalid_utf8(display, &probe.prefix, &e);
        }
    }
    if let Some(at) = probe.too_deep_at() {
        return InputError::new(InputErrorKind::TooDeep, display, format!("parse JSON: nesting deeper than {MAX_DEPTH} levels"))
            .with_help("no transcript format nests this deep; the file is corrupt or hostile")
            .at_offset(&probe.prefix, at, "too deep here");
    }
    if let Some(shape) = probe.json.as_ref().filter(|_| probe.jsonl.is_none())
        && let Some((msg, line, col)) = &shape.error
    {
        let kind = if msg.contains("recursion limit") {
            InputErrorKind::TooDeep
        } else if msg.starts_with("EOF while parsing") {
            InputErrorKind::Truncated
        } else {
            InputErrorKind::Syntax
        };
        let help = if kind == InputErrorKind::TooDeep {
            "the JSON nests deeper than 128 levels; no transcript format does that".to_string()
        } else if kind == InputErrorKind::Truncated {
            format!(
                "the file ends in the middle of a value, probably cut off while being written, before anything that names its format; formats tried: {tried}"
            )
        } else {
            format!("the file starts like JSON but is not valid JSON here; formats tried: {tried}")
        };
        return InputError::new(kind, display, format!("parse JSON: {msg}")).with_help(help).at_line_col(
            &probe.prefix,
            *line,
            *col,
            msg.clone(),
        );
    }
    let seen = probe
        .json
        .as_ref()
        .or(probe.jsonl.as_ref())
        .map(|s| {
            let keys: Vec<&str> = s
                .keys
                .keys()
                .filter(|k| !k.contains('.') || k.starts_with("[].") && k.matches('.').count() == 1)
                .map(String::as_str)
                .take(12)
                .collect();
            format!(" (top-level keys: {})", keys.join(", "))
        })
        .unwrap_or_default();
    InputError::new(InputErrorKind::UnknownFormat, display, format!("recognize the format{seen}"))
        .with_help(format!("formats tried: {tried}. Name one with --format, or convert the file to coroner JSONL"))
}
