//! v1 (`mini-swe-agent-1`): hand-formatted chat messages. The action is the one block the run's
//! `action_regex` finds in the reply; the next user message is its observation (the
//! `<returncode>` template), the run's timeout template, or its format-error template. The
//! templates are the run's own (from its config, or mini-swe-agent 1.x's defaults when the
//! config lacks them), so recognizing their messages is reading the format, not judging text.

use std::ops::Range;

use super::raw::{RawAgentConfig, RawModelConfig, RawMsg, response_of};
use super::steps::{Builder, Pending, PendingCall, bash_call, submits};
use crate::ingest::adapters::shared::common::content_text;
use crate::model::{Role, ToolResult};

/// v1's default `action_regex` (Python `re.DOTALL`).
const DEFAULT_ACTION_REGEX: &str = r"(?s)```bash\s*\n(.*?)\n```";

/// v1's default `format_error_template` and `timeout_template`, up to their first tag.
const DEFAULT_FORMAT_ERROR_TEMPLATE: &str =
    "Please always provide EXACTLY ONE action in triple backticks, found {{actions|length}} actions.";
const DEFAULT_TIMEOUT_TEMPLATE: &str = "The last command <command>{{action['action']}}</command> timed out and has been killed.";

/// A compiled action regex. Every file of a batch run carries the same one in its config, so
/// each distinct pattern is compiled once per process (compiling it per file cost more than
/// parsing a small trajectory).
fn action_regex(pattern: &str) -> Result<regex::Regex, regex::Error> {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, regex::Regex>>> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(r) = cache.lock().ok().and_then(|c| c.get(pattern).cloned()) {
        return Ok(r);
    }
    let r = regex::Regex::new(pattern)?;
    if let Ok(mut c) = cache.lock() {
        // Bounded: a corpus with ever-new patterns must not grow the cache without end.
        if c.len() >= 256 {
            c.clear();
        }
        c.insert(pattern.to_string(), r.clone());
    }
    Ok(r)
}

/// The blocks `DEFAULT_ACTION_REGEX` captures in `text`, in order, found with two literal
/// searches instead of the regex's capture engine, which was a tenth of classify's time on a real
/// run of 500 trajectories (every run carries this pattern). The test
/// `default_blocks_are_the_regex_captures` holds it to the regex on generated texts.
fn default_blocks(text: &str) -> Vec<&str> {
    const OPEN: &str = "```bash";
    const CLOSE: &str = "\n```";
    let open = memchr::memmem::Finder::new(OPEN);
    let close = memchr::memmem::Finder::new(CLOSE);
    let bytes = text.as_bytes();
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some(i) = open.find(&bytes[from..]) {
        let s = from + i;
        let after = s + OPEN.len();
        // `\s*\n`: the greedy run of whitespace after the fence gives back up to a newline.
        let run = text[after..].char_indices().find(|(_, c)| !c.is_whitespace()).map_or(text.len() - after, |(k, _)| k);
        let newlines: Vec<usize> = memchr::memchr_iter(b'\n', &bytes[after..after + run]).map(|k| after + k).collect();
        if let Some(&last) = newlines.last() {
            // `(.*?)\n```: the first closing fence after the last newline of the run...
            if let Some(q) = close.find(&bytes[last + 1..]) {
                let q = last + 1 + q;
                blocks.push(&text[last + 1..q]);
                from = q + CLOSE.len();
                continue;
            }
            // ...or, when there is none, the last newline closes the fence itself after an
            // earlier newline of the run (an empty block).
            if bytes[last..].starts_with(CLOSE.as_bytes())
                && let [.., p, _] = newlines.as_slice()
            {
                blocks.push(&text[p + 1..last]);
                from = last + CLOSE.len();
                continue;
            }
        }
        from = s + 1;
    }
    blocks
}

/// How a run's replies name their action: the default block, or the run's own regex.
enum ActionFinder {
    Default,
    Regex(regex::Regex),
}

impl ActionFinder {
    fn actions(&self, text: &str) -> Vec<String> {
        match self {
            Self::Default => default_blocks(text).into_iter().map(|a| a.trim().to_string()).collect(),
            Self::Regex(re) => re.captures_iter(text).filter_map(|c| c.get(1)).map(|a| a.as_str().trim().to_string()).collect(),
        }
    }
}

/// What the v1 harness's templates look like in this run, for recognizing its messages.
pub(super) struct Templates {
    action_re: ActionFinder,
    format_prefix: Option<String>,
    timeout_prefix: Option<String>,
}

impl Templates {
    pub fn new(agent: &RawAgentConfig, model: Option<&RawModelConfig>, v2: bool, notes: &mut Vec<String>) -> Self {
        let configured = agent.action_regex.clone().or_else(|| model.and_then(|m| m.action_regex.clone()));
        let action_re = match configured.filter(|_| !v2).map(|r| (format!("(?s){r}"), r)) {
            Some((pattern, _)) if pattern == DEFAULT_ACTION_REGEX => ActionFinder::Default,
            Some((pattern, r)) => action_regex(&pattern).map(ActionFinder::Regex).unwrap_or_else(|_| {
                notes.push(format!("the configured action_regex {r:?} is not supported here; the default ```bash block was used"));
                ActionFinder::Default
            }),
            None => ActionFinder::Default,
        };
        let fmt = agent.format_error_template.as_deref().or_else(|| model.and_then(|m| m.format_error_template.as_deref()));
        Self {
            action_re,
            format_prefix: static_prefix(fmt.unwrap_or(DEFAULT_FORMAT_ERROR_TEMPLATE)),
            timeout_prefix: static_prefix(agent.timeout_template.as_deref().unwrap_or(DEFAULT_TIMEOUT_TEMPLATE)),
        }
    }

    fn is_timeout(&self, text: &str) -> bool {
        self.timeout_prefix.as_deref().is_some_and(|p| text.trim_start().starts_with(p))
    }

    /// The harness's format complaint: its template's literal start.
    fn is_format_complaint(&self, text: &str) -> bool {
        self.format_prefix.as_deref().is_some_and(|p| text.trim_start().starts_with(p))
    }
}

/// The literal start of a Jinja template, up to its first tag; `None` when too short to tell
/// the template's messages from anything else.
fn static_prefix(template: &str) -> Option<String> {
    let end = [template.find("{{"), template.find("{%")].into_iter().flatten().min().unwrap_or(template.len());
    let p = template[..end].trim();
    (p.len() >= 12).then(|| p.to_string())
}

/// The exit code an observation reports: `<returncode>N</returncode>` (the default templates)
/// or the raw dict of the bare `Observation: {{output}}` template.
fn returncode(text: &str) -> Option<i64> {
    // The harness's own template opens every observation with the tag: read it without a
    // regex (the search below costs a microsecond per observation, most of it setting up).
    if let Some(rest) = text.trim_start().strip_prefix("<returncode>")
        && let Some((code, _)) = rest.split_once("</returncode>")
        && let code = code.trim()
        && code.strip_prefix('-').unwrap_or(code).bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = code.parse::<i64>()
    {
        return Some(n);
    }
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#"<returncode>\s*(-?\d+)\s*</returncode>|['"]returncode['"]\s*:\s*(-?\d+)"#).expect("static regex")
    });
    let c = re.captures(text)?;
    c.get(1).or_else(|| c.get(2))?.as_str().parse().ok()
}

impl Builder<'_> {
    pub(super) fn v1_message(&mut self, at: &Range<usize>, m: &RawMsg<'_>) {
        let text = content_text(&m.content);
        match m.role.as_deref().unwrap_or("") {
            "system" => {
                self.push_text(at, Role::System, text, m);
            }
            "assistant" => {
                let response = response_of(m.extra.as_ref());
                let mut step = Self::assistant(m, text.clone(), response);
                let actions = self.tpl.action_re.actions(&text);
                self.seen_assistant = true;
                self.unparsed = None;
                self.pending = None;
                if let [command] = actions.as_slice() {
                    step.tool_calls.push(bash_call(None, command));
                    let ix = self.push(at, step);
                    self.pending = Some(Pending {
                        step: ix,
                        calls: vec![PendingCall { call: 0, id: None, command: command.clone(), answered: false }],
                    });
                } else {
                    let ix = self.push(at, step);
                    self.unparsed = Some(ix);
                }
            }
            _ => self.v1_user(at, m, text),
        }
    }

    fn v1_user(&mut self, at: &Range<usize>, m: &RawMsg<'_>, text: String) {
        if !self.seen_assistant {
            self.push_text(at, Role::User, text, m);
            return;
        }
        if let Some(mut p) = self.pending.take() {
            let command = p.calls[0].command.clone();
            if self.tpl.is_timeout(&text) {
                let mut r = Self::result_for(&mut p, 0, text);
                r.is_error = true;
                let step = self.steps.len();
                self.note_command("timed out", step, &command);
                self.push_result(at, r, None);
            } else if let Some(code) = returncode(&text) {
                let mut r = Self::result_for(&mut p, 0, text);
                r.exit_code = Some(code);
                r.is_error = code != 0;
                self.push_result(at, r, None);
            } else if self.tpl.is_format_complaint(&text) {
                // The harness did not take the reply as an action after all.
                if let Some(s) = self.steps.steps.get_mut(p.step) {
                    s.tool_calls.clear();
                }
                self.mark_format_error(p.step, &text);
                self.push_text(at, Role::Environment, text, m);
            } else {
                if submits(&command) {
                    self.submitted = Some(text.clone());
                }
                let r = Self::result_for(&mut p, 0, text);
                self.push_result(at, r, None);
            }
            return;
        }
        if let Some(ix) = self.unparsed.take() {
            if let Some(code) = returncode(&text) {
                // The harness ran an action this run's action_regex did not find.
                self.steps.note(format!("the action of step {ix} was not found in its text; its observation is kept unpaired"));
                let mut r = ToolResult::new(text);
                r.exit_code = Some(code);
                r.is_error = code != 0;
                self.push_result(at, r, None);
                return;
            }
            self.mark_format_error(ix, &text);
        }
        self.push_text(at, Role::Environment, text, m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_prefixes_stop_at_the_first_tag() {
        assert_eq!(
            static_prefix("Please always provide EXACTLY ONE action in triple backticks, found {{actions|length}} actions.").as_deref(),
            Some("Please always provide EXACTLY ONE action in triple backticks, found")
        );
        assert_eq!(static_prefix(DEFAULT_TIMEOUT_TEMPLATE).as_deref(), Some("The last command <command>"));
        assert_eq!(static_prefix("{{ error }}"), None);
    }

    #[test]
    fn default_blocks_are_the_regex_captures() {
        use rand::{Rng, SeedableRng};
        let re = regex::Regex::new(DEFAULT_ACTION_REGEX).expect("static regex");
        let by_regex = |t: &str| re.captures_iter(t).filter_map(|c| c.get(1)).map(|m| m.as_str().to_string()).collect::<Vec<_>>();
        // Pieces that make fences, whitespace runs (ASCII and Unicode, U+180E no longer being
        // whitespace) and near-misses meet in every order.
        let pieces = ["```bash", "```", "\n", " ", "\t", "\r", "\u{a0}", "\u{2028}", "\u{85}", "\u{180e}", "x", "`", "bash", "é", "\n```"];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..50_000 {
            let n = rng.random_range(0..14);
            let text: String = (0..n).map(|_| pieces[rng.random_range(0..pieces.len())]).collect();
            assert_eq!(default_blocks(&text), by_regex(&text), "{text:?}");
        }
        let reply = "THOUGHT: look\n\n```bash\nls -la\n```\nthen ```bash \n\n\necho hi\n```";
        assert_eq!(default_blocks(reply), ["ls -la", "echo hi"]);
        assert_eq!(default_blocks("```bash\n\n```"), [""]);
    }

    #[test]
    fn return_codes_from_both_observation_templates() {
        assert_eq!(returncode("<returncode>2</returncode>\n<output>\nx</output>"), Some(2));
        assert_eq!(returncode("Observation: {'output': 'x', 'returncode': -1}"), Some(-1));
        assert_eq!(returncode("no code here"), None);
        assert_eq!(returncode("  <returncode> -9 </returncode>"), Some(-9), "the tag read without the regex");
        assert_eq!(
            returncode("<returncode>x</returncode> then 'returncode': 3"),
            Some(3),
            "a tag that holds no number falls to the search"
        );
        assert_eq!(returncode("<returncode>+5</returncode>"), None, "only what the search would read");
    }
}
