//! Text that looks like what agents read and write: source files, grep hits, directory
//! listings, test runs, diffs, tracebacks, and the agent's own short remarks.
//!
//! Lines come from small pools recombined by the seeded generator, so a 100 KB tool output
//! costs microseconds and the same seed gives the same bytes. The wording avoids the phrases
//! the classifier keys on (plans, give-ups, completion claims, API errors) except where a
//! scenario puts them on purpose.

use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

/// A repository the tasks are drawn from: its SWE-bench-style prefix, a package and files.
#[derive(Debug)]
pub struct Repo {
    pub prefix: &'static str,
    pub slug: &'static str,
    pub package: &'static str,
    pub modules: &'static [&'static str],
    pub tests: &'static [&'static str],
}

pub const REPOS: &[Repo] = &[
    Repo {
        prefix: "django__django",
        slug: "django/django",
        package: "django",
        modules: &[
            "django/db/models/query.py",
            "django/db/models/sql/compiler.py",
            "django/forms/fields.py",
            "django/utils/http.py",
            "django/core/validators.py",
        ],
        tests: &[
            "tests/queries/test_qs_combinators.py",
            "tests/forms_tests/field_tests/test_charfield.py",
            "tests/utils_tests/test_http.py",
        ],
    },
    Repo {
        prefix: "sympy__sympy",
        slug: "sympy/sympy",
        package: "sympy",
        modules: &["sympy/core/expr.py", "sympy/simplify/simplify.py", "sympy/printing/latex.py", "sympy/matrices/dense.py"],
        tests: &["sympy/core/tests/test_expr.py", "sympy/printing/tests/test_latex.py", "sympy/matrices/tests/test_matrices.py"],
    },
    Repo {
        prefix: "astropy__astropy",
        slug: "astropy/astropy",
        package: "astropy",
        modules: &["astropy/io/fits/card.py", "astropy/units/quantity.py", "astropy/table/table.py"],
        tests: &["astropy/io/fits/tests/test_header.py", "astropy/units/tests/test_quantity.py"],
    },
    Repo {
        prefix: "pytest-dev__pytest",
        slug: "pytest-dev/pytest",
        package: "_pytest",
        modules: &["src/_pytest/python_api.py", "src/_pytest/assertion/rewrite.py", "src/_pytest/fixtures.py"],
        tests: &["testing/test_assertrewrite.py", "testing/python/approx.py"],
    },
    Repo {
        prefix: "psf__requests",
        slug: "psf/requests",
        package: "requests",
        modules: &["requests/sessions.py", "requests/models.py", "requests/utils.py", "requests/adapters.py"],
        tests: &["tests/test_requests.py", "tests/test_utils.py"],
    },
    Repo {
        prefix: "scikit-learn__scikit-learn",
        slug: "scikit-learn/scikit-learn",
        package: "sklearn",
        modules: &["sklearn/linear_model/_logistic.py", "sklearn/utils/validation.py", "sklearn/preprocessing/_encoders.py"],
        tests: &["sklearn/utils/tests/test_validation.py", "sklearn/preprocessing/tests/test_encoders.py"],
    },
];

const CODE: &[&str] = &[
    "    def __init__(self, *args, **kwargs):",
    "        super().__init__(*args, **kwargs)",
    "        self._cache = {}",
    "    @property",
    "    def name(self):",
    "        return self._name",
    "        if value is None:",
    "            return None",
    "        elif isinstance(value, (list, tuple)):",
    "            return [self.clean(v) for v in value]",
    "        raise ValueError(\"invalid value: %r\" % (value,))",
    "    def _combine(self, other, conn):",
    "        if not other:",
    "            return copy.deepcopy(self)",
    "        obj = type(self)()",
    "        obj.connector = conn",
    "        obj.add(self, conn)",
    "        return obj",
    "def _parse_header(line, sep=\"=\"):",
    "    key, _, val = line.partition(sep)",
    "    return key.strip().lower(), val.strip()",
    "class Resolver:",
    "    \"\"\"Resolve names against the registry, caching the last lookup.\"\"\"",
    "    _registry = {}",
    "    for i, item in enumerate(items):",
    "        total += item.weight * factors[i]",
    "    return total / max(len(items), 1)",
    "import os",
    "import re",
    "from collections import OrderedDict",
    "from functools import lru_cache",
    "from .utils import to_native_string, quote, unquote",
    "",
    "    # Keep the original order: callers rely on it (see #2317).",
    "    kwargs.setdefault(\"timeout\", self.timeout)",
    "    with open(path, encoding=\"utf-8\") as fh:",
    "        data = fh.read()",
    "    return {k: v for k, v in sorted(mapping.items()) if v is not None}",
    "    logger.debug(\"retrying %s (attempt %d)\", url, attempt)",
    "    if len(nc_part) == 1 and isinstance(nc_part[0], TensorProduct):",
    "        msg = f\"expected {expected!r}, got {got!r} — check the units\"",
    "        return Quantity(value * self.scale, unit=self.unit)",
];

const LS: &[&str] = &[
    "README.rst",
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "tox.ini",
    "LICENSE",
    "AUTHORS",
    "docs",
    "tests",
    "scripts",
    "CHANGES.rst",
    "MANIFEST.in",
    ".github",
    ".gitignore",
    "conftest.py",
    "requirements.txt",
    "Makefile",
    "examples",
    "benchmarks",
    "extern",
];

const WORDS: &[&str] = &[
    "value",
    "parser",
    "header",
    "query",
    "session",
    "timeout",
    "redirect",
    "cache",
    "field",
    "matrix",
    "unit",
    "expression",
    "printer",
    "encoder",
    "validator",
    "combine",
    "negation",
    "card",
    "table",
    "fixture",
    "approx",
    "tolerance",
    "column",
    "index",
    "keyword",
];

/// Picks one of `xs`.
pub fn pick<T: Copy>(rng: &mut ChaCha8Rng, xs: &[T]) -> T {
    *xs.choose(rng).unwrap_or(&xs[0])
}

/// Picks one of `xs` by reference.
pub fn pick_ref<'a, T>(rng: &mut ChaCha8Rng, xs: &'a [T]) -> &'a T {
    xs.choose(rng).unwrap_or(&xs[0])
}

/// How long one tool output is: mostly short, a quarter a few KB, a few up to 100 KB (the
/// whole file read, the full test log).
pub fn output_size(rng: &mut ChaCha8Rng) -> usize {
    let r: f64 = rng.random();
    if r < 0.70 {
        rng.random_range(40..2_000)
    } else if r < 0.95 {
        rng.random_range(2_000..20_000)
    } else {
        rng.random_range(20_000..=100_000)
    }
}

/// Lines of `pool` (numbered like `nl -ba` when `numbered`) until about `bytes` long.
fn lines_until(rng: &mut ChaCha8Rng, pool: &[&str], bytes: usize, numbered: bool) -> String {
    let mut s = String::with_capacity(bytes + 128);
    let mut n = rng.random_range(1..400u32);
    while s.len() < bytes {
        if numbered {
            s.push_str(&format!("{n:>6}\t"));
        }
        s.push_str(pick(rng, pool));
        s.push('\n');
        n += 1;
    }
    s
}

/// A source file, or part of one.
pub fn source(rng: &mut ChaCha8Rng, bytes: usize) -> String {
    let numbered = rng.random_bool(0.4);
    lines_until(rng, CODE, bytes, numbered)
}

/// `grep -rn` hits.
pub fn grep_hits(rng: &mut ChaCha8Rng, repo: &Repo, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 128);
    while s.len() < bytes {
        let f = pick(rng, repo.modules);
        let line = rng.random_range(1..2000u32);
        s.push_str(&format!("{f}:{line}:{}\n", pick(rng, CODE).trim_start()));
    }
    s
}

/// A directory listing.
pub fn listing(rng: &mut ChaCha8Rng, repo: &Repo) -> String {
    let mut names: Vec<&str> = LS.iter().copied().filter(|_| rng.random_bool(0.6)).collect();
    names.push(repo.package);
    names.sort_unstable();
    names.join("\n") + "\n"
}

/// A pytest run; `failed` tests fail.
pub fn pytest(rng: &mut ChaCha8Rng, repo: &Repo, failed: u32, bytes: usize) -> String {
    let passed = rng.random_range(3..60u32);
    let test = pick(rng, repo.tests);
    let mut s = String::from("============================= test session starts ==============================\n");
    s.push_str("platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0\nrootdir: /testbed\n");
    s.push_str(&format!("collected {} items\n\n", passed + failed));
    let dots: String = (0..passed).map(|_| '.').chain((0..failed).map(|_| 'F')).collect();
    s.push_str(&format!("{test} {dots}\n"));
    if failed > 0 {
        s.push_str("\n=================================== FAILURES ===================================\n");
        while s.len() < bytes {
            let w = pick(rng, WORDS);
            s.push_str(&format!("___________________________ test_{w}_roundtrip ___________________________\n\n"));
            s.push_str(&format!("    def test_{w}_roundtrip():\n>       assert parse({w:?}) == expected\nE       AssertionError: assert None == '{w}'\n\n{test}:{}: AssertionError\n", rng.random_range(10..900u32)));
        }
        s.push_str(&format!("=========================== short test summary info ============================\nFAILED {test}::test_roundtrip - AssertionError\n"));
        s.push_str(&format!(
            "========================= {failed} failed, {passed} passed in {:.2}s =========================\n",
            rng.random_range(0.1..30.0f64)
        ));
    } else {
        s.push_str(&format!(
            "\n============================== {passed} passed in {:.2}s ==============================\n",
            rng.random_range(0.1..30.0f64)
        ));
    }
    s
}

/// A unified diff of `file`.
pub fn diff(rng: &mut ChaCha8Rng, file: &str) -> String {
    let at = rng.random_range(10..900u32);
    let mut s = format!("diff --git a/{file} b/{file}\nindex 3f2a9c1..b40ad80 100644\n--- a/{file}\n+++ b/{file}\n@@ -{at},7 +{at},8 @@\n");
    for _ in 0..3 {
        s.push_str(&format!(" {}\n", pick(rng, CODE)));
    }
    s.push_str(&format!("-{}\n+{}\n+{}\n", pick(rng, CODE), pick(rng, CODE), pick(rng, CODE)));
    for _ in 0..3 {
        s.push_str(&format!(" {}\n", pick(rng, CODE)));
    }
    s
}

/// A Python traceback ending in `last`.
pub fn traceback(rng: &mut ChaCha8Rng, repo: &Repo, last: &str) -> String {
    let mut s = String::from("Traceback (most recent call last):\n");
    for _ in 0..rng.random_range(2..6) {
        let f = pick(rng, repo.modules);
        s.push_str(&format!(
            "  File \"/testbed/{f}\", line {}, in {}\n    {}\n",
            rng.random_range(1..2000u32),
            pick(rng, WORDS),
            pick(rng, CODE).trim()
        ));
    }
    s.push_str(last);
    s.push('\n');
    s
}

/// The issue text the agent is given.
pub fn issue(rng: &mut ChaCha8Rng, repo: &Repo) -> String {
    let w = pick(rng, WORDS);
    let f = pick(rng, repo.modules);
    let mut s = format!(
        "`{w}` is dropped when combined with an empty {} in `{f}`.\n\nDescription\n\nWhen the {w} is empty the result silently loses the negation. Minimal example:\n\n",
        pick(rng, WORDS)
    );
    for _ in 0..rng.random_range(3..12) {
        s.push_str(&format!("    {}\n", pick(rng, CODE).trim()));
    }
    s.push_str("\nExpected the same result as in 4.1; got an empty set instead.\n");
    s
}

/// A short remark before an exploring command.
pub fn explore_thought(rng: &mut ChaCha8Rng, file: &str) -> String {
    const T: &[&str] = &[
        "Let me look at how {f} handles this case.",
        "Checking where the {w} is built in {f}.",
        "Reading the relevant part of {f}.",
        "Searching for the callers of the {w} helper.",
        "Listing the repository layout first.",
        "Looking at the existing tests around the {w}.",
        "Inspecting {f} around the {w} handling to understand the control flow.",
    ];
    pick(rng, T).replace("{f}", file).replace("{w}", pick(rng, WORDS))
}

/// A short remark before an editing command.
pub fn edit_thought(rng: &mut ChaCha8Rng, file: &str) -> String {
    const T: &[&str] = &[
        "The empty case returns early without the negation; editing {f} accordingly.",
        "Applying the change to {f} so the {w} is preserved.",
        "Editing {f}: the branch for an empty {w} was missing.",
    ];
    pick(rng, T).replace("{f}", file).replace("{w}", pick(rng, WORDS))
}

/// A short remark before running the tests.
pub fn test_thought(rng: &mut ChaCha8Rng) -> String {
    const T: &[&str] =
        &["Running the tests for this module.", "Let me run the relevant tests.", "Running the test file to check the behaviour."];
    pick(rng, T).to_string()
}

/// A reply that describes the change instead of making it (prose and a diff in text).
pub fn plan_reply(rng: &mut ChaCha8Rng, file: &str) -> String {
    format!(
        "The bug is in `{file}`. I will change the early return so the {} is kept:\n\n```diff\n{}```\n\nThis keeps the negation when the other operand is empty.",
        pick(rng, WORDS),
        diff(rng, file).lines().skip(4).collect::<Vec<_>>().join("\n") + "\n"
    )
}

/// A give-up reply.
pub fn give_up(rng: &mut ChaCha8Rng) -> String {
    const T: &[&str] = &[
        "I'm unable to complete this task: the failing case depends on behaviour I cannot reproduce in this environment.",
        "I cannot fix this with the tools available; the {w} logic is spread over too many modules. Stopping here.",
        "Unfortunately, I was unable to find where the {w} is dropped. I give up on this one.",
    ];
    pick(rng, T).replace("{w}", pick(rng, WORDS))
}

/// A final reply that claims success.
pub fn claim_done(rng: &mut ChaCha8Rng) -> String {
    const T: &[&str] = &[
        "The fix is in place and the tests pass. The task is complete.",
        "I have fixed the {w} handling; all tests pass now.",
        "The change keeps the {w} when the other operand is empty. The issue has been resolved.",
    ];
    pick(rng, T).replace("{w}", pick(rng, WORDS))
}

/// A random lowercase alphanumeric id of `n` characters.
pub fn alnum(rng: &mut ChaCha8Rng, n: usize) -> String {
    const A: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..n).map(|_| char::from(pick(rng, A))).collect()
}

/// A random mixed-case id of `n` characters (Harbor trial suffixes, API ids).
pub fn mixed(rng: &mut ChaCha8Rng, n: usize) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    (0..n).map(|_| char::from(pick(rng, A))).collect()
}

/// A UUID v4 string from the generator.
pub fn uuid(rng: &mut ChaCha8Rng) -> String {
    let a: u128 = rng.random();
    let a = (a & !(0xf << 76) | (0x4 << 76)) & !(0x3 << 62) | (0x2 << 62);
    let h = format!("{a:032x}");
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// An RFC 3339 time for Unix seconds.
pub fn rfc3339(secs: f64) -> String {
    #[expect(clippy::cast_possible_truncation, reason = "generated times are small and positive")]
    let ms = (secs * 1000.0).round() as i64;
    jiff::Timestamp::from_millisecond(ms).map(|t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn uuids_are_version_4() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let u = uuid(&mut rng);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
    }

    #[test]
    fn sizes_stay_within_100_kb() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..10_000 {
            let n = output_size(&mut rng);
            assert!((40..=100_000).contains(&n));
        }
        let s = source(&mut rng, 100_000);
        assert!(s.len() < 100_200);
    }

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(1_737_040_004.5), "2025-01-16T15:06:44.500Z");
    }
}
