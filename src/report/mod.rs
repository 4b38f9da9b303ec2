//! Reporting: what reaches a person's terminal or document.

pub mod sanitize;
