//! The declared tool registry: what a harness really offers a model, read from its source
//! code with tree-sitter queries kept as data (`rules/registry/<lang>.scm`), imported from a
//! captured tool list, and compared with what runs exercised.
//!
//! A call is only a "hallucinated tool" against this registry; a call the registry lacks that
//! executed without error is evidence that the registry is incomplete.

pub mod diag;
pub mod diff;
pub mod extract;
pub mod import;
pub mod lang;
pub mod literal;
pub mod model;
pub mod near;
pub mod query;
pub mod testcode;
mod yaml;

pub use diff::{DiffReport, Verdict, diff};
pub use extract::{ExtractError, ExtractOptions, Extraction, extract};
pub use import::{ImportOptions, import, load};
pub use lang::Lang;
pub use model::{Confidence, Knowledge, Namespace, REGISTRY_VERSION, Registry, Tool, ToolSet};
pub use query::{QueryError, QuerySet};

/// The JSON Schema of `registry.json`, as checked in at `schemas/registry.schema.json`.
#[must_use]
pub fn schema() -> String {
    let schema = schemars::schema_for!(Registry);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}
