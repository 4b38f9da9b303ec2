//! Chat-API logs: OpenAI Chat Completions and Anthropic Messages exchanges, one reader for both.

pub mod anthropic;
pub mod api;
pub mod openai;
