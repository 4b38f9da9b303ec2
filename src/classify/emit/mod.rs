//! Write-back: coroner's verdicts put where other tools show transcripts — into the ATIF
//! trajectory they were read from (Harbor's viewer), or as an Inspect Scout scan.

pub mod atif;
pub mod scout;

/// Where `classify --emit` writes the verdicts besides its usual output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// Each ATIF trajectory again, with the verdict in its top-level `extra.coroner`.
    Atif,
    /// An Inspect Scout scan directory (`scan_id=<id>/`), coroner as its scanner.
    Scout,
}
