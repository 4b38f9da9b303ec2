//! Chat-API logs: OpenAI Chat Completions, Anthropic Messages and Gemini `generateContent`
//! exchanges, one reader for all three.

pub mod anthropic;
pub mod api;
pub mod gemini;
pub mod openai;
