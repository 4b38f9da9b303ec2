//! Pre-registered predictions: claims written and sealed before a run, checked after it.
//!
//! `seal` records digests of the predictions, rules and registries with the time; `check`
//! refuses a tampered or late seal, judges every claim with intervals (confirmed, refuted,
//! inconclusive; Holm across claims) and renders the result for people (table, Markdown) and
//! CI (JUnit XML); `retract` withdraws a claim without breaking the seal.

pub mod check;
pub mod digest;
pub mod junit;
pub mod load;
pub mod model;
pub mod power;
pub mod render;
pub mod seal;

pub use check::{CheckError, CheckReport, Evaluation, SealSummary, Status, check, evaluate};
pub use digest::{RetractError, predictions_digest, retract};
pub use load::{Loaded, PredictionsError};
pub use model::{Claim, Comparator, Metric, Prediction, PredictionsFile, Retraction};
pub use power::{DesignInfo, Detectable, detectable};
pub use seal::{Lock, LockError, SealError, SealProblem};
