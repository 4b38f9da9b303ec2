//! The documented exit codes; the README's table is this file.

/// The command did what was asked and found nothing it gates on.
pub const SUCCESS: u8 = 0;
/// The analysis ran and found what the command gates on: a refuted prediction, a crossed
/// threshold, a broken check.
pub const GATE: u8 = 1;
/// Usage or configuration error: bad arguments, an invalid rules or study file, a broken
/// seal. Nothing was analysed.
pub const USAGE: u8 = 2;
/// Some inputs were quarantined (unreadable or malformed); results were still written for
/// the rest, and every quarantined input has a diagnostic.
pub const PARTIAL: u8 = 3;
/// Writing an output failed (disk full, permission denied).
pub const IO: u8 = 4;
