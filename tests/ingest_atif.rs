//! ATIF v1.7 and v1.8 samples: embedded subagent trajectories, `trajectory_id`, `llm_call_count`,
//! copied context, multimodal parts (images and v1.8 audio) and `extra` on calls and results.

use coroner::model::{Role, Trajectory};

use crate::common::{ingest, samples};

fn one(name: &str) -> Trajectory {
    let (mut ts, summary) = ingest(&[&samples(&format!("atif/{name}"))]);
    assert_eq!(ts.len(), 1, "{name}: one record");
    assert_eq!(summary.trajectories, 1);
    ts.remove(0)
}

fn agents(t: &Trajectory) -> Vec<Option<&str>> {
    t.steps.iter().map(|s| s.agent.as_deref()).collect()
}

#[test]
fn v1_7_embedded_subagent_steps_follow_the_delegation_with_their_agent_named() {
    let t = one("v1.7-embedded.trajectory.json");
    assert_eq!(t.provenance.format_version.as_deref(), Some("ATIF-v1.7"));
    assert_eq!(t.harness, "orchestrator");
    assert_eq!(t.session_id.as_deref(), Some("orch-run-7"), "without session_id, trajectory_id names the run");
    assert_eq!(t.task_id, "v1.7-embedded");
    // 4 steps of the orchestrator, 3 of the reader inlined after the step that delegated.
    assert_eq!(t.steps.len(), 7);
    let sub = Some("subagent:reader-1");
    assert_eq!(agents(&t), [None, None, sub, sub, sub, None, None]);
    assert_eq!(t.steps[2].role, Role::User);
    assert_eq!(t.steps[2].text, "Read parser.py and say where rows end.");
    assert_eq!(t.steps[3].tool_calls[0].name, "read_file");
    assert_eq!(t.steps[3].tool_results[0].call_id.as_deref(), Some("r1"));
    // Embedded steps point at their own bytes in the same file.
    assert_eq!(t.provenance.files.len(), 1, "an embedded subagent is no file of its own");
    let spans: Vec<_> = t.steps.iter().map(|s| s.source_span.expect("a span").offset).collect();
    assert!(spans[2] > spans[6], "the reader's steps lie after the orchestrator's, in subagent_trajectories");

    let calls: usize = t.steps.iter().map(|s| s.tool_calls.len()).sum();
    let results: usize = t.steps.iter().map(|s| s.tool_results.len()).sum();
    assert_eq!((calls, results), (4, 4));
    assert!(t.steps.iter().flat_map(|s| &s.tool_results).all(|r| r.call.is_some()), "every result answers its call");
    assert!(t.unpaired_results.is_empty());
    assert_eq!(t.steps[1].tool_results[0].output, "The loop stops one row early: range(len(rows) - 1).");

    // The dispatch step (llm_call_count 0) keeps its calls and has no tokens; a note says so.
    assert_eq!(t.steps[5].role, Role::Assistant);
    assert_eq!(t.steps[5].tool_calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["apply_patch", "bash"]);
    assert!(t.steps[5].tokens.is_none());
    assert!(t.notes.iter().any(|n| n.contains("agent steps [5] are deterministic dispatch (llm_call_count 0)")), "{:?}", t.notes);
    // llm_call_count 0 on a user step is no dispatch; 2 on the last step sums two inferences.
    assert!(t.notes.iter().any(|n| n.contains("several model inferences (llm_call_count): step 6: 2")), "{:?}", t.notes);
    assert!(t.notes.iter().any(|n| n == "ATIF reasoning_effort: medium, low"), "{:?}", t.notes);

    let tok = t.steps[6].tokens.as_ref().expect("tokens");
    assert_eq!((tok.prompt, tok.completion, tok.cached, tok.reasoning), (Some(1500), Some(40), Some(800), Some(12)));
    assert_eq!(t.steps[3].tokens.as_ref().and_then(|k| k.prompt), Some(300), "the subagent's own metrics stay on its steps");
    // Totals are the root's final_metrics; the embedded trajectory's totals are not added.
    assert_eq!(t.usage.prompt_tokens, Some(2400));
    assert_eq!(t.usage.completion_tokens, Some(100));
    assert_eq!(t.usage.cached_tokens, Some(800));
    assert_eq!(t.usage.cost_usd, Some(0.0009));
}

#[test]
fn v1_8_multimodal_parts_give_text_and_placeholders() {
    let t = one("v1.8-multimodal.trajectory.json");
    assert_eq!(t.provenance.format_version.as_deref(), Some("ATIF-v1.8"));
    assert_eq!(t.session_id.as_deref(), Some("web-run-8"), "session_id wins over trajectory_id");
    assert_eq!(t.model.as_deref(), Some("gemini-3-flash"));
    assert_eq!(t.declared_tools.as_ref().map(Vec::len), Some(4));
    // The copied system step is left out: the first step is the user's.
    assert_eq!(t.steps[0].role, Role::User);
    assert!(!t.steps.iter().any(|s| s.text.contains("You operate a web browser")));
    assert!(t.notes.iter().any(|n| n.contains("1 step(s) marked is_copied_context")), "{:?}", t.notes);
    // Text parts give the text; an image or audio part a placeholder, in order.
    assert_eq!(t.steps[0].text, "Turn on dark mode on this settings page.\n[image]\n[audio]");
    assert_eq!(t.steps[1].tool_results[1].output, "Screenshot taken (1280x800).\n[image]");
    assert_eq!(t.steps[5].tool_results[0].output, "[image]", "an image-only result");
    assert_eq!(t.steps[2].text, "Transcribe this.\n[audio]", "an audio part with an alias media type");
    assert!(t.notes.iter().any(|n| n == "ATIF reasoning_effort: 0.5"), "a numeric effort: {:?}", t.notes);
}

#[test]
fn v1_8_nested_and_unnamed_embedded_subagents() {
    let t = one("v1.8-multimodal.trajectory.json");
    // main 4 (copied step left out), transcriber 2 after step 1, its notes subagent 1 after its
    // step, then the summarizer no ref names, after the main steps.
    assert_eq!(t.steps.len(), 9);
    let (tr, no, su) = (Some("subagent:transcriber-1"), Some("subagent:notes-1"), Some("subagent:summarizer-1"));
    assert_eq!(agents(&t), [None, None, tr, tr, no, None, None, su, su]);
    assert!(t.steps.iter().filter(|s| s.agent.is_some()).all(|s| !s.is_main_agent()));
    assert!(t.notes.iter().any(|n| n.contains("summarizer-1 is named by no subagent_trajectory_ref")), "{:?}", t.notes);
    // The notes subagent's agent step is a dispatch: step 4 of the record.
    assert!(t.notes.iter().any(|n| n.contains("agent steps [4] are deterministic dispatch")), "{:?}", t.notes);
    let calls: usize = t.steps.iter().map(|s| s.tool_calls.len()).sum();
    let results: usize = t.steps.iter().map(|s| s.tool_results.len()).sum();
    assert_eq!((calls, results), (4, 4));
    assert!(t.unpaired_results.is_empty());
    assert_eq!(t.steps[3].tool_calls[0].name, "save_notes");
    assert_eq!(t.steps[8].tokens.as_ref().and_then(|k| k.completion), Some(14));
    assert_eq!(t.usage.prompt_tokens, Some(6800));
    assert_eq!(t.usage.cost_usd, Some(0.0019));
}

#[test]
fn a_ref_to_no_embedded_trajectory_is_a_note_and_an_old_session_ref_is_ignored_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let doc = r#"{"schema_version": "ATIF-v1.7", "session_id": "s", "agent": {"name": "a", "version": "1"},
      "steps": [
        {"step_id": 1, "source": "agent", "message": "go", "tool_calls": [{"tool_call_id": "c", "function_name": "task", "arguments": {}}],
         "observation": {"results": [{"source_call_id": "c", "content": "x",
           "subagent_trajectory_ref": [{"trajectory_id": "missing"}, {"session_id": "old-style"}]}]}}
      ],
      "subagent_trajectories": null}"#;
    let p = dir.path().join("refs.trajectory.json");
    std::fs::write(&p, doc).unwrap();
    let (ts, _) = ingest(&[&p]);
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].steps.len(), 1);
    let missing: Vec<&String> = ts[0].notes.iter().filter(|n| n.contains("subagent trajectory")).collect();
    assert_eq!(missing.len(), 1, "{:?}", ts[0].notes);
    assert!(missing[0].contains("missing not followed"));
}

#[test]
fn the_older_samples_read_as_before() {
    // The linked (v1.6) sample: the subagent file's steps are named by the ref's session id.
    let (ts, _) = ingest(&[&samples("atif/linked")]);
    let texts: Vec<&str> = ts[0].steps.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(texts, ["fix it", "delegating", "subagent looking", "continuing"]);
    assert_eq!(ts[0].steps[2].agent.as_deref(), Some("subagent:sub-1"));
    assert_eq!(ts[0].session_id.as_deref(), Some("main"));
    assert!(!ts[0].notes.iter().any(|n| n.starts_with("ATIF:") || n.starts_with("ATIF reasoning_effort")), "{:?}", ts[0].notes);
}

#[test]
fn a_subagents_own_tools_are_offered_tools_and_not_suspect() {
    // The root declares `bash`; the subagent it delegates to declares and calls `read_file`.
    // Both lists were offered in the run, so the subagent's call is no stranger.
    let doc = serde_json::json!({
        "schema_version": "ATIF-v1.7",
        "session_id": "s",
        "agent": {"name": "terminus-2", "version": "1", "model_name": "m",
                  "tool_definitions": [{"type": "function", "function": {"name": "bash", "parameters": {}}}]},
        "steps": [
            {"step_id": 1, "source": "user", "message": "read the notes"},
            {"step_id": 2, "source": "agent", "message": "delegating",
             "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "ls"}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "notes.txt",
                                          "subagent_trajectory_ref": [{"trajectory_id": "reader"}]}]}}
        ],
        "subagent_trajectories": [{
            "trajectory_id": "reader",
            "agent": {"name": "reader", "tool_definitions": [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]},
            "steps": [
                {"step_id": 1, "source": "agent", "message": "reading",
                 "tool_calls": [{"tool_call_id": "r1", "function_name": "read_file", "arguments": {"path": "notes.txt"}}],
                 "observation": {"results": [{"source_call_id": "r1", "content": "dark mode"}]}}
            ]
        }]
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trajectory.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let got = crate::common::classified(&[&path]);
    let (t, v) = &got[0];
    let names: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["bash", "read_file"]);
    assert_eq!(t.steps.iter().filter(|s| s.agent.as_deref() == Some("subagent:reader")).count(), 1);
    assert!(!v.flags.iter().any(|f| f == "registry_suspect"), "{:?}", v.evidence);
    assert!(!v.evidence.iter().any(|e| e.rule == "registry-suspect-call"));
}
