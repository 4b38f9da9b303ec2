//! JSON Schemas generated from the model types, the study file and the predictions file;
//! checked in under `schemas/` and compared by a test, so the documented formats can never
//! drift from the code. It lives above the stages: `model` depends on none of them.

use schemars::JsonSchema;

/// Pretty JSON Schema of `T`, with a trailing newline.
#[must_use]
pub fn schema_of<T: JsonSchema>() -> String {
    let schema = schemars::schema_for!(T);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

/// Every schema coroner publishes: (file name under `schemas/`, contents).
#[must_use]
pub fn published() -> Vec<(&'static str, String)> {
    vec![
        ("trajectory.schema.json", schema_of::<crate::model::Trajectory>()),
        ("verdict.schema.json", schema_of::<crate::model::Verdict>()),
        ("study.schema.json", schema_of::<crate::study::Study>()),
        ("predictions.schema.json", schema_of::<crate::predict::PredictionsFile>()),
    ]
}
