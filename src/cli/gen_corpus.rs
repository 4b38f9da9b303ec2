//! `coroner gen-corpus` (hidden): writes a reproducible benchmark corpus from a seed.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::{CliError, Done};
use crate::bench::corpus::{Format, GenError, GenOptions, generate};

/// Write a reproducible corpus of generated agent runs for benchmarks (not real transcripts).
///
/// Runs are built from the seed in each chosen format (mini-swe-agent v1 and v2 batch runs
/// with SWE-bench reports, Harbor jobs with ATIF, Inspect `.eval` archives, Claude Code
/// session JSONL with a verdict file), with every failure class in the mix. The same options
/// give the same bytes. `corpus.toml` in DIR records what was written.
#[derive(Debug, Args)]
pub struct GenCorpusArgs {
    /// Output directory (one subdirectory per format).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Trajectories per format.
    #[arg(long, value_name = "N")]
    pub count: Option<usize>,
    /// Stop when the corpus reaches about this many bytes (shared equally by the formats);
    /// accepts suffixes K, M, G (powers of 1000).
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub target_bytes: Option<u64>,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Samples per Inspect `.eval` archive (default 50); `--count N --eval-samples N` writes
    /// one archive of N samples, for the memory bound on a single large log.
    #[arg(long, value_name = "N")]
    pub eval_samples: Option<usize>,
    /// Comma-separated formats: mini-v1, mini-v2, harbor, inspect, claude-code (default: all).
    #[arg(long, value_delimiter = ',', value_parser = parse_format)]
    pub formats: Vec<Format>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s).ok_or_else(|| format!("unknown format `{s}` (known: {})", Format::ALL.map(Format::name).join(", ")))
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1_000,
                'M' => 1_000_000,
                'G' => 1_000_000_000,
                _ => return Err(format!("unknown size suffix `{c}` (use K, M or G)")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let n: f64 = num.trim().parse().map_err(|_| format!("`{s}` is not a size"))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(format!("`{s}` is not a positive size"));
    }
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "sizes far below 2^52")]
    Ok((n * mult as f64) as u64)
}

pub fn run(a: &GenCorpusArgs) -> Result<Done, CliError> {
    if a.count.is_none() && a.target_bytes.is_none() {
        return Err(
            CliError::usage("failed to generate a corpus: no size given").with_help("give --count N (per format) or --target-bytes SIZE")
        );
    }
    let formats = if a.formats.is_empty() { Format::ALL.to_vec() } else { a.formats.clone() };
    let opts = GenOptions {
        out: a.out.clone(),
        seed: a.seed,
        formats,
        count: a.count,
        target_bytes: a.target_bytes,
        eval_samples: a.eval_samples,
    };
    let quiet = a.quiet;
    let mut current = "";
    let mut progress = |r: &crate::bench::corpus::FormatReport| {
        if quiet {
            return;
        }
        let mut err = std::io::stderr().lock();
        if !current.is_empty() && current != r.format {
            let _ = writeln!(err);
        }
        current = r.format;
        let _ = write!(err, "\r{:<12} {:>7} runs {:>8.1} MB", r.format, r.trajectories, r.bytes as f64 / 1e6);
    };
    let reports = generate(&opts, &mut progress).map_err(|e| match e {
        GenError::NoBound => CliError::usage(e.to_string()),
        GenError::Io { .. } => CliError::io(e.to_string()),
    })?;
    if !quiet {
        let _ = writeln!(std::io::stderr());
        for r in &reports {
            let _ = writeln!(
                std::io::stderr(),
                "{:<12} {:>7} trajectories {:>7} files {:>9.1} MB  {}",
                r.format,
                r.trajectories,
                r.files,
                r.bytes as f64 / 1e6,
                r.dir.display()
            );
        }
    }
    Ok(Done::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_decimal_suffixes() {
        assert_eq!(parse_bytes("2G"), Ok(2_000_000_000));
        assert_eq!(parse_bytes("1.5M"), Ok(1_500_000));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert!(parse_bytes("3X").is_err());
        assert!(parse_bytes("-1").is_err());
    }
}
