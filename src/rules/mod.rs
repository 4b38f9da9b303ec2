//! The rules in force, loaded once: the taxonomy (classes, precedence, rule docs) and the
//! harness profiles (what a harness's tools do and what its words mean). Below every stage:
//! interpretation and classification both read them, and neither owns them.

pub mod formats;
pub mod load;
pub mod meanings;
pub mod pattern;
pub mod profile;
pub mod required;

pub use formats::FormatMapping;
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

impl Expect {
    /// Whether a rule that `fired` (or not) did what the case says; a `todo` is satisfied by not
    /// firing, so a known miss that starts to fire is noticed.
    #[must_use]
    pub fn met(self, fired: bool) -> bool {
        match self {
            Self::Fire => fired,
            Self::NoFire | Self::Todo => !fired,
        }
    }
}
