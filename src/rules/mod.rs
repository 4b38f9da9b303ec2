//! The rules in force, loaded once: the taxonomy (classes, precedence, rule docs) and the
//! harness profiles (what a harness's tools do and what its words mean). Below every stage:
//! interpretation and classification both read them, and neither owns them.

pub mod load;
pub mod profile;

pub use load::{FLAGS, IMPLEMENTED_RULES, Rules, RulesError, Taxonomy};
pub use profile::Profile;
