//! Terminal captures: what an agent's CLI printed into a terminal, as tmux's `pipe-pane`
//! (Terminal-Bench 1 `sessions/agent.log`) or `tee` kept it — with colour codes, cursor
//! movement and carriage-return redraws.
//!
//! [`clean`] turns the bytes into the text a person would have read, deterministically: escape
//! sequences (CSI, OSC, DCS and two-byte ones) are removed, a carriage return moves back to the
//! start of the line so later characters overwrite earlier ones, erase-in-line (`ESC [ K`) is
//! applied to the line being drawn, other control bytes and NULs are dropped. A capture cut
//! inside a sequence loses only that sequence.
//!
//! [`parse`] then reads the steps of agents whose CLI prints them. mini-swe-agent's `mini`
//! (`InteractiveAgent.add_message`) prints each message under a header: `System:`, `User:`
//! (the task, then each observation `<returncode>N</returncode><output>...`), `Tool:`/`Exit:`
//! (2.x), and `mini-swe-agent (step N, $C.CC):` before each reply, whose action is its one
//! ```` ```bash ```` block; a rule line separates steps. For any other agent the cleaned text is
//! kept whole as one environment step.
//!
//! How the run ended is left to interpretation, as signals: the exit status mini's protocol
//! implies (`Submitted` when the submit marker's output was printed), the lines the CLI printed
//! after the last step (`Limits exceeded. ...`, a traceback) or, when no step came, after the
//! agent's command line (`bash: mini: command not found`), and the limits and spend it printed.

use std::path::Path;

use crate::ingest::adapters::shared::build::to_u32;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{CallRef, Role, Signals, Step, ToolCall, ToolResult, Trajectory};

const NAME: &str = "terminal-capture";

/// Where the capture's signals were read (`field` of each signal).
pub const EXIT_STATUS: &str = "terminal_capture.exit_status";
pub const TAIL: &str = "terminal_capture.tail";
pub const STARTUP: &str = "terminal_capture.startup";
/// Lines of an installed agent's own output that a person scanning for why it stopped reads.
pub const LOG: &str = "terminal_capture.log";

/// Most lines kept from a capture's tail or start-up output.
const MAX_LOG_LINES: usize = 40;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Esc {
    None,
    /// After ESC.
    Start,
    /// Inside `ESC [` ... final byte; the parameter bytes are kept for erase-in-line.
    Csi,
    /// Inside a string sequence (OSC, DCS, SOS, PM, APC) until BEL or ST.
    Str,
    /// ESC seen inside a string sequence (ST is `ESC \`).
    StrEnd,
    /// `ESC` + an intermediate byte (`ESC ( B`): one more byte ends it.
    Intermediate,
}

/// The capture as a person would have read it (see the module docs).
#[must_use]
pub fn clean(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut line: Vec<char> = Vec::new();
    let mut col = 0usize;
    let mut state = Esc::None;
    let mut params = String::new();
    let flush = |line: &mut Vec<char>, out: &mut String| {
        let s: String = line.iter().collect();
        out.push_str(s.trim_end());
        out.push('\n');
        line.clear();
    };
    for c in text.chars() {
        match state {
            Esc::Start => {
                state = match c {
                    '[' => {
                        params.clear();
                        Esc::Csi
                    }
                    ']' | 'P' | 'X' | '^' | '_' => Esc::Str,
                    ' '..='/' => Esc::Intermediate,
                    _ => Esc::None,
                };
                continue;
            }
            Esc::Csi => {
                if ('@'..='~').contains(&c) {
                    state = Esc::None;
                    if c == 'K' {
                        // Erase in line: 0 (default) to the end, 1 to the cursor, 2 all.
                        match params.trim_start_matches('?') {
                            "" | "0" => line.truncate(col.min(line.len())),
                            "1" => line.iter_mut().take(col + 1).for_each(|ch| *ch = ' '),
                            "2" => line.clear(),
                            _ => {}
                        }
                    }
                } else if params.len() < 32 {
                    params.push(c);
                }
                continue;
            }
            Esc::Str => {
                match c {
                    '\u{7}' => state = Esc::None,
                    '\u{1b}' => state = Esc::StrEnd,
                    _ => {}
                }
                continue;
            }
            Esc::StrEnd => {
                state = if c == '\\' { Esc::None } else { Esc::Str };
                continue;
            }
            Esc::Intermediate => {
                state = Esc::None;
                continue;
            }
            Esc::None => {}
        }
        match c {
            '\u{1b}' => state = Esc::Start,
            '\n' => {
                flush(&mut line, &mut out);
                col = 0;
            }
            '\r' => col = 0,
            '\u{8}' => col = col.saturating_sub(1),
            '\t' => {
                let next = (col / 8 + 1) * 8;
                while col < next {
                    put(&mut line, col, ' ');
                    col += 1;
                }
            }
            // C1 CSI as one character.
            '\u{9b}' => {
                params.clear();
                state = Esc::Csi;
            }
            c if c.is_control() => {}
            c => {
                put(&mut line, col, c);
                col += 1;
            }
        }
    }
    if !line.is_empty() {
        flush(&mut line, &mut out);
    }
    out
}

fn put(line: &mut Vec<char>, col: usize, c: char) {
    if col < line.len() {
        line[col] = c;
    } else {
        line.resize(col, ' ');
        line.push(c);
    }
}

/// What a capture says about a run.
#[derive(Debug, Default)]
pub struct Capture {
    pub steps: Vec<Step>,
    pub notes: Vec<String>,
    /// What the capture says about how the run ended, uninterpreted.
    pub signals: Signals,
    /// The `-m` of the agent's command line.
    pub model: Option<String>,
    /// The agent whose output was recognized (`mini-swe-agent`), if any.
    pub agent: Option<&'static str>,
    /// The last cumulative cost the CLI printed.
    pub cost_usd: Option<f64>,
    /// The last step counter the CLI printed (model calls).
    pub model_calls: Option<u64>,
    pub submission: Option<String>,
}

/// Reads a cleaned capture. `file` indexes the provenance list of the record the steps go to;
/// spans point into the cleaned text's lines by line number (the raw bytes have no stable
/// offsets once redraws are applied).
#[must_use]
pub fn parse(cleaned: &str) -> Capture {
    let lines: Vec<&str> = cleaned.lines().collect();
    let mut cap = Capture::default();
    let invocation = lines.iter().rposition(|l| mini_invocation(l).is_some());
    if let Some(i) = invocation {
        cap.agent = Some("mini-swe-agent");
        cap.model = mini_invocation(lines[i]).flatten();
    }
    if lines.iter().any(|l| step_header(l).is_some()) {
        cap.agent = Some("mini-swe-agent");
        read_mini(&lines[invocation.map_or(0, |i| i + 1)..], &mut cap);
    } else if cap.agent.is_none() {
        let text = cleaned.trim();
        if !text.is_empty() {
            cap.steps.push(Step::new(Role::Environment, text.to_string()));
        }
        cap.notes.push("the trajectory is unstructured: the cleaned terminal capture is kept as one environment step".into());
        agent_output(&lines, &mut cap);
    } else {
        cap.notes.push("mini-swe-agent was started but printed no step".into());
        startup(&lines[invocation.map_or(0, |i| i + 1)..], &mut cap);
    }
    cap
}

/// Most lines of an unstructured agent's output kept as log lines.
const MAX_AGENT_LOG_LINES: usize = 400;
/// Lines after the agent's command line that are its start-up.
const STARTUP_LINES: usize = 15;

/// An installed agent whose output coroner does not read into steps: what it printed after
/// the harness started it (the command line after the install script's). Its first lines are
/// its start-up (a launcher that crashed, a command that was never installed); after them, the
/// log records at warning level or above, state changes and shell errors, and the last lines.
fn agent_output(lines: &[&str], cap: &mut Capture) {
    static RECORD: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let record = RECORD.get_or_init(|| {
        regex::Regex::new(r"(?i)(?:error|critical|fatal|warn(?:ing)?|exception|traceback|failed|denied|killed|not found|no such|no space|timed? ?out|state)").expect("static regex")
    });
    let Some(install) = lines.iter().position(|l| looks_like_prompt(l) && l.contains("install-agent")) else { return };
    // The agent's command line; when the capture lost it (typed while the install scrolled),
    // the install script's closing `INSTALL_SUCCESS`.
    let typed = lines[install + 1..]
        .iter()
        .position(|l| looks_like_prompt(l) && l.split_once(['#', '$']).is_some_and(|(_, c)| !c.trim().is_empty()));
    let installed = lines[install + 1..].iter().rposition(|l| l.trim() == "INSTALL_SUCCESS");
    let Some(launch) = typed.or(installed).map(|k| install + 1 + k) else { return };
    // The command's continuation lines (the shell's `> ` prompt, a task over several lines)
    // are the command, not its output.
    let after: Vec<&str> = lines[launch + 1..]
        .iter()
        .copied()
        .skip_while(|l| l.trim() == ">" || l.starts_with("> "))
        .filter(|l| !l.trim().is_empty() && !is_chrome(l) && !looks_like_prompt(l))
        .collect();
    let (start, rest) = after.split_at(after.len().min(STARTUP_LINES));
    for l in start {
        cap.signals.log_line(STARTUP, shell_message(l));
    }
    let tail_from = rest.len().saturating_sub(MAX_LOG_LINES);
    let kept: Vec<&str> = rest.iter().enumerate().filter(|(i, l)| *i >= tail_from || record.is_match(l)).map(|(_, l)| *l).collect();
    for l in &kept[kept.len().saturating_sub(MAX_AGENT_LOG_LINES)..] {
        let text: String = l.trim().chars().take(300).collect();
        cap.signals.log_line(LOG, text);
    }
}

/// What the shell and the CLI printed after the agent's command line when no step followed:
/// why the agent never started, if anything says. The command's continuation lines (the
/// shell's `> ` prompt, a task over several lines) are the command, not its answer.
fn startup(after: &[&str], cap: &mut Capture) {
    let answer = after.iter().skip_while(|l| *l == &">" || l.starts_with("> "));
    log_lines(answer.copied(), STARTUP, cap);
}

/// The last [`MAX_LOG_LINES`] lines a person would read there (no blank line, spinner, rule or
/// prompt), as log lines of `field`; returns them.
fn log_lines<'a>(lines: impl Iterator<Item = &'a str>, field: &str, cap: &mut Capture) -> Vec<&'a str> {
    let kept: Vec<&str> = lines.filter(|l| !l.trim().is_empty() && !is_chrome(l) && !looks_like_prompt(l)).map(shell_message).collect();
    for l in &kept[kept.len().saturating_sub(MAX_LOG_LINES)..] {
        cap.signals.log_line(field, *l);
    }
    kept
}

/// A line without the shell's name when the shell speaks: `bash: mini: command not found` and
/// `/bin/sh: 1: mini: not found` are the shell's messages about `mini`.
fn shell_message(line: &str) -> &str {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"^(?:\S*/)?(?:ba|da|z|k)?sh:(?: line \d+:| \d+:)? ").expect("static regex"));
    let l = line.trim();
    re.find(l).map_or(l, |m| &l[m.end()..])
}

/// `mini ... -m MODEL ...` on a shell prompt line → `Some(model)`.
fn mini_invocation(line: &str) -> Option<Option<String>> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#"(?:^|[#$]\s|;\s*|&&\s*)(?:\S*/)?mini(?:-swe-agent)?\s+(?:.*?\s)?(?:-m|--model)[ =]('[^']*'|"[^"]*"|\S+)|(?:^|[#$]\s)(?:\S*/)?mini\s+-"#)
            .expect("static regex")
    });
    let c = re.captures(line)?;
    Some(c.get(1).map(|m| m.as_str().trim_matches(|c| c == '\'' || c == '"').to_string()))
}

/// `mini-swe-agent (step N, $C):` → (N, C).
fn step_header(line: &str) -> Option<(u64, f64)> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"^mini-swe-agent \(step (\d+), \$(\d+(?:\.\d+)?)\):\s*$").expect("static regex"));
    let c = re.captures(line.trim_end())?;
    Some((c[1].parse().ok()?, c[2].parse().ok()?))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    System,
    User,
    Tool,
    Exit,
    Assistant,
}

fn header(line: &str) -> Option<Block> {
    match line.trim_end() {
        "System:" => Some(Block::System),
        "User:" => Some(Block::User),
        "Tool:" => Some(Block::Tool),
        "Exit:" => Some(Block::Exit),
        l if step_header(l).is_some() => Some(Block::Assistant),
        _ => None,
    }
}

/// A line drawn by `rich.rule.Rule()`: box-drawing dashes only.
fn is_rule(line: &str) -> bool {
    let t = line.trim();
    t.chars().count() >= 10 && t.chars().all(|c| c == '─' || c == '━')
}

/// Lines the CLI prints between messages that are not part of any.
fn is_chrome(line: &str) -> bool {
    let t = line.trim();
    t.ends_with("Waiting for the LM to respond...") || t.starts_with("Saved trajectory to ") || is_rule(t)
}

fn read_mini(lines: &[&str], cap: &mut Capture) {
    // Split into (block kind, header line index, body lines).
    let mut blocks: Vec<(Block, usize, Vec<&str>)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(b) = header(l) {
            if let Some((n, c)) = step_header(l) {
                cap.model_calls = Some(n);
                cap.cost_usd = Some(c);
            }
            blocks.push((b, i, Vec::new()));
        } else if let Some((_, _, body)) = blocks.last_mut() {
            body.push(l);
        }
    }
    let mut pending: Option<(usize, String)> = None;
    let mut seen_assistant = false;
    let last = blocks.len().saturating_sub(1);
    for (b, (kind, _, body)) in blocks.iter_mut().enumerate() {
        // Trailing chrome (spinner, rules, the shell prompt after exit) is not the message.
        while body.last().is_some_and(|l| l.trim().is_empty() || is_chrome(l) || looks_like_prompt(l)) {
            body.pop();
        }
        let end = message_end(*kind, body);
        let printed = body[end..].iter().position(|l| is_cli_print(l, b == last)).map(|p| p + end);
        if b == last {
            // An observation's template closes with `</output>`: what follows it is the CLI's.
            let observation = matches!(kind, Block::User | Block::Tool | Block::Exit) && end > 0;
            if let Some(from) = printed.or(observation.then_some(end)) {
                tail(&body[from..], cap);
            }
        }
        if let Some(p) = printed {
            body.truncate(p);
        }
        let body_text = body.iter().filter(|l| !is_chrome(l)).copied().collect::<Vec<_>>().join("\n");
        let text = body_text.trim_matches('\n').to_string();
        match kind {
            Block::System => cap.steps.push(Step::new(Role::System, text)),
            Block::Assistant => {
                seen_assistant = true;
                let mut s = Step::new(Role::Assistant, text.clone());
                let actions = bash_blocks(&text);
                pending = None;
                if let [command] = actions.as_slice() {
                    s.tool_calls.push(ToolCall {
                        id: None,
                        name: "bash".into(),
                        arguments: serde_json::json!({ "command": command }),
                        raw_arguments: None,
                    });
                    pending = Some((cap.steps.len(), command.clone()));
                }
                cap.steps.push(s);
            }
            Block::User | Block::Tool if !seen_assistant => cap.steps.push(Step::new(Role::User, text)),
            Block::User | Block::Tool | Block::Exit => {
                let prev = cap.steps.len().checked_sub(1);
                match pending.take() {
                    Some((at, command)) => {
                        let mut r = ToolResult::new(text.clone());
                        r.name = Some("bash".into());
                        r.call = Some(CallRef { step: to_u32(at), call: 0 });
                        if let Some(code) = returncode(&text) {
                            r.exit_code = Some(code);
                            r.is_error = code != 0;
                        } else if text.trim_start().starts_with("The last command <command>") && text.contains("timed out") {
                            r.is_error = true;
                            cap.notes.push(format!("command timed out: {}", command.lines().next().unwrap_or("")));
                        } else if crate::ingest::adapters::swe::mini_swe_agent::submits(&command) {
                            // mini's protocol: the marker's output is the submission, and the
                            // run's exit status is `Submitted`.
                            cap.submission = Some(text.clone());
                            cap.signals.status(EXIT_STATUS, "Submitted").at_step(cap.steps.len());
                        }
                        let mut s = Step::new(Role::Tool, String::new());
                        s.tool_results.push(r);
                        cap.steps.push(s);
                    }
                    None => {
                        // mini.yaml's `format_error_template`, the CLI's own complaint.
                        if let Some(p) = prev.filter(|p| cap.steps[*p].role == Role::Assistant && cap.steps[*p].tool_calls.is_empty())
                            && text.contains("EXACTLY ONE action")
                        {
                            cap.steps[p].format_error = Some(text.lines().next().unwrap_or("").to_string());
                        }
                        cap.steps.push(Step::new(Role::Environment, text));
                    }
                }
            }
        }
    }
}

/// Where a block's message ends at the earliest: after the closing fence of a reply's action,
/// after the `</output>` that closes an observation's template; 0 when the block has neither.
fn message_end(kind: Block, body: &[&str]) -> usize {
    let closes = |l: &str| match kind {
        Block::Assistant => l.trim() == "```",
        Block::User | Block::Tool | Block::Exit => l.trim() == "</output>",
        Block::System => false,
    };
    body.iter().rposition(|l| closes(l)).map_or(0, |i| i + 1)
}

/// A line the CLI prints outside any message: `InteractiveAgent`'s limit prompt (then it waits
/// on stdin for new limits) and, in the last block only, the traceback of a crash.
fn is_cli_print(line: &str, last: bool) -> bool {
    line.trim_start().starts_with("Limits exceeded.") || (last && line.contains("Traceback (most recent call last)"))
}

/// The lines after the last step, and the limits and spend among them.
fn tail(lines: &[&str], cap: &mut Capture) {
    let kept = log_lines(lines.iter().copied(), TAIL, cap);
    limits_printed(&kept.join(" "), cap);
}

/// A shell prompt line (`root@host:/app# `), printed after the agent exits.
fn looks_like_prompt(line: &str) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(r"^\S+@\S+:.*[#$]( |$)").expect("static regex")).is_match(line.trim_end())
}

/// mini-swe-agent's default `action_regex` over the reply.
fn bash_blocks(text: &str) -> Vec<String> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"(?s)```bash\s*\n(.*?)\n```").expect("static regex"));
    re.captures_iter(text).filter_map(|c| c.get(1)).map(|m| m.as_str().trim().to_string()).collect()
}

fn returncode(text: &str) -> Option<i64> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"<returncode>\s*(-?\d+)\s*</returncode>").expect("static regex"));
    re.captures(text)?.get(1)?.as_str().parse().ok()
}

/// `Limits exceeded. Limits: N steps, $C. Current spend: n steps, $c.` (a step limit of 0 is
/// none): the limits the run had and what it had spent, as the CLI printed them.
fn limits_printed(text: &str, cap: &mut Capture) {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"Limits: (\d+) steps, \$(\d+(?:\.\d+)?)\.?\s*Current spend: (\d+) steps, \$(\d+(?:\.\d+)?)")
            .expect("static regex")
    });
    let Some(c) = re.captures(text) else { return };
    let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<f64>().ok());
    let s = &mut cap.signals;
    (s.limits.steps, s.limits.cost_usd, s.consumed.steps, s.consumed.cost_usd) = (num(1), num(2), num(3), num(4));
    // The spend is the last cost the CLI printed.
    if s.consumed.cost_usd.is_some() {
        cap.cost_usd = s.consumed.cost_usd;
    }
}

/// Reads a capture file into [`Capture`], with the steps' spans on `file`.
///
/// # Errors
/// When the file cannot be read.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub fn read(path: &Path, display: &str, file: u32) -> Result<(Capture, crate::model::SourceFile), InputError> {
    let src = Source::read(path, display)?;
    let cleaned = clean(&src.bytes);
    let mut cap = parse(&cleaned);
    // The raw file has no offsets that match cleaned lines; each step points at the whole file.
    let whole = src.span(file, 0, src.bytes.len());
    for s in &mut cap.steps {
        s.source_span = Some(whole);
    }
    let sig = &mut cap.signals;
    for s in sig.statuses.iter_mut().chain(sig.log_lines.iter_mut()) {
        s.span = Some(whole);
    }
    Ok((cap, src.provenance("terminal_capture")))
}

/// Applies a capture to a record: steps, usage, submission, notes and signals. The agent's
/// own exit status comes before a runner's failure mode: it says how the agent's run ended,
/// where the runner's says how the trial did (a verifier that timed out after a submission).
pub fn apply(t: &mut Trajectory, cap: Capture) {
    t.steps = cap.steps;
    t.notes.extend(cap.notes);
    if t.model.is_none() {
        t.model = cap.model;
    }
    if cap.cost_usd.is_some() {
        t.usage.cost_usd = cap.cost_usd;
    }
    if cap.model_calls.is_some() {
        t.usage.api_calls = cap.model_calls;
    }
    // The submission is the caller's to keep: Terminal-Bench's tests read the container, not
    // what the agent printed when it submitted (an empty one would read as "submitted nothing").
    let mut sig = cap.signals;
    t.signals.statuses.splice(0..0, sig.statuses);
    t.signals.errors.append(&mut sig.errors);
    t.signals.log_lines.append(&mut sig.log_lines);
    t.signals.limits.fill_from(&sig.limits);
    t.signals.consumed.fill_from(&sig.consumed);
}

/// A capture on its own (a `mini ... | tee run.log`, or an `agent.log` copied out of its
/// trial): one record, task id from the file name.
pub struct TerminalCapture;

impl Adapter for TerminalCapture {
    fn name(&self) -> &'static str {
        NAME
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "terminal capture of an agent CLI (mini-swe-agent steps) outside a Terminal-Bench trial"
    }

    fn versions(&self) -> &'static str {
        "mini-swe-agent CLI 1.x–2.x"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        if p.json.is_some() {
            return Err("JSON, not a terminal capture".into());
        }
        let parents: Vec<String> = p.parents().take(2).collect();
        if parents.iter().any(|n| crate::ingest::adapters::terminal::terminal_bench::looks_like_trial_dir(n)) {
            return Err("inside a Terminal-Bench trial directory (read with its results.json)".into());
        }
        if clean(&p.prefix).lines().any(|l| step_header(l).is_some()) {
            return structure("mini-swe-agent CLI output (`mini-swe-agent (step N, $C):` headers)");
        }
        Err("no agent CLI step headers".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let (cap, file) = read(&unit.primary.path, &unit.primary.display, 0)?;
        let name = unit.primary.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let stem = name.split('.').next().unwrap_or(&name);
        let task = if stem == "agent" || stem.is_empty() {
            unit.primary
                .path
                .parent()
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .map_or_else(|| "unknown".into(), |n| n.to_string_lossy().into_owned())
        } else {
            stem.to_string()
        };
        let harness = cap.agent.unwrap_or("unknown");
        let mut t = crate::model::Trajectory::new(task, harness, NAME, 1, vec![file]);
        t.provenance.format_version = Some("terminal capture".into());
        // On its own, what mini submitted is the run's submission (`mini` on SWE-bench prints
        // its patch).
        t.submission.clone_from(&cap.submission);
        apply(&mut t, cap);
        out.emit(t);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carriage_returns_overwrite_and_escapes_vanish() {
        assert_eq!(clean(b"\x1b[0;32mgreen\x1b[0m text\r\n"), "green text\n");
        // Overwrite, not erase: what the later text does not cover stays.
        assert_eq!(clean(b"0% [Working]\r50% [Wor\r\nnext\n"), "50% [Woring]\nnext\n");
        assert_eq!(clean(b"spinner\r\x1b[2Kdone\n"), "done\n");
        assert_eq!(clean(b"\x1b]0;title\x07shown\x1b]8;;http://x\x1b\\link\n"), "shownlink\n");
        assert_eq!(clean(b"a\x00b\n"), "ab\n");
        assert_eq!(clean(b"abc\x08\x08X\n"), "aXc\n");
    }

    #[test]
    fn a_capture_cut_inside_a_sequence_loses_only_that_sequence() {
        for cut in [&b"ok\n\x1b"[..], b"ok\n\x1b[", b"ok\n\x1b[0;3", b"ok\n\x1b]0;tit", b"ok\n\x1b]0;t\x1b", b"ok\n\xe2\x94"] {
            let once = clean(cut);
            assert!(once.starts_with("ok\n"), "{cut:?} -> {once:?}");
            assert_eq!(once, clean(cut), "deterministic");
        }
    }

    #[test]
    fn mini_headers_and_invocations() {
        assert_eq!(step_header("mini-swe-agent (step 3, $0.04):"), Some((3, 0.04)));
        assert_eq!(
            mini_invocation("root@f56d:/app# mini -m anthropic/claude-sonnet-4-0 -t 'x' -y --exit-immediately; tmux wait -S done"),
            Some(Some("anthropic/claude-sonnet-4-0".into()))
        );
        assert!(mini_invocation("Setting up python3.12-minimal (3.12.3)").is_none());
    }

    #[test]
    fn the_limit_prompt_is_the_tail_with_its_amounts() {
        let cap = parse(
            "root@h:/app# mini -m m -t 'x' -y\nmini-swe-agent (step 1, $1.20):\nTHOUGHT: t\n```bash\nls\n```\nUser:\n<returncode>0</returncode>\n<output>\na\n</output>\nLimits exceeded. Limits: 0 steps, $3.0.\nCurrent spend: 41 steps, $3.02.\nNew step limit:\n",
        );
        let lines: Vec<&str> = cap.signals.log_lines.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(lines, ["Limits exceeded. Limits: 0 steps, $3.0.", "Current spend: 41 steps, $3.02.", "New step limit:"]);
        assert!(cap.signals.log_lines.iter().all(|s| s.field == TAIL));
        assert_eq!((cap.signals.limits.steps, cap.signals.limits.cost_usd), (Some(0.0), Some(3.0)));
        assert_eq!((cap.signals.consumed.steps, cap.signals.consumed.cost_usd), (Some(41.0), Some(3.02)));
        assert_eq!(cap.cost_usd, Some(3.02));
        // The prompt is not part of the observation.
        assert!(!cap.steps[1].tool_results[0].output.contains("Limits"));
    }

    #[test]
    fn a_crash_after_the_last_step_is_the_tail() {
        let cap = parse(
            "mini-swe-agent (step 1, $0.01):\nTHOUGHT: t\n```bash\nls\n```\nUser:\n<returncode>0</returncode>\n<output>\nTraceback (most recent call last): in the output\n</output>\nTraceback (most recent call last):\nlitellm.ContextWindowExceededError: too long\n",
        );
        let lines: Vec<&str> = cap.signals.log_lines.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(lines, ["Traceback (most recent call last):", "litellm.ContextWindowExceededError: too long"]);
        assert!(cap.steps[1].tool_results[0].output.ends_with("</output>"));
    }

    #[test]
    fn a_shell_message_loses_the_shells_name() {
        assert_eq!(shell_message("bash: mini: command not found"), "mini: command not found");
        assert_eq!(shell_message("/bin/sh: 1: mini: not found"), "mini: not found");
        assert_eq!(shell_message("mini: command not found"), "mini: command not found");
        assert_eq!(shell_message("bashful: x"), "bashful: x");
    }
}
