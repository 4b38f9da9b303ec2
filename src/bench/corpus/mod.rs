//! A reproducible corpus of agent runs for benchmarks: N trajectories (or a byte budget) from a
//! seed, in the file layouts real harnesses write, with every failure class in the mix.
//!
//! Each run is first built harness-neutral ([`script`]), then rendered by one module per
//! format: mini-swe-agent v1 and v2 batch runs with SWE-bench verdicts ([`mini`]), Harbor jobs
//! with ATIF trajectories ([`harbor`]), Inspect `.eval` archives ([`inspect`]) and Claude Code
//! session JSONL with a verdict file ([`claude`]). Run `i` of a format draws from its own
//! ChaCha8 stream (seed, format, i), so the bytes depend only on the options.

pub mod claude;
pub mod harbor;
pub mod inspect;
pub mod mini;
pub mod script;
pub mod text;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use script::{Scenario, Script};

/// A format the generator writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    MiniV1,
    MiniV2,
    Harbor,
    Inspect,
    ClaudeCode,
}

impl Format {
    pub const ALL: [Self; 5] = [Self::MiniV1, Self::MiniV2, Self::Harbor, Self::Inspect, Self::ClaudeCode];

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::MiniV1 => "mini-v1",
            Self::MiniV2 => "mini-v2",
            Self::Harbor => "harbor",
            Self::Inspect => "inspect",
            Self::ClaudeCode => "claude-code",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == s)
    }

    /// The scenarios this format can express. mini-swe-agent v1 has no named tools (every
    /// action is a bash block), so it cannot call a tool that does not exist.
    #[must_use]
    pub fn scenarios(self) -> Vec<Scenario> {
        Scenario::ALL.into_iter().filter(|s| !(self == Self::MiniV1 && *s == Scenario::HallucinatedTool)).collect()
    }

    /// The step limit every run of this format shares, when its transcripts do not say that a
    /// limit ended the run: Claude Code's session files keep no status line for `--max-turns`,
    /// so `coroner classify --step-limit` must be told it (bench/run.sh does).
    #[must_use]
    pub fn fixed_step_limit(self) -> Option<u32> {
        match self {
            Self::ClaudeCode => Some(CLAUDE_MAX_TURNS),
            _ => None,
        }
    }

    fn index(self) -> u64 {
        match self {
            Self::MiniV1 => 1,
            Self::MiniV2 => 2,
            Self::Harbor => 3,
            Self::Inspect => 4,
            Self::ClaudeCode => 5,
        }
    }
}

/// The `--max-turns` of the generated Claude Code runs.
pub const CLAUDE_MAX_TURNS: u32 = 50;

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenOptions {
    pub out: PathBuf,
    pub seed: u64,
    pub formats: Vec<Format>,
    /// Trajectories per format (`None`: until `target_bytes`).
    pub count: Option<usize>,
    /// Total bytes over all formats, shared equally (`None`: `count` decides).
    pub target_bytes: Option<u64>,
    /// Samples per Inspect `.eval` archive (`None`: [`inspect::EVAL_SIZE`]); one archive of
    /// every sample (with `count`) is the single large log the memory bound is measured on.
    pub eval_samples: Option<usize>,
}

/// What one format's generation wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormatReport {
    pub format: &'static str,
    /// The directory under `out` holding this format.
    pub dir: PathBuf,
    pub trajectories: usize,
    pub files: u64,
    pub bytes: u64,
    /// Trajectories per scenario name.
    pub scenarios: BTreeMap<&'static str, usize>,
    /// Trajectories per expected primary class (`passed` for passing runs).
    pub expected: BTreeMap<&'static str, usize>,
    /// Every run: the task id coroner reports for it, and its scenario.
    pub runs: Vec<(String, &'static str)>,
}

#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error("failed to write {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("failed to generate: give --count or --target-bytes")]
    NoBound,
}

/// Files written under one format's directory, and their bytes.
pub struct Out {
    pub root: PathBuf,
    pub bytes: u64,
    pub files: u64,
}

impl Out {
    fn new(root: PathBuf) -> Self {
        Self { root, bytes: 0, files: 0 }
    }

    /// Writes `bytes` to `rel` under the root, creating directories.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(&mut self, rel: &Path, bytes: &[u8]) -> Result<(), GenError> {
        let p = self.root.join(rel);
        let io = |source| GenError::Io { path: p.display().to_string(), source };
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(io)?;
        }
        std::fs::write(&p, bytes).map_err(io)?;
        self.bytes += bytes.len() as u64;
        self.files += 1;
        Ok(())
    }

    /// Writes `v` as JSON: indented like Python's `json.dump(indent=...)` when `pretty`.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn json(&mut self, rel: &Path, v: &serde_json::Value, pretty: bool) -> Result<(), GenError> {
        let bytes = if pretty { serde_json::to_vec_pretty(v) } else { serde_json::to_vec(v) };
        let bytes = bytes.map_err(|e| GenError::Io { path: rel.display().to_string(), source: e.into() })?;
        self.write(rel, &bytes)
    }

    /// Counts a file written some other way (an archive).
    ///
    /// # Errors
    /// When its size cannot be read.
    pub fn account(&mut self, rel: &Path) -> Result<(), GenError> {
        let p = self.root.join(rel);
        let m = std::fs::metadata(&p).map_err(|source| GenError::Io { path: p.display().to_string(), source })?;
        self.bytes += m.len();
        self.files += 1;
        Ok(())
    }
}

/// A format's writer: takes runs one at a time, then writes the batch-level files.
pub trait Sink {
    /// Renders one run and returns the task id coroner will report for it.
    ///
    /// # Errors
    /// On write failure.
    fn add(&mut self, s: &Script, rng: &mut ChaCha8Rng, out: &mut Out) -> Result<String, GenError>;

    /// Writes what only the whole batch knows (run reports, job results, archive trailers).
    ///
    /// # Errors
    /// On write failure.
    fn finish(&mut self, out: &mut Out) -> Result<(), GenError>;
}

fn sink_for(f: Format, seed: u64, eval_samples: Option<usize>) -> Box<dyn Sink> {
    match f {
        Format::MiniV1 => Box::new(mini::MiniSink::new(false, seed)),
        Format::MiniV2 => Box::new(mini::MiniSink::new(true, seed)),
        Format::Harbor => Box::new(harbor::HarborSink::new(seed)),
        Format::Inspect => Box::new(inspect::InspectSink::new(seed, eval_samples.unwrap_or(inspect::EVAL_SIZE).max(1))),
        Format::ClaudeCode => Box::new(claude::ClaudeSink::new(seed)),
    }
}

/// SplitMix64 of the seed, format and index: independent streams per run.
fn stream_seed(seed: u64, format: u64, i: u64) -> u64 {
    let mut z = seed ^ format.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Generates the corpus; `progress` is told after each run (format, runs, bytes so far).
///
/// # Errors
/// On write failure, or when neither a count nor a byte target bounds the run.
pub fn generate(o: &GenOptions, progress: &mut dyn FnMut(&FormatReport)) -> Result<Vec<FormatReport>, GenError> {
    if o.count.is_none() && o.target_bytes.is_none() {
        return Err(GenError::NoBound);
    }
    let per_format_bytes = o.target_bytes.map(|b| b / o.formats.len().max(1) as u64);
    let mut reports = Vec::new();
    for &f in &o.formats {
        let dir = o.out.join(f.name());
        let mut out = Out::new(dir.clone());
        let mut sink = sink_for(f, o.seed, o.eval_samples);
        let supported = f.scenarios();
        let mut rep = FormatReport { format: f.name(), dir, ..FormatReport::default() };
        let mut i = 0usize;
        loop {
            if o.count.is_some_and(|n| i >= n) || per_format_bytes.is_some_and(|b| out.bytes >= b) {
                break;
            }
            let mut rng = ChaCha8Rng::seed_from_u64(stream_seed(o.seed, f.index(), i as u64));
            let scenario = script::choose_scenario(&mut rng, i, &supported);
            let s = script::build(&mut rng, i, scenario, f.fixed_step_limit());
            let id = sink.add(&s, &mut rng, &mut out)?;
            rep.runs.push((id, scenario.name()));
            *rep.scenarios.entry(scenario.name()).or_default() += 1;
            *rep.expected.entry(scenario.expected_class().unwrap_or("passed")).or_default() += 1;
            i += 1;
            rep.trajectories = i;
            rep.bytes = out.bytes;
            if i.is_multiple_of(64) {
                progress(&rep);
            }
        }
        sink.finish(&mut out)?;
        rep.bytes = out.bytes;
        rep.files = out.files;
        progress(&rep);
        reports.push(rep);
    }
    write_file(&o.out.join("corpus.toml"), manifest(o, &reports).as_bytes())?;
    write_file(&o.out.join("expected.toml"), expected(&reports).as_bytes())?;
    Ok(reports)
}

fn write_file(p: &Path, bytes: &[u8]) -> Result<(), GenError> {
    let io = |source| GenError::Io { path: p.display().to_string(), source };
    std::fs::create_dir_all(p.parent().unwrap_or(Path::new("."))).map_err(io)?;
    let mut f = std::fs::File::create(p).map_err(io)?;
    f.write_all(bytes).map_err(io)
}

/// `expected.toml`: per format, each run's task id and scenario (the class it was built to
/// have), for checking `coroner classify` against.
fn expected(reports: &[FormatReport]) -> String {
    let mut m: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for r in reports {
        m.insert(r.format, r.runs.iter().map(|(id, sc)| (id.as_str(), *sc)).collect());
    }
    toml::to_string(&m).unwrap_or_default()
}

/// `corpus.toml`: how the corpus was made and what it holds, for the benchmark report. TOML,
/// so `coroner ingest` over the corpus skips it as a configuration file.
fn manifest(o: &GenOptions, reports: &[FormatReport]) -> String {
    #[derive(serde::Serialize)]
    struct Manifest<'a> {
        generator: String,
        seed: u64,
        count: Option<u64>,
        target_bytes: Option<u64>,
        format: Vec<FormatEntry<'a>>,
    }
    #[derive(serde::Serialize)]
    struct FormatEntry<'a> {
        name: &'a str,
        trajectories: u64,
        files: u64,
        bytes: u64,
        scenarios: &'a BTreeMap<&'static str, usize>,
        expected: &'a BTreeMap<&'static str, usize>,
        /// `coroner classify --step-limit` for this format, when its files do not record it.
        step_limit: Option<u32>,
    }
    let m = Manifest {
        generator: format!("coroner gen-corpus {}", env!("CARGO_PKG_VERSION")),
        seed: o.seed,
        count: o.count.map(|c| c as u64),
        target_bytes: o.target_bytes,
        format: reports
            .iter()
            .map(|r| FormatEntry {
                name: r.format,
                trajectories: r.trajectories as u64,
                files: r.files,
                bytes: r.bytes,
                scenarios: &r.scenarios,
                expected: &r.expected,
                step_limit: Format::parse(r.format).and_then(Format::fixed_step_limit),
            })
            .collect(),
    };
    toml::to_string(&m).unwrap_or_default()
}
