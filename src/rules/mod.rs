//! The rules in force, loaded once: the taxonomy (classes, precedence, rule docs) and the
//! harness profiles (what a harness's tools do and what its words mean). Below every stage:
//! interpretation and classification both read them, and neither owns them.

pub mod load;
pub mod meanings;
pub mod profile;

pub use load::{FLAGS, IMPLEMENTED_RULES, Rules, RulesError, Taxonomy};
pub use profile::Profile;

/// What a fixture case says a rule or an interpretation entry does with it.
#[derive(Debug, serde::Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    Fire,
    NoFire,
    /// A known miss: it should fire and does not yet.
    Todo,
}
