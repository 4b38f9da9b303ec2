//! JUnit XML for CI: one `<testcase>` per prediction — a refuted one fails (its message is the
//! claim, its body the data and the escape clause), a retracted one is skipped, a confirmed or
//! inconclusive one passes with its verdict in `<system-out>`. A broken seal is one errored
//! testcase named `seal`. Written by hand; every text goes through [`escape`].

use std::fmt::Write as _;

use super::check::{CheckReport, Status, interval_text};
use super::seal::SealProblem;

/// `s` made safe for XML 1.0 text and attribute values: the five special characters become
/// entities, characters XML forbids (controls other than tab, newline, carriage return; U+FFFE,
/// U+FFFF) become U+FFFD, and in attributes tab and newlines become character references so
/// they survive attribute normalization.
#[must_use]
pub fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' if attribute => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn attr(s: &str) -> String {
    escape(s, true)
}

fn text(s: &str) -> String {
    escape(s, false)
}

const CLASSNAME: &str = "coroner.predictions";

/// The report as a JUnit XML document.
#[must_use]
pub fn junit(r: &CheckReport) -> String {
    let tests = r.predictions.len();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = format!("tests=\"{tests}\" failures=\"{}\" errors=\"0\" skipped=\"{}\"", r.refuted, r.retracted);
    let _ = writeln!(x, "<testsuites name=\"coroner predict check\" {counts}>");
    let _ = writeln!(x, "  <testsuite name=\"{}\" {counts} timestamp=\"{}\">", attr(&r.title), attr(&r.seal.sealed_at));
    let _ = writeln!(x, "    <properties>");
    let mut props: Vec<(&str, String)> = vec![
        ("sealed_at", r.seal.sealed_at.clone()),
        ("coroner_version", r.seal.coroner_version.clone()),
        ("predictions_sha256", r.seal.predictions_sha256.clone()),
        ("rules_sha256", r.seal.rules_sha256.clone()),
        ("late", r.seal.late.to_string()),
        ("alpha", r.alpha.to_string()),
        ("summary", super::render::summary(r)),
    ];
    if let Some(c) = &r.seal.git_commit {
        props.push(("git_commit", c.clone()));
    }
    if let Some(n) = r.seal.sealed_over {
        props.push(("sealed_over", n.to_string()));
    }
    if let Some(e) = &r.seal.earliest {
        props.push(("first_trajectory", e.clone()));
    }
    for (k, v) in props {
        let _ = writeln!(x, "      <property name=\"{k}\" value=\"{}\"/>", attr(&v));
    }
    let _ = writeln!(x, "    </properties>");
    for e in &r.predictions {
        let _ = writeln!(x, "    <testcase name=\"{}\" classname=\"{CLASSNAME}\">", attr(&e.id));
        let mut detail = format!("claim: {}\nverdict: {}", e.claim, e.status.as_str());
        if let Some(o) = &e.observed {
            let _ = write!(detail, "\nobserved: {o}");
        }
        if let Some(i) = e.interval {
            let _ = write!(detail, "\ninterval: {} ({})", interval_text(e.metric, i), e.method.as_deref().unwrap_or_default());
        }
        if !e.exact
            && let (Some(p), Some(h)) = (e.p, e.p_holm)
        {
            let _ = write!(detail, "\np (claim false): {p:.4}, Holm {h:.4}");
        }
        if let Some(n) = &e.note {
            let _ = write!(detail, "\nnote: {n}");
        }
        match e.status {
            Status::Refuted => {
                let _ = writeln!(
                    x,
                    "      <failure message=\"{}\" type=\"refuted\">{}\nescape clause: {}</failure>",
                    attr(&format!("refuted: {}", e.claim)),
                    text(&detail),
                    text(&e.escape_clause)
                );
            }
            Status::Retracted => {
                let note = e.retracted.as_ref().map(|r| format!("retracted at {}: {}", r.at, r.note)).unwrap_or_default();
                let _ = writeln!(x, "      <skipped message=\"{}\"/>", attr(&note));
            }
            Status::Confirmed | Status::Inconclusive => {}
        }
        let _ = writeln!(x, "      <system-out>{}</system-out>", text(&detail));
        let _ = writeln!(x, "    </testcase>");
    }
    let _ = writeln!(x, "  </testsuite>");
    let _ = writeln!(x, "</testsuites>");
    x
}

/// A JUnit document for a check that stopped at the seal: one errored testcase.
#[must_use]
pub fn seal_failure(title: &str, lock: &str, problems: &[SealProblem]) -> String {
    let described: Vec<String> = problems.iter().map(SealProblem::describe).collect();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = "tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\"";
    let _ = writeln!(x, "<testsuites name=\"coroner predict check\" {counts}>");
    let _ = writeln!(x, "  <testsuite name=\"{}\" {counts}>", attr(title));
    let _ = writeln!(x, "    <testcase name=\"seal\" classname=\"{CLASSNAME}\">");
    let _ = writeln!(
        x,
        "      <error message=\"{}\" type=\"seal\">{}</error>",
        attr(&format!("failed to verify the seal {lock}")),
        text(&described.join("\n"))
    );
    let _ = writeln!(x, "    </testcase>");
    let _ = writeln!(x, "  </testsuite>");
    let _ = writeln!(x, "</testsuites>");
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_specials_and_forbidden_characters() {
        assert_eq!(escape("a<b & \"c\" 'd'>", false), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
        assert_eq!(escape("x\u{1}y\u{FFFF}", false), "x\u{FFFD}y\u{FFFD}");
        assert_eq!(escape("l1\nl2\t", true), "l1&#10;l2&#9;");
        assert_eq!(escape("l1\nl2", false), "l1\nl2");
        assert_eq!(escape("]]>", false), "]]&gt;");
    }
}
