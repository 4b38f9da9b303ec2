//! The documented exit codes; the README's table is this file.
//!
//! Commands never return these numbers themselves: a command that ran to the end returns
//! `cli::Done` (`SUCCESS`, `GATE`, `PARTIAL`: outcomes of the analysis), one that was stopped
//! returns a `cli::CliError` (`USAGE`, `IO`), and `cli::run` renders the error once and maps
//! either to its code here.

/// The command did what was asked and found nothing it gates on.
pub const SUCCESS: u8 = 0;
/// The analysis ran and found what the command gates on: a refuted prediction, a problem in a
/// label set (`spotcheck audit`).
pub const GATE: u8 = 1;
/// Usage or configuration error: bad arguments, an invalid rules or study file, a broken
/// seal. Nothing was analysed.
pub const USAGE: u8 = 2;
/// Some inputs were quarantined (unreadable or malformed); results were still written for
/// the rest, and every quarantined input has a diagnostic. (`show` exits 3 too: what it shows
/// may not be all there was, or the trajectory could only have been in a quarantined input.)
pub const PARTIAL: u8 = 3;
/// Writing an output failed (disk full, permission denied).
pub const IO: u8 = 4;
