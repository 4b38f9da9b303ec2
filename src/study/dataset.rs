//! A study read back from a dataset of verdicts: the Parquet parts that sharded runs write
//! (`classify --shard K/N -o DIR/part-K-of-N.parquet`, `coroner.ray.classify`), with their
//! accounting in `DIR/_accounting/*.json`. `report` and `compare` take such a directory in place
//! of transcripts: verdicts only, the trajectories are not read again.
//!
//! A part holds the columns of `verdicts.parquet` (`classify::table::verdict_frame`); each row
//! is reshaped into a verdict's JSON (the mechanics under `mechanics`, the `;`-joined lists
//! split, the evidence parsed) and read with the verdict's own deserializer, so a column the
//! frame gains is a compile-free change here. What the frame does not carry (the per-tool call
//! counts) stays empty. `report` and `compare` take the verdicts one row group at a time
//! ([`for_each`]) and hold none; [`verdicts`] and [`study`] hold them all (predictions).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde_json::{Map, Value};

use super::{ArmRun, BudgetSpec, StudyRun};
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::model::{Mechanics, Verdict};

/// The fields of [`Mechanics`], from its JSON Schema (optional ones included), so a row's
/// columns are sorted into the verdict and its mechanics by the types themselves.
fn mechanics_fields() -> std::collections::HashSet<String> {
    let schema = schemars::schema_for!(Mechanics);
    schema.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default()
}

/// Rows per row group of a part: small enough that reading one back holds few verdicts.
const ROW_GROUP: usize = 8192;

/// `;`-joined lists.
const LISTS: &[&str] = &["classes", "flags", "test_files_changed", "config_files_changed"];
/// Derived columns with no field of their own.
const DERIVED: &[&str] = &["evidence_steps"];

/// The parts of a dataset directory, in path order: `part-*.parquet` at its top and in its
/// hive partitions (`arm=…/part-*.parquet`); empty when it is not a dataset.
#[must_use]
pub fn parts(dir: &Path) -> Vec<PathBuf> {
    fn walk(d: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() && depth < 4 && name.contains('=') {
                walk(&p, depth + 1, out);
            } else if name.starts_with("part-") && p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, 0, &mut v);
    v.sort();
    v
}

/// Writes `verdicts` as the shard `k` of `n` of a dataset in `dir`: one Parquet part per arm in
/// its hive partition, `dir/arm=<arm, percent-encoded>/part-K-of-N.parquet`, each written under
/// a temporary name and renamed (a shard run again leaves the same bytes, never half a file);
/// a part this shard wrote before for an arm it no longer has is removed. Returns the parts.
///
/// # Errors
/// On I/O or Parquet failure.
pub fn write_shard(dir: &Path, k: u32, n: u32, verdicts: &[Verdict]) -> std::io::Result<Vec<PathBuf>> {
    const HIVE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');
    let name = format!("part-{k:05}-of-{n:05}.parquet");
    for stale in parts(dir).into_iter().filter(|p| p.file_name().is_some_and(|f| f.to_string_lossy() == name)) {
        std::fs::remove_file(stale)?;
    }
    let mut by_arm: BTreeMap<String, Vec<&Verdict>> = BTreeMap::new();
    for v in verdicts {
        by_arm.entry(v.arm_or_harness()).or_default().push(v);
    }
    let mut written = Vec::new();
    for (arm, vs) in by_arm {
        let part_dir = dir.join(format!("arm={}", percent_encoding::utf8_percent_encode(&arm, HIVE)));
        std::fs::create_dir_all(&part_dir)?;
        let (tmp, done) = (part_dir.join(format!(".{name}.inflight")), part_dir.join(&name));
        let mut df = crate::classify::table::verdict_frame(&vs).map_err(std::io::Error::other)?;
        ParquetWriter::new(std::fs::File::create(&tmp)?)
            .with_row_group_size(Some(ROW_GROUP))
            .finish(&mut df)
            .map_err(std::io::Error::other)?;
        std::fs::rename(&tmp, &done)?;
        written.push(done);
    }
    Ok(written)
}

fn reshape(row: Map<String, Value>, mechanics: &std::collections::HashSet<String>) -> Result<Verdict, String> {
    let mut top = Map::new();
    let mut mech = Map::new();
    for (k, v) in row {
        if DERIVED.contains(&k.as_str()) {
            continue;
        }
        let v = match (k.as_str(), v) {
            (l, Value::String(s)) if LISTS.contains(&l) => {
                Value::Array(s.split(';').filter(|x| !x.is_empty()).map(|x| Value::String(x.to_string())).collect())
            }
            ("evidence", Value::String(s)) => serde_json::from_str(&s).map_err(|e| format!("evidence: {e}"))?,
            (_, v) => v,
        };
        if v.is_null() {
            continue;
        }
        if mechanics.contains(&k) {
            mech.insert(k, v);
        } else {
            top.insert(k, v);
        }
    }
    mech.entry("tool_calls_by_name").or_insert_with(|| Value::Object(Map::new()));
    top.insert("mechanics".into(), Value::Object(mech));
    serde_json::from_value(Value::Object(top)).map_err(|e| e.to_string())
}

/// Calls `f` with every verdict of the part `p`, read one row group at a time (coroner writes
/// groups of [`ROW_GROUP`] rows; a part written by another tool holds what its groups hold).
/// A part that stops reading keeps the verdicts it gave, as a transcript streamed in records
/// does: the failure costs the rest.
fn each_verdict(p: &Path, mechanics: &std::collections::HashSet<String>, f: &mut dyn FnMut(Verdict)) -> Result<(), InputError> {
    let shown = crate::util::display_path(p);
    let corrupt = |e: PolarsError| InputError::new(InputErrorKind::Corrupt, &shown, format!("read the Parquet part: {e}"));
    let open = || std::fs::File::open(p).map_err(|e| crate::ingest::source::io_error(&shown, &e));
    // The footer is read once and handed to each group's reader (it grows with the groups).
    let meta = ParquetReader::new(open()?).get_metadata().map_err(corrupt)?.clone();
    let groups: Vec<usize> = meta.row_groups.iter().map(|g| g.num_rows()).collect();
    let mut start = 0;
    for rows in groups.into_iter().filter(|&n| n > 0) {
        let mut reader = ParquetReader::new(open()?);
        reader.set_metadata(meta.clone());
        let mut df = reader.with_slice(Some((start, rows))).finish().map_err(corrupt)?;
        let mut json = Vec::new();
        JsonWriter::new(&mut json).with_json_format(JsonFormat::JsonLines).finish(&mut df).map_err(corrupt)?;
        drop(df);
        for (i, line) in json.split(|b| *b == b'\n').filter(|l| !l.is_empty()).enumerate() {
            let at = start + i + 1;
            let schema = |e: String| InputError::new(InputErrorKind::Schema, &shown, format!("read row {at} as a verdict: {e}"));
            let row: Map<String, Value> = serde_json::from_slice(line).map_err(|e| schema(e.to_string()))?;
            f(reshape(row, mechanics).map_err(schema)?);
        }
        start += rows;
    }
    Ok(())
}

/// Every verdict of a dataset directory, in the order a walk of the transcripts meets them,
/// with what [`for_each`] says was lost.
#[must_use]
pub fn verdicts(dir: &Path) -> (Vec<Verdict>, usize, Vec<InputError>) {
    let mut out = Vec::new();
    let (lost, unread) = for_each(dir, &mut |v| out.push(v));
    // By source path, component by component; a file's records keep their order, as a file is
    // never split across shards, whatever the number of shards.
    out.sort_by(|a, b| a.source.as_deref().unwrap_or("").split('/').cmp(b.source.as_deref().unwrap_or("").split('/')));
    (out, lost, unread)
}

/// Calls `f` with every verdict of a dataset, part by part, holding at most one row group (a
/// report tallies them as they come: memory then grows with the tasks, not the verdicts).
/// Returns how many inputs the dataset lost, and a diagnostic for each the reading itself lost:
/// the files and records its shards quarantined (their accounting), a part that does not read
/// and an accounting file that does not read. The rest of the dataset is read.
#[must_use]
pub fn for_each(dir: &Path, f: &mut dyn FnMut(Verdict)) -> (usize, Vec<InputError>) {
    let mechanics = mechanics_fields();
    let mut unread: Vec<InputError> = parts(dir).iter().filter_map(|p| each_verdict(p, &mechanics, f).err()).collect();
    let (q, bad) = quarantined(dir);
    unread.extend(bad);
    (q + unread.len(), unread)
}

/// The files and records the dataset's shards quarantined, from `_accounting/*.json`, and an
/// accounting file that does not read (a shard whose count is lost: itself counted once).
fn quarantined(dir: &Path) -> (usize, Vec<InputError>) {
    let mut n = 0;
    let mut bad = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("_accounting")).into_iter().flatten().flatten().map(|e| e.path()).collect();
    files.sort();
    for p in files.iter().filter(|p| p.extension().is_some_and(|x| x == "json")) {
        let shown = crate::util::display_path(p);
        let read = std::fs::read_to_string(p).map_err(|e| crate::ingest::source::io_error(&shown, &e)).and_then(|text| {
            serde_json::from_str::<Value>(&text)
                .map_err(|e| InputError::new(InputErrorKind::Syntax, &shown, format!("read the shard's accounting: {e}")))
        });
        match read {
            Ok(s) => {
                n += s["quarantined_files"].as_u64().unwrap_or(0) as usize + s["quarantined_records"].as_u64().unwrap_or(0) as usize;
            }
            Err(e) => bad.push(e),
        }
    }
    (n, bad)
}

/// A study of a dataset: one arm per `arm` (else harness) value, as for transcripts without a
/// study file; every verdict is held (predictions). With the diagnostics of what did not read,
/// counted with the quarantined inputs.
#[must_use]
pub fn study(dir: &Path, rules_digest: &str) -> (StudyRun, Vec<InputError>) {
    let (all, q, unread) = verdicts(dir);
    let mut by_arm: BTreeMap<String, Vec<Verdict>> = BTreeMap::new();
    for v in all {
        by_arm.entry(v.arm_or_harness()).or_default().push(v);
    }
    // The run's quarantined inputs belong to no arm: counted once, with the first.
    let arms = by_arm
        .into_iter()
        .enumerate()
        .map(|(i, (name, verdicts))| ArmRun {
            name,
            files_seen: verdicts.len(),
            verdicts,
            budget: BudgetSpec::default(),
            quarantined: if i == 0 { q } else { 0 },
            earliest: None,
        })
        .collect();
    (StudyRun { title: None, arms, rules_digest: rules_digest.to_string(), registries: BTreeMap::new() }, unread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_survives_its_parquet_row() {
        let v = Verdict {
            trajectory_id: "t#1".into(),
            task_id: "t".into(),
            arm: Some("a".into()),
            trial: 2,
            harness: "h".into(),
            model: None,
            outcome: crate::model::OutcomeStatus::Failed,
            primary: Some("worked_then_wrong".into()),
            classes: vec!["worked_then_wrong".into(), "early_resignation".into()],
            flags: vec!["unverified".into()],
            mechanics: Mechanics {
                steps: 7,
                test_files_changed: vec!["tests/x.py".into()],
                cost_usd: Some(0.25),
                budget: Some(crate::model::Budget::WallTime),
                peak_write_file: Some("src/a.py".into()),
                ..Mechanics::default()
            },
            registry_source: "declared".into(),
            reason: Some("r".into()),
            evidence: vec![crate::model::Evidence {
                rule: "worked-progress-then-failed".into(),
                supports: "worked_then_wrong".into(),
                steps: vec![3, 5],
                excerpt: "sed -i".into(),
                detail: None,
                source_span: None,
            }],
            source: Some("runs/t.json".into()),
        };
        let mut df = crate::classify::table::verdict_frame(&[&v]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        ParquetWriter::new(std::fs::File::create(dir.path().join("part-1-of-1.parquet")).unwrap()).finish(&mut df).unwrap();
        assert_eq!(verdicts(dir.path()).0, vec![v.clone()]);

        // A part of several row groups is read group by group, every row once, in order; the
        // shard's accounting is added once.
        let many: Vec<Verdict> = (0..5)
            .map(|i| Verdict { trajectory_id: format!("t#{i}"), mechanics: Mechanics { steps: i, ..v.mechanics.clone() }, ..v.clone() })
            .collect();
        let mut df = crate::classify::table::verdict_frame(&many.iter().collect::<Vec<_>>()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("arm=a").join("part-00001-of-00001.parquet");
        std::fs::create_dir_all(part.parent().unwrap()).unwrap();
        ParquetWriter::new(std::fs::File::create(&part).unwrap()).with_row_group_size(Some(2)).finish(&mut df).unwrap();
        std::fs::create_dir_all(dir.path().join("_accounting")).unwrap();
        std::fs::write(
            dir.path().join("_accounting").join("part-00001-of-00001.json"),
            r#"{"quarantined_files": 2, "quarantined_records": 1}"#,
        )
        .unwrap();
        let groups = ParquetReader::new(std::fs::File::open(&part).unwrap()).get_metadata().unwrap().row_groups.len();
        assert!(groups > 1, "the part has several row groups, which this test is about: {groups}");
        let mut seen = Vec::new();
        let (quarantined, unread) = for_each(dir.path(), &mut |v| seen.push(v));
        assert_eq!(seen, many);
        assert_eq!(quarantined, 3);
        assert!(unread.is_empty());

        // A shard's accounting that does not read is named and counted once; the other
        // shard's counts stay. The study of the dataset (predictions) counts it the same way.
        std::fs::write(dir.path().join("_accounting").join("part-00002-of-00002.json"), "{\"quarantined_files\": 1,").unwrap();
        let (quarantined, unread) = for_each(dir.path(), &mut |_| {});
        assert_eq!(quarantined, 4);
        assert_eq!(unread.len(), 1);
        assert!(unread[0].path.ends_with("part-00002-of-00002.json"), "{}", unread[0].path);
        let (run, unread) = study(dir.path(), "digest");
        assert_eq!((run.quarantined(), unread.len(), run.arms[0].verdicts.len()), (4, 1, 5));
    }
}
