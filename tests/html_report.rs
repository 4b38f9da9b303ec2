//! The HTML report: complete (a page per trajectory and task, every link resolves), identical
//! for any thread count, inert on a hostile transcript, and driven in a real headless Chromium
//! where one is installed (`.ci/run` installs it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;

use crate::common::{coroner_env, root, tempdir};

/// Writes the site of `inputs` into `out` (run from the project root, so paths are stable).
fn site(inputs: &[&str], out: &Path, threads: &str) {
    let mut args = vec!["report"];
    args.extend_from_slice(inputs);
    let out_s = out.display().to_string();
    args.extend(["--html", out_s.as_str(), "-q"]);
    let mut c = Command::new(env!("CARGO_BIN_EXE_coroner"));
    c.current_dir(root()).args(&args).env("RAYON_NUM_THREADS", threads);
    let o = c.output().expect("coroner runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("wrote the HTML report"));
}

/// Every file of the site, by path relative to its root.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::common::files_under(dir)
}

fn html_pages(all: &BTreeMap<String, Vec<u8>>) -> Vec<(&String, String)> {
    all.iter().filter(|(p, _)| p.ends_with(".html")).map(|(p, b)| (p, String::from_utf8(b.clone()).expect("UTF-8 page"))).collect()
}

/// Trajectories in the sample study, from the report's own JSON.
fn sample_trials() -> u64 {
    let o = coroner_env(&["report", root().join("samples/study/study.toml").to_str().unwrap(), "--format", "json", "-q"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["arms"].as_array().unwrap().iter().map(|a| a["trials"].as_u64().unwrap()).sum()
}

#[test]
fn every_trajectory_has_a_page_and_every_link_resolves() {
    let tmp = tempdir();
    let out = tmp.path().join("site");
    site(&["samples/study/study.toml"], &out, "2");
    let all = files(&out);
    assert!(!all.keys().any(|k| k.starts_with(".parts")), "the parts are removed");
    let trials = sample_trials();
    assert_eq!(all.keys().filter(|k| k.starts_with("t/")).count() as u64, trials, "one page per trajectory");
    assert!(all.keys().filter(|k| k.starts_with("task/")).count() >= 34, "a page per task");
    let href = Regex::new(r#"(?:href|src)="([^"]*)""#).unwrap();
    let ids = Regex::new(r#" id="([^"]+)""#).unwrap();
    let pages = html_pages(&all);
    let anchors: BTreeMap<&str, Vec<String>> =
        pages.iter().map(|(p, text)| (p.as_str(), ids.captures_iter(text).map(|c| c[1].to_string()).collect())).collect();
    let mut checked = 0;
    for (page, text) in &pages {
        assert!(text.contains("http-equiv=\"Content-Security-Policy\""), "{page} carries the policy");
        assert!(text.contains("script-src 'self'"), "{page}");
        let base = Path::new(page.as_str()).parent().unwrap_or(Path::new(""));
        for c in href.captures_iter(text) {
            let link = &c[1];
            assert!(!link.contains("://") && !link.starts_with("//"), "{page} links off the site: {link}");
            let (path, frag) = link.split_once('#').map_or((link, None), |(p, f)| (p, Some(f)));
            let path = path.split('?').next().unwrap();
            let target = if path.is_empty() { PathBuf::from(page.as_str()) } else { normalize(&base.join(path)) };
            let key = target.display().to_string();
            assert!(all.contains_key(&key), "{page} links to {link}, which is not in the site");
            if let Some(f) = frag {
                assert!(anchors.get(key.as_str()).is_some_and(|a| a.iter().any(|i| i == f)), "{page} links to #{f} missing in {key}");
            }
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked} links checked");
    // The arms' and failure modes' counts open lists of that many runs (a mechanics cell may be
    // a sum or a peak, linked to the runs behind it).
    let index = &pages.iter().find(|(p, _)| p.as_str() == "index.html").unwrap().1;
    let index = &index[index.find("id=\"arms\"").unwrap()..index.find("id=\"mechanics\"").unwrap()];
    let count = Regex::new(r#"<a class="count" href="(l/[^"]+)">(\d+)"#).unwrap();
    let mut lists = 0;
    for c in count.captures_iter(index) {
        let list = String::from_utf8(all[&c[1]].clone()).unwrap();
        let rows = list.matches("<tr><td><a href=\"../t/").count();
        assert_eq!(rows.to_string(), &c[2], "{} holds what its count says", &c[1]);
        lists += 1;
    }
    assert!(lists >= 8, "{lists} counts checked");
}

/// `a/../b` → `b`, without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn the_site_is_byte_identical_for_any_thread_count() {
    let tmp = tempdir();
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    site(&["samples/study/study.toml"], &one, "1");
    site(&["samples/study/study.toml"], &two, "2");
    let (a, b) = (files(&one), files(&two));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs between 1 and 2 threads");
    }
}

#[test]
fn a_hostile_transcript_renders_as_text() {
    let tmp = tempdir();
    let out = tmp.path().join("site");
    site(&["samples/hostile-html"], &out, "1");
    let all = files(&out);
    let tag = Regex::new(r#"<([a-zA-Z][a-zA-Z0-9]*)((?:\s+[^\s=>]+(?:=(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*/?>"#).unwrap();
    let attr = Regex::new(r#"\s([^\s=>]+)(?:=("[^"]*"|'[^']*'|[^\s>]+))?"#).unwrap();
    let mut shown = 0;
    for (page, text) in html_pages(&all) {
        for t in tag.captures_iter(&text) {
            let name = t[1].to_ascii_lowercase();
            // SVG charts and the page's own elements; a transcript's tag would be one of these or
            // an unknown one, and its attributes would show below.
            assert!(name != "img" && name != "iframe" && name != "object" && name != "embed", "{page}: <{name}> element");
            if name == "script" {
                let a = &t[2];
                assert!(a.contains("assets/site.js") || a.contains("application/json"), "{page}: a script that is not the site's: {a}");
            }
            for a in attr.captures_iter(&t[2]) {
                let (k, v) = (a[1].to_ascii_lowercase(), a.get(2).map_or("", |m| m.as_str()).to_ascii_lowercase());
                assert!(!k.starts_with("on"), "{page}: event handler attribute {k} on <{name}>");
                assert!(!v.trim_matches(['"', '\'']).trim_start().starts_with("javascript:"), "{page}: javascript: URL in {k}");
                assert!(
                    [
                        "class",
                        "id",
                        "href",
                        "src",
                        "type",
                        "lang",
                        "charset",
                        "http-equiv",
                        "content",
                        "name",
                        "rel",
                        "placeholder",
                        "autofocus"
                    ]
                    .contains(&k.as_str())
                        || name == "svg"
                        || ["rect", "text", "line", "polyline", "circle", "path", "g", "polygon"].contains(&name.as_str()),
                    "{page}: unexpected attribute {k} on <{name}>"
                );
            }
        }
        assert!(!text.contains('\u{1b}'), "{page}: a raw escape character");
        assert!(!text.contains("<script>window.__pwned"), "{page}: the hostile script is markup");
        if text.contains("&lt;script&gt;window.__pwned") || text.contains("\\u003cscript\\u003ewindow.__pwned") {
            shown += 1;
        }
    }
    assert!(shown >= 4, "the hostile text is shown, escaped, on the trajectory, task, list and search pages ({shown})");
}

/// The browser test (tests/browser/site.test.mjs) in Debian's Chromium with playwright-core:
/// click a failure-mode count, open a run, follow evidence to its step, read a task page, search,
/// and open the hostile site with no script of it running. Screenshots go to
/// `target/browser-screenshots/`. Skipped, visibly, without Chromium or `npm ci` in tests/browser.
#[test]
fn the_report_works_in_a_real_browser() {
    let chromium = std::env::var("CORONER_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let browser_dir = root().join("tests/browser");
    if !Path::new(&chromium).exists() || !browser_dir.join("node_modules/playwright-core").exists() {
        eprintln!("SKIPPED: the browser test needs Chromium at {chromium} and `npm ci` in tests/browser (.ci/run installs both)");
        return;
    }
    let tmp = tempdir();
    let (sample, hostile) = (tmp.path().join("sample"), tmp.path().join("hostile"));
    site(&["samples/study/study.toml"], &sample, "2");
    site(&["samples/hostile-html"], &hostile, "2");
    let shots = root().join("target/browser-screenshots");
    let o = Command::new("node")
        .current_dir(&browser_dir)
        .arg("site.test.mjs")
        .args([&sample, &hostile, &shots])
        .env("CORONER_CHROMIUM", &chromium)
        .output()
        .expect("node runs");
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "the browser test failed:\n{out}");
    assert!(out.contains("browser checks passed"), "{out}");
    assert!(shots.join("trajectory.png").exists());
}
