//! Reads a predictions file and checks it, reporting every problem at once as one diagnostic
//! with a label at each offending value: bad TOML, duplicate ids, a class the taxonomy lacks, a
//! rate written as a percentage, a difference without its second arm, an arm the study lacks.

use std::ops::Range;
use std::path::{Path, PathBuf};

use miette::{Diagnostic, LabeledSpan, NamedSource};

use super::model::{Comparator, Metric, PredictionsFile, Quantity};

/// A predictions file that does not load or does not fit the run.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("failed to load the predictions {file}: {message}")]
#[diagnostic(code(coroner::predict::invalid))]
pub struct PredictionsError {
    pub file: String,
    pub message: String,
    #[source_code]
    src: Option<NamedSource<String>>,
    #[label(collection)]
    labels: Vec<LabeledSpan>,
    #[help]
    help: Option<String>,
}

impl PredictionsError {
    fn plain(file: &str, message: impl Into<String>) -> Self {
        Self { file: file.into(), message: message.into(), src: None, labels: Vec::new(), help: None }
    }
}

/// One problem found in a file.
#[derive(Debug, Clone)]
struct Problem {
    span: Option<Range<usize>>,
    text: String,
    help: Option<String>,
}

/// A predictions file, read and checked.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub path: PathBuf,
    /// The path as shown in messages.
    pub shown: String,
    pub text: String,
    pub file: PredictionsFile,
}

#[expect(clippy::result_large_err, reason = "the diagnostic carries its source for the labels; it is built once, on the way out")]
impl Loaded {
    /// Reads and checks `path` (names of classes and arms are checked later, against the rules
    /// and the run: [`Loaded::check_classes`], [`Loaded::check_arms`]).
    ///
    /// # Errors
    /// Unreadable, invalid TOML (with its span), or claims that are inconsistent (every one
    /// labelled).
    pub fn read(path: &Path) -> Result<Self, PredictionsError> {
        let shown = crate::util::display_path(path);
        let text = std::fs::read_to_string(path).map_err(|e| PredictionsError::plain(&shown, format!("cannot read it: {e}")))?;
        Self::parse(path, &shown, text)
    }

    /// As [`Loaded::read`], from text.
    ///
    /// # Errors
    /// As [`Loaded::read`].
    pub fn parse(path: &Path, shown: &str, text: String) -> Result<Self, PredictionsError> {
        let file: PredictionsFile = toml::from_str(&text).map_err(|e| PredictionsError {
            file: shown.into(),
            message: e.message().trim().to_string(),
            src: Some(NamedSource::new(shown, text.clone())),
            labels: e.span().map(|r| LabeledSpan::new_with_span(Some("here".into()), r)).into_iter().collect(),
            help: Some(
                "see the predictions format in the README (`[[prediction]]` with `id`, `claim`, `rationale`, `escape_clause`)".into(),
            ),
        })?;
        let loaded = Self { path: path.to_path_buf(), shown: shown.into(), text, file };
        let problems = loaded.problems();
        loaded.fail_on(problems)?;
        Ok(loaded)
    }

    /// Checks that every class a claim names is in the taxonomy in force.
    ///
    /// # Errors
    /// Every unknown class, labelled.
    pub fn check_classes(&self, classes: &[String]) -> Result<(), PredictionsError> {
        let doc = toml_edit::Document::parse(self.text.as_str()).ok();
        let problems = self
            .file
            .predictions
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.claim.class.as_ref().map(|k| (i, k)))
            .filter(|(_, k)| !classes.contains(k))
            .map(|(i, k)| Problem {
                span: doc.as_ref().and_then(|d| span_of(d, i, &["claim", "class"])),
                text: format!("`{k}` is not a class of the taxonomy in force"),
                help: Some(format!("the classes are: {}", classes.join(", "))),
            })
            .collect();
        self.fail_on(problems)
    }

    /// Checks that every arm a claim names is one of `arms` (matched as `predict check` matches:
    /// exactly, else ignoring case).
    ///
    /// # Errors
    /// Every unknown arm, labelled.
    pub fn check_arms(&self, arms: &[String]) -> Result<(), PredictionsError> {
        let doc = toml_edit::Document::parse(self.text.as_str()).ok();
        let mut problems = Vec::new();
        for (i, p) in self.file.predictions.iter().enumerate() {
            for (key, name) in [("arm", Some(&p.claim.arm)), ("versus", p.claim.versus.as_ref())] {
                let Some(name) = name else { continue };
                if resolve_arm(arms, name).is_none() {
                    problems.push(Problem {
                        span: doc.as_ref().and_then(|d| span_of(d, i, &["claim", key])),
                        text: format!("`{name}` is not an arm of this run"),
                        help: Some(format!("the arms are: {}", arms.join(", "))),
                    });
                }
            }
        }
        self.fail_on(problems)
    }

    fn fail_on(&self, problems: Vec<Problem>) -> Result<(), PredictionsError> {
        let Some(first) = problems.first() else { return Ok(()) };
        let message =
            if problems.len() == 1 { first.text.clone() } else { format!("{} (and {} more problems)", first.text, problems.len() - 1) };
        let mut helps: Vec<String> = Vec::new();
        for h in problems.iter().filter_map(|p| p.help.clone()) {
            if !helps.contains(&h) {
                helps.push(h);
            }
        }
        Err(PredictionsError {
            file: self.shown.clone(),
            message,
            src: Some(NamedSource::new(&self.shown, self.text.clone())),
            labels: problems.iter().filter_map(|p| p.span.clone().map(|s| LabeledSpan::new_with_span(Some(p.text.clone()), s))).collect(),
            help: (!helps.is_empty()).then(|| helps.join("; ")),
        })
    }

    /// Every inconsistency in the file, in file order.
    fn problems(&self) -> Vec<Problem> {
        let doc = toml_edit::Document::parse(self.text.as_str()).ok();
        let at = |i: usize, keys: &[&str]| doc.as_ref().and_then(|d| span_of(d, i, keys));
        let mut out = Vec::new();
        let f = &self.file;
        if !(f.alpha > 0.0 && f.alpha < 0.5) {
            out.push(Problem {
                span: doc.as_ref().and_then(|d| d.get("alpha").and_then(toml_edit::Item::span)),
                text: format!("alpha {} is not in (0, 0.5)", f.alpha),
                help: Some("alpha is the family-wise significance level, usually 0.05".into()),
            });
        }
        if f.predictions.is_empty() {
            out.push(Problem { span: None, text: "it holds no prediction".into(), help: Some("add `[[prediction]]` tables".into()) });
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, p) in f.predictions.iter().enumerate() {
            let c = &p.claim;
            if p.id.is_empty() || !p.id.chars().all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.')) {
                out.push(Problem {
                    span: at(i, &["id"]),
                    text: format!("id `{}` is not a plain name", p.id),
                    help: Some("ids use letters, digits, `-`, `_` and `.`, so `predict retract ID` can name them".into()),
                });
            } else if !seen.insert(p.id.clone()) {
                out.push(Problem { span: at(i, &["id"]), text: format!("id `{}` is used twice", p.id), help: None });
            }
            for (key, v) in [("rationale", &p.rationale), ("escape_clause", &p.escape_clause)] {
                if v.trim().is_empty() {
                    out.push(Problem {
                        span: at(i, &[key]),
                        text: format!("`{key}` is empty"),
                        help: Some("a pre-registered claim says why it is expected and what a refutation would mean".into()),
                    });
                }
            }
            match (c.metric.needs_class(), &c.class) {
                (true, None) => out.push(Problem {
                    span: at(i, &["claim", "metric"]),
                    text: format!("`{}` needs a `class`", c.metric.as_str()),
                    help: Some("`coroner rules list` shows the classes".into()),
                }),
                (false, Some(_)) => out.push(Problem {
                    span: at(i, &["claim", "class"]),
                    text: format!("`{}` takes no `class`", c.metric.as_str()),
                    help: None,
                }),
                (true, Some(k)) if k == "infrastructure" && c.metric != Metric::ClassCount => out.push(Problem {
                    span: at(i, &["claim", "class"]),
                    text: "infrastructure failures are not model failures, so they have no share of them".into(),
                    help: Some("use `class_count` for infrastructure".into()),
                }),
                _ => {}
            }
            match (c.metric.needs_versus(), &c.versus) {
                (true, None) => out.push(Problem {
                    span: at(i, &["claim", "metric"]),
                    text: format!("`{}` needs `versus`, the second arm (the difference is arm − versus)", c.metric.as_str()),
                    help: None,
                }),
                (false, Some(_)) => out.push(Problem {
                    span: at(i, &["claim", "versus"]),
                    text: format!("`{}` is measured on one arm and takes no `versus`", c.metric.as_str()),
                    help: None,
                }),
                (true, Some(v)) if v == &c.arm => {
                    out.push(Problem { span: at(i, &["claim", "versus"]), text: "`versus` names the same arm as `arm`".into(), help: None })
                }
                _ => {}
            }
            let value_problem = match c.metric.quantity() {
                _ if !c.value.is_finite() => Some(("the value is not a number".to_string(), None)),
                Quantity::Rate if !(0.0..=1.0).contains(&c.value) => Some((
                    format!("a rate of {} is outside [0, 1]", c.value),
                    (c.value > 1.0 && c.value <= 100.0).then(|| format!("rates are fractions: write {} for {}%", c.value / 100.0, c.value)),
                )),
                Quantity::Difference if !(-1.0..=1.0).contains(&c.value) => Some((
                    format!("a difference of {} is outside [-1, 1]", c.value),
                    (c.value.abs() <= 100.0).then(|| format!("differences are fractions: write {} for {} pp", c.value / 100.0, c.value)),
                )),
                Quantity::Count if c.value < 0.0 => Some((format!("a count of {} is negative", c.value), None)),
                _ => None,
            };
            if let Some((text, help)) = value_problem {
                out.push(Problem { span: at(i, &["claim", "value"]), text, help });
            }
            match (c.comparator, c.tolerance) {
                (Comparator::Approx, None) => out.push(Problem {
                    span: at(i, &["claim", "comparator"]),
                    text: "`≈` needs a `tolerance`".into(),
                    help: Some("write `tolerance = 0.05` for ± 5 pp, or use `==` for an exact value".into()),
                }),
                (cmp, Some(_)) if !cmp.is_band() => out.push(Problem {
                    span: at(i, &["claim", "tolerance"]),
                    text: format!("`{}` takes no `tolerance`", cmp.symbol()),
                    help: Some("a tolerance goes with `==` or `≈`".into()),
                }),
                (_, Some(t)) if !(t.is_finite() && t >= 0.0) || (c.comparator == Comparator::Approx && t == 0.0) => out.push(Problem {
                    span: at(i, &["claim", "tolerance"]),
                    text: format!("a tolerance of {t} is not a positive number"),
                    help: None,
                }),
                _ => {}
            }
            if let Some(r) = &p.retracted {
                if r.note.trim().is_empty() {
                    out.push(Problem { span: at(i, &["retracted", "note"]), text: "the retraction has no note".into(), help: None });
                }
                if crate::util::parse_time(&r.at).is_none() {
                    out.push(Problem {
                        span: at(i, &["retracted", "at"]),
                        text: format!("`{}` is not an RFC 3339 time", r.at),
                        help: Some("for example 2026-02-19T10:00:00Z".into()),
                    });
                }
            }
        }
        out
    }
}

/// The arm of `arms` that `name` refers to: the same name, else the same name ignoring case.
#[must_use]
pub fn resolve_arm<'a>(arms: &'a [String], name: &str) -> Option<&'a String> {
    arms.iter().find(|a| *a == name).or_else(|| arms.iter().find(|a| a.eq_ignore_ascii_case(name)))
}

/// The `[[prediction]]` entries of a document: array of tables or an inline array.
pub(crate) const PREDICTION_KEYS: [&str; 2] = ["prediction", "predictions"];

/// The span of `keys` inside the `i`-th prediction; the nearest enclosing item when a key is
/// absent (so a missing field points at its table).
fn span_of(doc: &toml_edit::Document<&str>, i: usize, keys: &[&str]) -> Option<Range<usize>> {
    let list = PREDICTION_KEYS.iter().find_map(|k| doc.get(k))?;
    let entry: &dyn toml_edit::TableLike = match list {
        toml_edit::Item::ArrayOfTables(a) => a.get(i)?,
        toml_edit::Item::Value(toml_edit::Value::Array(a)) => a.get(i)?.as_inline_table()?,
        _ => return None,
    };
    let mut span = match list {
        toml_edit::Item::ArrayOfTables(a) => a.get(i).and_then(toml_edit::Table::span),
        _ => None,
    };
    let mut table = Some(entry);
    for key in keys {
        let Some(t) = table else { break };
        let Some((k, item)) = t.get_key_value(key) else { break };
        span = item.span().or_else(|| k.span()).or(span);
        table = item.as_table_like();
    }
    span
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes() -> Vec<String> {
        ["infrastructure", "budget_exhausted", "worked_then_wrong"].iter().map(|s| (*s).to_string()).collect()
    }

    #[expect(clippy::result_large_err, reason = "the diagnostic carries its source for the labels; it is built once, on the way out")]
    fn parse(text: &str) -> Result<Loaded, PredictionsError> {
        let l = Loaded::parse(Path::new("p.toml"), "p.toml", text.to_string())?;
        l.check_classes(&classes())?;
        Ok(l)
    }

    #[test]
    fn every_problem_is_labelled_at_its_value() {
        let text = r#"
[[prediction]]
id = "a"
claim = { metric = "class_rate", arm = "x", class = "nope", comparator = ">=", value = 15 }
rationale = "r"
escape_clause = "e"

[[prediction]]
id = "a"
claim = { metric = "pass_rate_diff", arm = "x", comparator = "≈", value = 0 }
rationale = ""
escape_clause = "e"
"#;
        let e = parse(text).unwrap_err();
        let labels: Vec<(String, usize)> = e.labels.iter().map(|l| (l.label().unwrap_or_default().to_string(), l.offset())).collect();
        let texts: Vec<&str> = labels.iter().map(|(t, _)| t.as_str()).collect();
        assert!(texts.contains(&"a rate of 15 is outside [0, 1]"), "{texts:?}");
        assert!(texts.contains(&"id `a` is used twice"), "{texts:?}");
        assert!(texts.contains(&"`≈` needs a `tolerance`"), "{texts:?}");
        assert!(texts.iter().any(|t| t.starts_with("`pass_rate_diff` needs `versus`")), "{texts:?}");
        assert!(texts.contains(&"`rationale` is empty"), "{texts:?}");
        let (_, at) = labels.iter().find(|(t, _)| t.contains("used twice")).unwrap();
        assert_eq!(&text[*at..*at + 3], "\"a\"");
        assert!(e.help.as_deref().unwrap_or_default().contains("write 0.15 for 15%"));
        let fixed = text.replace("value = 15", "value = 0.15");
        let e = Loaded::parse(
            Path::new("p.toml"),
            "p.toml",
            fixed.replace("id = \"a\"\nclaim = { metric = \"pass", "id = \"b\"\nclaim = { metric = \"pass"),
        )
        .unwrap_err();
        assert!(!e.message.contains("15"), "{}", e.message);
    }

    #[test]
    fn unknown_classes_are_labelled() {
        let text = "[[prediction]]\nid = \"a\"\nclaim = { metric = \"class_rate\", arm = \"x\", class = \"nope\", comparator = \">=\", value = 0.1 }\nrationale = \"r\"\nescape_clause = \"e\"\n";
        let e = parse(text).unwrap_err();
        assert_eq!(e.message, "`nope` is not a class of the taxonomy in force");
        assert_eq!(&text[e.labels[0].offset()..e.labels[0].offset() + 6], "\"nope\"");
        assert!(e.help.as_deref().unwrap_or_default().contains("budget_exhausted"));
    }

    #[test]
    fn unknown_arms_are_labelled_with_the_known_ones() {
        let text = "[[prediction]]\nid = \"a\"\nrationale = \"r\"\nescape_clause = \"e\"\n[prediction.claim]\nmetric = \"timeouts\"\narm = \"zz\"\ncomparator = \"<=\"\nvalue = 3\n";
        let l = parse(text).unwrap();
        let e = l.check_arms(&["A".into(), "b".into()]).unwrap_err();
        assert_eq!(e.labels.len(), 1);
        assert_eq!(&text[e.labels[0].offset()..e.labels[0].offset() + 4], "\"zz\"");
        assert!(l.check_arms(&["ZZ".into()]).is_ok(), "case-insensitive match");
    }
}
