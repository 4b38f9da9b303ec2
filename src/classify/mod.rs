//! Classify: mechanics and failure classes for each trajectory, with evidence.

pub mod actions;
pub mod changes;
pub mod dialogue;
pub mod emit;
pub mod empty_inputs;
pub mod engine;
pub mod fixture;
pub mod mechanics;
pub mod oracle;
pub(crate) mod python_calls;
pub(crate) mod python_modules;
pub mod shell;
pub mod simple_command;
pub mod table;
pub mod test_errors;

pub use engine::{Classifier, Options};
pub use oracle::LoadedRegistry;
