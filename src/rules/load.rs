//! Loads the rules in force: the taxonomy and the harness profiles.
//!
//! Built-in rules are embedded and go through the same loader as user rules (`--rules DIR`),
//! so a built-in can never be valid where a user file would not be. Every problem is reported
//! with a miette diagnostic pointing into the TOML: a bad regex, an unknown class in
//! `precedence`, a rule without an implementation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use miette::{Diagnostic, NamedSource, SourceSpan};
use serde::Deserialize;
use toml::Spanned;

use super::profile::{Profile, RawProfile};

/// The rule implementations this build has; the taxonomy must document exactly these.
pub const IMPLEMENTED_RULES: &[&str] = &[
    "infra-termination",
    "infra-verifier-errored",
    "infra-api-error-at-end",
    "infra-user-ended-on-consent",
    "infra-verifier-broken",
    "infra-tests-broken-in-image",
    "infra-empty-inputs",
    "budget-termination",
    "budget-consumed-limit",
    "budget-command-timeouts",
    "hallucinated-unknown-tool",
    "hallucinated-rejected-by-harness",
    "registry-suspect-call",
    "plan-in-text",
    "plan-replies-never-parsed",
    "plan-consented-not-done",
    "plan-announced-at-end",
    "resign-explicit",
    "resign-silent",
    "resign-empty-submission",
    "resign-declined",
    "worked-progress-then-failed",
    "worked-ended-unseen",
    "flag-unverified",
    "flag-regressed",
    "flag-false-done",
    "flag-edited-tests",
    "flag-looping",
    "flag-passed-after-timeout",
    "flag-format-errors",
];

/// Flags rules may support besides classes.
pub const FLAGS: &[&str] = &[
    "unverified",
    "regressed",
    "false_done",
    "edited_tests",
    "registry_suspect",
    "looping",
    "silent_give_up",
    "passed_after_timeout",
    "format_errors",
];

const BUILTIN_TAXONOMY: (&str, &str) = ("rules/taxonomy.toml", include_str!("../../rules/taxonomy.toml"));

/// Built-in harness profiles (`rules/harnesses/*.toml`).
pub const BUILTIN_PROFILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_profiles.rs"));

/// A rules file that does not load.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("failed to load rules from {file}: {message}")]
#[diagnostic(code(coroner::rules::invalid))]
pub struct RulesError {
    pub file: String,
    pub message: String,
    #[source_code]
    src: NamedSource<String>,
    #[label("{label}")]
    pub(crate) span: Option<SourceSpan>,
    label: String,
    #[help]
    help: Option<String>,
}

impl RulesError {
    pub(crate) fn at(
        file: &str,
        text: &str,
        span: Option<std::ops::Range<usize>>,
        message: impl Into<String>,
        help: Option<String>,
    ) -> Self {
        let message = message.into();
        Self {
            file: file.to_string(),
            src: NamedSource::new(file, text.to_string()),
            span: span.map(|r| SourceSpan::new(r.start.into(), r.end - r.start)),
            label: message.clone(),
            message,
            help,
        }
    }

    fn from_toml(file: &str, text: &str, e: &toml::de::Error) -> Self {
        Self::at(file, text, e.span(), e.message().to_string(), Some("fix the TOML syntax or the field's type".into()))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTaxonomy {
    version: u32,
    precedence: Vec<Spanned<String>>,
    class: Vec<RawClass>,
    rule: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClass {
    id: Spanned<String>,
    name: String,
    definition: String,
    what: String,
    why: String,
    example: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: Spanned<String>,
    supports: Spanned<String>,
    message: String,
    what: String,
    why: String,
    example: String,
}

/// A failure class and its documentation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ClassDoc {
    pub id: String,
    pub name: String,
    pub definition: String,
    pub what: String,
    pub why: String,
    pub example: String,
}

/// A rule and its documentation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RuleDoc {
    pub id: String,
    /// The class or flag it supports.
    pub supports: String,
    pub message: String,
    pub what: String,
    pub why: String,
    pub example: String,
}

/// The taxonomy in force.
#[derive(Debug, Clone)]
pub struct Taxonomy {
    pub precedence: Vec<String>,
    pub classes: Vec<ClassDoc>,
    pub rules: Vec<RuleDoc>,
}

impl Taxonomy {
    #[must_use]
    pub fn class(&self, id: &str) -> Option<&ClassDoc> {
        self.classes.iter().find(|c| c.id == id)
    }

    #[must_use]
    pub fn rule(&self, id: &str) -> Option<&RuleDoc> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// Rank of a class in the precedence (lower wins).
    #[must_use]
    pub fn rank(&self, class: &str) -> usize {
        self.precedence.iter().position(|c| c == class).unwrap_or(usize::MAX)
    }

    /// Parses and checks a taxonomy file.
    ///
    /// # Errors
    /// Syntax errors, unknown classes or flags, duplicate or unimplemented rules, missing docs.
    pub fn parse(file: &str, text: &str) -> Result<Self, RulesError> {
        let raw: RawTaxonomy = toml::from_str(text).map_err(|e| RulesError::from_toml(file, text, &e))?;
        if raw.version != 1 {
            return Err(RulesError::at(
                file,
                text,
                None,
                format!("taxonomy version {} is not supported", raw.version),
                Some("this coroner reads version 1".into()),
            ));
        }
        let mut classes = Vec::new();
        let mut seen = BTreeSet::new();
        for c in &raw.class {
            if !seen.insert(c.id.get_ref().clone()) {
                return Err(RulesError::at(file, text, Some(c.id.span()), format!("class `{}` is defined twice", c.id.get_ref()), None));
            }
            for (field, v) in
                [("name", &c.name), ("definition", &c.definition), ("what", &c.what), ("why", &c.why), ("example", &c.example)]
            {
                if v.trim().is_empty() {
                    return Err(RulesError::at(
                        file,
                        text,
                        Some(c.id.span()),
                        format!("class `{}` has an empty `{field}`", c.id.get_ref()),
                        Some("every class documents what it detects, why it matters, and an example".into()),
                    ));
                }
            }
            classes.push(ClassDoc {
                id: c.id.get_ref().clone(),
                name: c.name.clone(),
                definition: c.definition.clone(),
                what: c.what.clone(),
                why: c.why.clone(),
                example: c.example.clone(),
            });
        }
        let mut precedence = Vec::new();
        for p in &raw.precedence {
            if !seen.contains(p.get_ref()) {
                return Err(RulesError::at(
                    file,
                    text,
                    Some(p.span()),
                    format!("`{}` in precedence is not a class", p.get_ref()),
                    Some(format!("classes: {}", seen.iter().cloned().collect::<Vec<_>>().join(", "))),
                ));
            }
            if precedence.contains(p.get_ref()) {
                return Err(RulesError::at(file, text, Some(p.span()), format!("`{}` is listed twice in precedence", p.get_ref()), None));
            }
            precedence.push(p.get_ref().clone());
        }
        if let Some(missing) = classes.iter().find(|c| !precedence.contains(&c.id)) {
            return Err(RulesError::at(
                file,
                text,
                None,
                format!("class `{}` is missing from precedence", missing.id),
                Some("list every class once in `precedence`".into()),
            ));
        }
        let mut rules = Vec::new();
        let mut rule_ids = BTreeSet::new();
        for r in &raw.rule {
            let id = r.id.get_ref();
            if !is_kebab(id) {
                return Err(RulesError::at(
                    file,
                    text,
                    Some(r.id.span()),
                    format!("rule id `{id}` is not kebab-case"),
                    Some("rule ids are lower-case words joined by `-`".into()),
                ));
            }
            if !rule_ids.insert(id.clone()) {
                return Err(RulesError::at(file, text, Some(r.id.span()), format!("rule `{id}` is defined twice"), None));
            }
            if !IMPLEMENTED_RULES.contains(&id.as_str()) {
                return Err(RulesError::at(
                    file,
                    text,
                    Some(r.id.span()),
                    format!("rule `{id}` has no implementation in this coroner"),
                    Some(format!("implemented rules: {}", IMPLEMENTED_RULES.join(", "))),
                ));
            }
            let s = r.supports.get_ref();
            if !seen.contains(s) && !FLAGS.contains(&s.as_str()) {
                return Err(RulesError::at(
                    file,
                    text,
                    Some(r.supports.span()),
                    format!("`{s}` is neither a class nor a flag"),
                    Some(format!("flags: {}", FLAGS.join(", "))),
                ));
            }
            for (field, v) in [("message", &r.message), ("what", &r.what), ("why", &r.why), ("example", &r.example)] {
                if v.trim().is_empty() {
                    return Err(RulesError::at(file, text, Some(r.id.span()), format!("rule `{id}` has an empty `{field}`"), None));
                }
            }
            rules.push(RuleDoc {
                id: id.clone(),
                supports: s.clone(),
                message: r.message.clone(),
                what: r.what.clone(),
                why: r.why.clone(),
                example: r.example.clone(),
            });
        }
        if let Some(missing) = IMPLEMENTED_RULES.iter().find(|r| !rule_ids.contains(**r)) {
            return Err(RulesError::at(
                file,
                text,
                None,
                format!("rule `{missing}` is implemented but not documented"),
                Some("add a [[rule]] entry for it".into()),
            ));
        }
        Ok(Self { precedence, classes, rules })
    }
}

fn read_rules_file(p: &Path) -> Result<String, RulesError> {
    std::fs::read_to_string(p).map_err(|e| RulesError::at(&p.display().to_string(), "", None, format!("cannot read: {e}"), None))
}

/// Every `.toml` file of `dir` (none when it is absent), in path order, with its text.
fn toml_files(dir: &Path) -> Result<Vec<(String, String)>, RulesError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| RulesError::at(&dir.display().to_string(), "", None, format!("cannot read: {e}"), None))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    entries.sort();
    entries.into_iter().map(|p| Ok((p.display().to_string(), read_rules_file(&p)?))).collect()
}

pub(crate) fn is_kebab(s: &str) -> bool {
    !s.is_empty() && s.split('-').all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}

/// Everything classification reads from `rules/`.
#[derive(Debug, Clone)]
pub struct Rules {
    pub taxonomy: Taxonomy,
    /// Profiles by name, each already merged over `default`.
    pub profiles: BTreeMap<String, Profile>,
    /// sha256 over every rules file in force, in load order (for sealed predictions).
    pub digest: String,
    /// The files in force, for `coroner rules list`.
    pub files: Vec<String>,
    /// The format mappings in force (`formats/*.toml`), by name; a user's replaces a built-in
    /// of the same name.
    pub formats: Vec<std::sync::Arc<super::formats::FormatMapping>>,
}

impl Rules {
    /// The built-in rules.
    ///
    /// # Errors
    /// Never for a correct build (a test loads them); kept fallible because the same loader
    /// reads user files.
    pub fn builtin() -> Result<Self, RulesError> {
        Self::load(None)
    }

    /// Built-in rules, with `dir/taxonomy.toml` replacing the taxonomy,
    /// `dir/harnesses/*.toml` adding or replacing profiles and `dir/formats/*.toml` adding or
    /// replacing format mappings when `dir` is given.
    ///
    /// # Errors
    /// The first file that does not load, with a diagnostic into it.
    pub fn load(dir: Option<&Path>) -> Result<Self, RulesError> {
        let mut texts: Vec<(String, String)> = Vec::new();
        let mut taxonomy = (BUILTIN_TAXONOMY.0.to_string(), BUILTIN_TAXONOMY.1.to_string());
        let mut profile_texts: Vec<(String, String)> = BUILTIN_PROFILES.iter().map(|(n, t)| ((*n).to_string(), (*t).to_string())).collect();
        let mut format_texts: Vec<(String, String)> =
            super::formats::BUILTIN_FORMATS.iter().map(|(n, t)| ((*n).to_string(), (*t).to_string())).collect();
        if let Some(d) = dir {
            let tax = d.join("taxonomy.toml");
            if tax.exists() {
                taxonomy = (tax.display().to_string(), read_rules_file(&tax)?);
            }
            profile_texts.extend(toml_files(&d.join("harnesses"))?);
            format_texts.extend(toml_files(&d.join("formats"))?);
        }
        let tax = Taxonomy::parse(&taxonomy.0, &taxonomy.1)?;
        texts.push(taxonomy);

        let mut raws: BTreeMap<String, (String, String, RawProfile)> = BTreeMap::new();
        for (file, text) in profile_texts {
            let raw: RawProfile = toml::from_str(&text).map_err(|e| RulesError::from_toml(&file, &text, &e))?;
            if raw.runner && !raw.only_meanings() {
                return Err(RulesError::at(
                    &file,
                    &text,
                    None,
                    format!("runner profile `{}` says what tools do", raw.name),
                    Some("a runner's profile holds only interpretation tables; tools belong to the harness profiles".into()),
                ));
            }
            raws.insert(raw.name.clone(), (file.clone(), text.clone(), raw));
            texts.push((file, text));
        }
        let (dfile, dtext, default) =
            raws.remove("default").ok_or_else(|| RulesError::at("rules/harnesses", "", None, "no `default` profile", None))?;
        let mut profiles = BTreeMap::new();
        // A runner (Harbor, Terminal-Bench, SWE-bench's batch runners) wraps many agents: what
        // its statuses mean holds whichever harness ran, so its tables join every profile,
        // between `default` and the harness's own.
        let runners: Vec<(&String, &String, &RawProfile)> = raws.values().filter(|(_, _, r)| r.runner).map(|(f, t, r)| (f, t, r)).collect();
        for (name, (file, text, raw)) in &raws {
            let mut layers: Vec<(&str, &str, &RawProfile)> = vec![(&dfile, &dtext, &default)];
            layers.extend(runners.iter().filter(|(_, _, r)| r.name != *name).map(|(f, t, r)| (f.as_str(), t.as_str(), *r)));
            layers.push((file, text, raw));
            profiles.insert(name.clone(), Profile::compile(&layers, layers.len() - 1)?);
        }
        // A record of a harness without a profile still meets every runner's vocabulary.
        let mut layers: Vec<(&str, &str, &RawProfile)> = vec![(&dfile, &dtext, &default)];
        layers.extend(runners.iter().map(|(f, t, r)| (f.as_str(), t.as_str(), *r)));
        // The runners lend their tables, not their names.
        profiles.insert("default".to_string(), Profile::compile(&layers, 0)?);
        let mut formats: BTreeMap<String, std::sync::Arc<super::formats::FormatMapping>> = BTreeMap::new();
        for (file, text) in format_texts {
            let m = super::formats::FormatMapping::parse(&file, &text)?;
            formats.insert(m.name.clone(), std::sync::Arc::new(m));
            texts.push((file, text));
        }
        let digest = {
            use sha2::{Digest, Sha256};
            let mut h = Sha256::new();
            for (f, t) in &texts {
                h.update(f.rsplit('/').next().unwrap_or(f).as_bytes());
                h.update([0]);
                h.update(t.as_bytes());
                h.update([0]);
            }
            crate::util::hex(&h.finalize())
        };
        Ok(Self {
            taxonomy: tax,
            profiles,
            digest,
            files: texts.into_iter().map(|(f, _)| f).collect(),
            formats: formats.into_values().collect(),
        })
    }

    /// The profile for a record: its harness's, else the one named for the adapter that read it
    /// (formats whose records name their harness after the agent, as OpenTelemetry traces do),
    /// else `default`.
    #[must_use]
    pub fn profile_for_record(&self, harness: &str, adapter: &str) -> &Profile {
        let p = self.profile_for(harness);
        if p.name == "default" { self.profile_for(adapter) } else { p }
    }

    /// The profile for a harness name (case-insensitive, by name or alias), or `default`.
    #[must_use]
    pub fn profile_for(&self, harness: &str) -> &Profile {
        self.find_profile(harness).unwrap_or_else(|| self.profiles.get("default").expect("the default profile is always loaded"))
    }

    /// A profile by its name, else by a harness name it covers (case-insensitive); none when no
    /// profile names it (`profile_for` then falls back to `default`).
    #[must_use]
    pub fn find_profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name).or_else(|| {
            self.profiles.values().find(|p| p.name.eq_ignore_ascii_case(name) || p.harnesses.iter().any(|h| h.eq_ignore_ascii_case(name)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_rules_load() {
        let r = Rules::builtin().unwrap();
        assert_eq!(r.taxonomy.precedence.first().map(String::as_str), Some("infrastructure"));
        assert_eq!(r.profile_for("Mini-SWE-Agent").name, "mini-swe-agent");
        assert_eq!(r.profile_for("terminus-2").name, "terminus");
        assert_eq!(r.profile_for("never-heard-of-it").name, "default");
        assert_eq!(r.digest.len(), 64);
    }

    #[test]
    fn an_unknown_precedence_entry_points_at_itself() {
        let text = BUILTIN_TAXONOMY.1.replace("  \"early_resignation\",\n", "  \"early_resignaton\",\n");
        let e = Taxonomy::parse("t.toml", &text).unwrap_err();
        assert!(e.message.contains("early_resignaton"), "{}", e.message);
        let span = e.span.unwrap();
        assert_eq!(&text[span.offset()..span.offset() + span.len()], "\"early_resignaton\"");
    }
}
