//! Spot-checking the classifier by hand: show one trajectory with its evidence, draw a
//! stratified blind sample to label, score the labels against the machine's, and audit a set
//! of human labels against the trajectories they describe.

pub mod audit;
mod error;
pub mod labels;
pub mod render;
pub mod sample;
pub mod score;
pub mod select;

pub use error::SpotcheckError;
