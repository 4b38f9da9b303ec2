//! The same inputs give the same bytes, for any thread count; coroner JSONL round-trips.

use crate::common::{coroner_env, corpus, root, tempdir};

fn inputs() -> Vec<String> {
    let mut v = vec![root().join("samples").display().to_string()];
    if let Some(c) = corpus("") {
        v.push(c.display().to_string());
    }
    v
}

#[test]
fn output_bytes_do_not_depend_on_thread_count() {
    let tmp = tempdir();
    let mut outputs = Vec::new();
    for threads in ["1", "2", "4"] {
        let out = tmp.path().join(format!("t{threads}.jsonl"));
        let mut args = vec!["ingest".to_string(), "-q".into(), "-o".into(), out.display().to_string()];
        args.extend(inputs());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = coroner_env(&args, &[("RAYON_NUM_THREADS", threads)]);
        assert!(matches!(r.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&r.stderr));
        outputs.push((std::fs::read(&out).unwrap(), r.stderr));
    }
    assert!(outputs[0].0.len() > 1000, "something was ingested");
    for (bytes, stderr) in &outputs[1..] {
        assert!(*bytes == outputs[0].0, "records differ between thread counts");
        assert_eq!(*stderr, outputs[0].1, "the accounting differs between thread counts");
    }
}

#[test]
fn coroner_jsonl_round_trips_to_identical_records() {
    let tmp = tempdir();
    let first = tmp.path().join("first.jsonl");
    let second = tmp.path().join("second.jsonl");
    let mut args = vec!["ingest".to_string(), "-q".into(), "-o".into(), first.display().to_string()];
    args.extend(inputs());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    coroner_env(&args, &[]);
    let r = coroner_env(&["ingest", "-q", "-o", &second.display().to_string(), &first.display().to_string()], &[]);
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    let a = std::fs::read_to_string(&first).unwrap();
    let b = std::fs::read_to_string(&second).unwrap();
    assert!(a.lines().count() >= 5);
    assert!(a == b, "re-ingesting coroner JSONL changed the records");
}

#[test]
fn parquet_output_has_one_row_per_trajectory_with_the_full_record() {
    use polars::prelude::*;
    let tmp = tempdir();
    let pq = tmp.path().join("out.parquet");
    let r = coroner_env(&["ingest", "-q", "-o", &pq.display().to_string(), &root().join("samples/harbor").display().to_string()], &[]);
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    let df = ParquetReader::new(std::fs::File::open(&pq).unwrap()).finish().unwrap();
    assert_eq!(df.height(), 5);
    let oc = df.column("outcome").unwrap().str().unwrap().clone();
    let outcomes: Vec<String> = (0..oc.len()).filter_map(|i| oc.get(i).map(ToString::to_string)).collect();
    assert_eq!(outcomes.iter().filter(|o| *o == "passed").count(), 1);
    let record = df.column("record").unwrap().str().unwrap().get(0).unwrap();
    let t: coroner::model::Trajectory = serde_json::from_str(record).unwrap();
    assert_eq!(t.id, df.column("id").unwrap().str().unwrap().get(0).unwrap());
}
