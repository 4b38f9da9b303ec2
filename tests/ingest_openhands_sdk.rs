//! OpenHands agent SDK (V1) event lists (samples written from the SDK's event models).

use coroner::model::{CallRef, Role, TerminationKind};

use crate::common::{ingest, samples};

#[test]
fn sdk_finished_conversation_pairs_calls_and_finishes() {
    let (ts, s) = ingest(&[&samples("openhands-sdk/finished-conversation.json")]);
    assert_eq!(ts.len(), 1);
    assert_eq!(s.per_adapter.get("openhands-sdk"), Some(&1));
    let t = &ts[0];
    assert_eq!(t.harness, "openhands");
    assert_eq!(t.task_id, "finished-conversation");
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    use Role::{Assistant as A, System, Tool as T, User};
    assert_eq!(roles, [System, User, A, T, A, T, A, T, A, T]);
    assert_eq!(t.declared_tools.as_ref().map(Vec::len), Some(3));
    let calls: Vec<(&str, Option<&str>)> = t.calls().map(|(_, c)| (c.name.as_str(), c.id.as_deref())).collect();
    assert_eq!(
        calls,
        [("terminal", Some("call_1")), ("file_editor", Some("call_2")), ("terminal", Some("call_3")), ("finish", Some("call_4"))]
    );
    assert_eq!(t.steps[2].tool_calls[0].arguments["command"], "cat src/range.py");
    let results: Vec<_> = t.steps.iter().flat_map(|s| &s.tool_results).collect();
    assert_eq!(results.len(), 4);
    assert_eq!(results[1].call, Some(CallRef { step: 4, call: 0 }));
    assert!(results.iter().all(|r| !r.is_error && r.call.is_some()));
    assert_eq!(results[2].output, "3 passed in 0.02s");
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.termination.rule.as_deref(), Some("openhands-finish-action"));
    assert_eq!(t.model.as_deref(), Some("litellm_proxy/claude-sonnet-4-5"));
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens), (Some(9120), Some(412), Some(6000)));
    assert_eq!(t.usage.cost_usd, Some(0.0421));
    assert_eq!(t.usage.api_calls, Some(4));
}

#[test]
fn sdk_stuck_conversation_records_errors_and_the_loop_guard() {
    let (ts, s) = ingest(&[&samples("openhands-sdk/stuck-conversation.json")]);
    assert_eq!(s.per_adapter.get("openhands-sdk"), Some(&1));
    let t = &ts[0];
    assert_eq!(t.calls().count(), 3);
    let results: Vec<_> = t.steps.iter().flat_map(|s| &s.tool_results).collect();
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| r.is_error));
    assert_eq!(results[1].call, Some(CallRef { step: 3, call: 0 }));
    assert!(results[1].output.contains("Tool 'browser' not found"));
    assert_eq!(t.termination.rule.as_deref(), Some("openhands-sdk-stuck"));
    assert_eq!(t.termination.raw.as_deref(), Some("stuck"));
    assert_eq!(t.usage.cost_usd, Some(0.0133));
    assert_eq!(t.model, None);
}

#[test]
fn sdk_and_v0_samples_are_told_apart() {
    let (_, s) = ingest(&[&samples("openhands"), &samples("openhands-sdk")]);
    assert_eq!(s.per_adapter.get("openhands-sdk"), Some(&2));
    assert_eq!(s.per_adapter.get("openhands-sdk-conversation"), Some(&1));
    assert_eq!(s.per_adapter.get("openhands"), Some(&1));
    assert_eq!(s.per_adapter.get("openhands-eval"), Some(&6));
}

#[test]
fn sdk_conversation_directory_reads_base_state_and_event_files() {
    let (ts, s) = ingest(&[&samples("openhands-sdk/errored-conversation")]);
    assert_eq!(ts.len(), 1);
    assert_eq!(s.per_adapter.get("openhands-sdk-conversation"), Some(&1));
    let t = &ts[0];
    assert_eq!(t.task_id, "5e1f0c2a-0000-4000-8000-0000000000e1");
    assert_eq!(t.model.as_deref(), Some("anthropic/claude-sonnet-4-5-20250929"));
    // base_state.json and six event files.
    assert_eq!(t.provenance.files.len(), 7);
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    assert_eq!(roles, [Role::System, Role::User, Role::Assistant, Role::Tool]);
    assert_eq!(t.steps[3].tool_results[0].call, Some(CallRef { step: 2, call: 0 }));
    assert_eq!(t.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(t.termination.source.as_deref(), Some("ConversationErrorEvent"));
    assert!(t.termination.raw.as_deref().unwrap().contains("Overloaded"));
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cost_usd), (Some(2100), Some(95), Some(0.0087)));
    assert_eq!(t.signals.limits.steps, Some(100.0));
}
