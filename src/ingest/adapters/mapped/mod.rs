//! Formats as data: the adapter for a mapping file (`rules/formats/<name>.toml`, see
//! `rules::formats`). Detection sniffs with the mapping's `[recognize]` keys; parsing follows
//! its paths. It decodes only: statuses and errors become signals named by their path, and the
//! profile of the mapping's harness says what they mean.
//!
//! Adapters are `&'static` because detection, the file accounting and provenance hold their
//! names for the whole run; a mapping becomes one by being leaked once per distinct file text,
//! so loading the same rules again (every test does) costs nothing more.

mod read;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::{JsonShape, Probe};
use crate::rules::formats::{FormatMapping, Layout};

/// A mapping as an adapter.
pub struct Mapped {
    pub mapping: FormatMapping,
    name: &'static str,
    describe: &'static str,
    versions: &'static str,
}

/// The adapters for `formats`, in their order.
///
/// # Errors
/// A mapping that takes a built-in format's name: its name and file.
pub fn adapters(formats: &[Arc<FormatMapping>]) -> Result<Vec<&'static dyn Adapter>, (String, String)> {
    static LEAKED: OnceLock<Mutex<HashMap<String, &'static Mapped>>> = OnceLock::new();
    let builtin = super::names();
    let mut out: Vec<&'static dyn Adapter> = Vec::new();
    for m in formats {
        if builtin.contains(&m.name.as_str()) {
            return Err((m.name.clone(), m.file.clone()));
        }
        let mut cache = LEAKED.get_or_init(Mutex::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = format!("{}\0{}", m.digest, m.file);
        let a: &'static Mapped = cache.entry(key).or_insert_with(|| {
            let describe =
                if m.description.is_empty() { format!("mapping {}", m.file) } else { format!("{} (mapping {})", m.description, m.file) };
            Box::leak(Box::new(Mapped {
                mapping: (**m).clone(),
                name: Box::leak(m.name.clone().into_boxed_str()),
                describe: Box::leak(describe.into_boxed_str()),
                versions: Box::leak(m.versions.clone().into_boxed_str()),
            }))
        });
        out.push(a);
    }
    Ok(out)
}

impl Mapped {
    fn shape<'p>(&self, p: &'p Probe) -> Result<&'p JsonShape, String> {
        match self.mapping.layout {
            Layout::Json => p.json.as_ref().filter(|_| p.jsonl.is_none()).ok_or_else(|| "not one JSON document".to_string()),
            Layout::Jsonl => p.jsonl.as_ref().ok_or_else(|| "not JSON Lines".to_string()),
        }
    }
}

impl Adapter for Mapped {
    fn name(&self) -> &'static str {
        self.name
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        self.describe
    }

    fn versions(&self) -> &'static str {
        self.versions
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(r) = &self.mapping.recognize else { return Err("read only when named with --format".into()) };
        if let Some(re) = &r.file_name
            && !re.is_match(&p.name)
        {
            return Err(format!("file name does not match `{}`", re.as_str()));
        }
        let j = self.shape(p)?;
        let key = |k: &str| if j.top_is_array && !k.starts_with("[].") { format!("[].{k}") } else { k.to_string() };
        if let Some(missing) = r.keys.iter().find(|k| !j.has(&key(k))) {
            return Err(format!("no {missing}"));
        }
        if let Some((k, v)) = &r.marker {
            return match j.str(&key(k)) {
                Some(s) if s == v => marker(format!("{k} = {v} (mapping {})", self.mapping.file)),
                Some(s) => Err(format!("{k} is `{s}`, not `{v}`")),
                None => Err(format!("no {k}")),
            };
        }
        structure(format!("keys {} (mapping {})", r.keys.join(", "), self.mapping.file))
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        read::parse(&self.mapping, self.name, unit, out)
    }
}
