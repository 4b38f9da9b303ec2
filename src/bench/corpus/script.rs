//! One generated run in a harness-neutral form: the task, the agent's turns (shell actions
//! with their output, calls to tools that do not exist, replies with no action, the finish),
//! how it ended and what the verifier said. Each format module renders a [`Script`] in its
//! own file layout, so every failure class reads the same in every format.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::text::{self, REPOS, Repo};

/// What the generated run is, by construction; the class coroner should give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scenario {
    /// Explores, edits, runs the tests, submits; the verifier passes it.
    Passing,
    /// The same mechanics; the verifier fails it.
    WorkedThenWrong,
    /// Runs into the step limit.
    Budget,
    /// Calls a tool the harness does not offer, which the harness rejects.
    HallucinatedTool,
    /// Describes the change in prose and a diff, never makes it.
    PlanOnly,
    /// Explores, then gives up in words and submits nothing.
    Resignation,
    /// The environment or the API fails under it.
    Infrastructure,
}

impl Scenario {
    pub const ALL: [Self; 7] = [
        Self::Passing,
        Self::WorkedThenWrong,
        Self::Budget,
        Self::HallucinatedTool,
        Self::PlanOnly,
        Self::Resignation,
        Self::Infrastructure,
    ];

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Passing => "passing",
            Self::WorkedThenWrong => "worked_then_wrong",
            Self::Budget => "budget_exhausted",
            Self::HallucinatedTool => "hallucinated_tool",
            Self::PlanOnly => "plan_without_execution",
            Self::Resignation => "early_resignation",
            Self::Infrastructure => "infrastructure",
        }
    }

    /// The primary class `coroner classify` should give (`None`: passed, no class).
    #[must_use]
    pub fn expected_class(self) -> Option<&'static str> {
        match self {
            Self::Passing => None,
            other => Some(other.name()),
        }
    }

    /// Relative frequency in a generated corpus: worked-then-wrong dominates failures, as it
    /// does in published studies; every class is present.
    fn weight(self) -> u32 {
        match self {
            Self::Passing => 25,
            Self::WorkedThenWrong => 30,
            Self::Budget => 13,
            Self::HallucinatedTool | Self::PlanOnly | Self::Resignation | Self::Infrastructure => 8,
        }
    }
}

/// One agent turn.
#[derive(Debug, Clone)]
pub struct Turn {
    /// What the agent says before acting (the whole reply for [`Act::NoAction`]).
    pub thought: String,
    pub act: Act,
    /// Seconds from the previous turn's end to this turn's result.
    pub secs: f64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, Clone)]
pub enum Act {
    /// A shell command, its combined output and exit code.
    Shell { cmd: String, output: String, code: i32 },
    /// A tool the harness does not offer, with arguments; the harness rejects it.
    Unknown { tool: &'static str, args: serde_json::Value },
    /// No action at all: the harness complains that the reply did not parse.
    NoAction,
    /// The finish protocol; `output` is what the finish returns (the patch).
    Submit { output: String },
}

/// How the run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    Submitted,
    /// The step limit was reached (`turns.len() == step_limit`).
    StepLimit,
    /// An exception outside the agent: its class name and message.
    Infra {
        kind: &'static str,
        message: String,
    },
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct Script {
    pub scenario: Scenario,
    /// The instance id (`django__django-13042`).
    pub task: String,
    pub repo: &'static Repo,
    pub issue: String,
    pub model: &'static str,
    pub turns: Vec<Turn>,
    pub end: End,
    /// The verifier's verdict (`None`: no verdict, the run errored before it).
    pub passed: Option<bool>,
    /// The submitted patch (empty: nothing submitted).
    pub patch: String,
    pub step_limit: u32,
    /// Unix seconds of the first message.
    pub start: f64,
    pub cost_per_turn: f64,
}

impl Script {
    /// Seconds from start to the end of the last turn.
    #[must_use]
    pub fn duration(&self) -> f64 {
        self.turns.iter().map(|t| t.secs).sum()
    }

    #[must_use]
    pub fn cost(&self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "a few hundred turns")]
        let n = self.turns.len() as f64;
        (n * self.cost_per_turn * 1e6).round() / 1e6
    }
}

const MODELS: &[&str] =
    &["anthropic/claude-sonnet-4-5-20250929", "openai/gpt-5-mini", "openai/gpt-4.1", "google/gemini-2.5-pro", "deepseek/deepseek-chat"];

/// Tool names models invent; none is offered by the harnesses generated here.
pub const HALLUCINATED: &[&str] = &["str_replace_editor", "search_files", "open_file", "run_python", "find_file", "edit_file_lines"];

/// Picks the scenario of trajectory `i`: the first ones cycle through every supported class so
/// even a tiny corpus has each, the rest follow the weights.
pub fn choose_scenario(rng: &mut ChaCha8Rng, i: usize, supported: &[Scenario]) -> Scenario {
    if i < supported.len() {
        return supported[i];
    }
    let total: u32 = supported.iter().map(|s| s.weight()).sum();
    let mut r = rng.random_range(0..total);
    for s in supported {
        if r < s.weight() {
            return *s;
        }
        r -= s.weight();
    }
    supported[0]
}

/// Turns in an ordinary run: most runs are short, a few long.
fn run_length(rng: &mut ChaCha8Rng) -> usize {
    let r: f64 = rng.random();
    if r < 0.6 {
        rng.random_range(3..25)
    } else if r < 0.9 {
        rng.random_range(25..80)
    } else {
        rng.random_range(80..149)
    }
}

struct Builder<'r> {
    rng: &'r mut ChaCha8Rng,
    repo: &'static Repo,
    turns: Vec<Turn>,
    tokens: u64,
}

impl Builder<'_> {
    fn push(&mut self, thought: String, act: Act) {
        let secs = (self.rng.random_range(1.0..40.0f64) * 10.0).round() / 10.0;
        self.tokens += self.rng.random_range(200..3_000);
        let completion = self.rng.random_range(20..600);
        self.turns.push(Turn { thought, act, secs, prompt_tokens: self.tokens, completion_tokens: completion });
    }

    fn file(&mut self) -> &'static str {
        text::pick(self.rng, self.repo.modules)
    }

    /// A command that reads: ls, grep, sed -n, cat, find.
    fn explore(&mut self) {
        let f = self.file();
        let size = text::output_size(self.rng);
        let (cmd, output) = match self.rng.random_range(0..5) {
            0 => ("ls -la".to_string(), text::listing(self.rng, self.repo)),
            1 => {
                let w = text::pick(self.rng, &["_combine", "def clean", "timeout", "class Resolver", "negat"]);
                (format!("grep -rn '{w}' {} | head -200", self.repo.package), text::grep_hits(self.rng, self.repo, size))
            }
            2 => {
                let a = self.rng.random_range(1..800u32);
                (format!("sed -n '{a},{}p' {f}", a + 80), text::source(self.rng, size.min(8_000)))
            }
            3 => (format!("cat {f}"), text::source(self.rng, size)),
            _ => (
                format!("find . -name '*.py' -path '*{}*' | head -100", self.repo.package),
                text::grep_hits(self.rng, self.repo, size.min(4_000)),
            ),
        };
        let thought = text::explore_thought(self.rng, f);
        self.push(thought, Act::Shell { cmd, output, code: 0 });
    }

    /// A command that changes a source file (or, with `tests`, a test file).
    fn edit(&mut self, tests: bool) -> &'static str {
        let f = if tests { text::pick(self.rng, self.repo.tests) } else { self.file() };
        let cmd = if self.rng.random_bool(0.6) {
            format!("sed -i 's/return copy.deepcopy(self)/return self._negated_copy()/' {f}")
        } else {
            format!("cat > {f}.new <<'EOF'\n{}EOF\nmv {f}.new {f}", text::source(self.rng, 600))
        };
        let thought = text::edit_thought(self.rng, f);
        self.push(thought, Act::Shell { cmd, output: String::new(), code: 0 });
        f
    }

    fn test(&mut self, pass: bool) {
        let t = text::pick(self.rng, self.repo.tests);
        let failed = if pass { 0 } else { self.rng.random_range(1..4) };
        let size = text::output_size(self.rng);
        let output = text::pytest(self.rng, self.repo, failed, size);
        let thought = text::test_thought(self.rng);
        self.push(thought, Act::Shell { cmd: format!("python -m pytest {t} -q"), output, code: i32::from(!pass) });
    }

    fn unknown(&mut self) {
        let tool = text::pick(self.rng, HALLUCINATED);
        let f = self.file();
        let args = serde_json::json!({ "path": f, "query": "_combine" });
        self.push(format!("Using {tool} to look at {f}."), Act::Unknown { tool, args });
    }

    fn submit(&mut self, thought: String, patch: &str) {
        self.push(thought, Act::Submit { output: patch.to_string() });
    }
}

/// Builds run `i` of a corpus as `scenario`; `fixed_limit` is the step limit of harnesses
/// whose runs all share one (`--max-turns`), else each budget run draws its own.
pub fn build(rng: &mut ChaCha8Rng, i: usize, scenario: Scenario, fixed_limit: Option<u32>) -> Script {
    let repo = text::pick_ref(rng, REPOS);
    let task = format!("{}-{}", repo.prefix, 10_000 + i);
    let issue = text::issue(rng, repo);
    let model = text::pick(rng, MODELS);
    let start = 1_737_000_000.0 + (rng.random_range(0..5_000_000u32)) as f64;
    let cost_per_turn = rng.random_range(0.0005..0.015);
    let step_limit = match (scenario, fixed_limit) {
        (_, Some(l)) => l,
        (Scenario::Budget, None) => rng.random_range(20..150),
        _ => 250,
    };
    let mut b = Builder { rng, repo, turns: Vec::new(), tokens: 1_200 };
    // Runs that end on their own stay clear of the step limit.
    let n = run_length(b.rng).min(step_limit as usize - 6);
    let mut patch = String::new();
    let mut end = End::Submitted;
    let mut passed = Some(false);
    match scenario {
        Scenario::Passing | Scenario::WorkedThenWrong => {
            let explore = n.saturating_sub(3).max(1);
            for _ in 0..explore / 2 {
                b.explore();
            }
            // Some runs iterate: a failing check, another edit.
            let f = b.edit(false);
            if b.rng.random_bool(0.4) {
                b.test(false);
                b.edit(false);
            }
            for _ in explore / 2..explore {
                b.explore();
            }
            if scenario == Scenario::WorkedThenWrong && b.rng.random_bool(0.15) {
                b.edit(true);
            }
            let own_check_passes = scenario == Scenario::Passing || b.rng.random_bool(0.7);
            b.test(own_check_passes);
            patch = text::diff(b.rng, f);
            let thought = text::claim_done(b.rng);
            b.submit(thought, &patch);
            passed = Some(scenario == Scenario::Passing);
        }
        Scenario::Budget => {
            while b.turns.len() < step_limit as usize {
                match b.rng.random_range(0..6) {
                    0 => {
                        b.edit(false);
                    }
                    1 => b.test(false),
                    _ => b.explore(),
                }
            }
            end = End::StepLimit;
        }
        Scenario::HallucinatedTool => {
            for _ in 0..n / 2 {
                b.explore();
            }
            for _ in 0..b.rng.random_range(1..4) {
                b.unknown();
            }
            for _ in 0..n / 3 {
                b.explore();
            }
            let f = b.edit(false);
            b.test(false);
            patch = text::diff(b.rng, f);
            let thought = text::claim_done(b.rng);
            b.submit(thought, &patch);
        }
        Scenario::PlanOnly => {
            for _ in 0..n.min(20) {
                b.explore();
            }
            // At most two unparsed replies in a row: a third would trip mini-swe-agent 2's
            // format-error limit and make this a budget run.
            for _ in 0..b.rng.random_range(1..3) {
                let f = b.file();
                let reply = text::plan_reply(b.rng, f);
                b.push(reply, Act::NoAction);
            }
            b.submit("Submitting.".into(), "");
        }
        Scenario::Resignation => {
            for _ in 0..n.min(30) {
                b.explore();
            }
            let thought = text::give_up(b.rng);
            b.submit(thought, "");
        }
        Scenario::Infrastructure => {
            for _ in 0..n.min(10) {
                b.explore();
            }
            end = if b.rng.random_bool(0.5) {
                End::Infra {
                    kind: "RetryError",
                    message: "RetryError[<Future at 0x7f3c2a1b9d90 state=finished raised RateLimitError>]".into(),
                }
            } else {
                End::Infra {
                    kind: "RuntimeError",
                    message: format!(
                        "Docker container {} is not running (exit code 137); the environment cannot execute commands",
                        text::alnum(b.rng, 12)
                    ),
                }
            };
            passed = None;
        }
    }
    let turns = b.turns;
    Script { scenario, task, repo, issue, model, turns, end, passed, patch, step_limit, start, cost_per_turn }
}
