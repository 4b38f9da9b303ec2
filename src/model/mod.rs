//! The contract between stages: the normalized trajectory and what is said about it.

mod ids;
mod pairing;
mod signals;
mod trajectory;
mod verdict;

pub use ids::trajectory_id;
pub use pairing::{pair_results, unanswered_calls};
pub use signals::{AFTER_AGENT, Amounts, Signal, Signals};
pub use trajectory::*;
pub use verdict::*;
