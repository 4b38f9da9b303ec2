//! The frame every page shares: the Content-Security-Policy, the stylesheet and script, the
//! navigation; and the label colours, generated once from the charts' palette so a class has
//! one colour everywhere.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::report::sanitize::html;
use crate::study::StudyRun;

pub const CSS: &str = include_str!("assets/site.css");
pub const JS: &str = include_str!("assets/site.js");

/// Only the site's own files: no remote load, no inline script or style, no inline event
/// handler (they are inline script), no form posting anywhere, no plugin, no base rewriting.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   base-uri 'none'; form-action 'none'";

/// A whole page. `title` is untrusted; `body` is HTML built by this module's callers, every
/// untrusted piece already escaped; `depth` is how many directories below the site root the
/// page lives (links to the root are relative, so the site opens from the file system).
#[must_use]
pub fn shell(title: &str, depth: usize, body: &str) -> String {
    let root = "../".repeat(depth);
    let mut s = String::with_capacity(body.len() + 1024);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} · coroner</title>\n\
         <link rel=\"stylesheet\" href=\"{root}assets/site.css\">\n\
         <link rel=\"stylesheet\" href=\"{root}assets/labels.css\">\n\
         </head>\n<body>\n<nav class=\"top\"><a class=\"brand\" href=\"{root}index.html\">coroner</a> \
         <a href=\"{root}index.html\">overview</a> <a href=\"{root}search.html\">search</a></nav>\n<main>\n",
        html(title)
    );
    s.push_str(body);
    let _ = write!(s, "</main>\n<script src=\"{root}assets/site.js\"></script>\n</body>\n</html>\n");
    s
}

/// The CSS class of an outcome or class label (`l-passed`, `l-worked-then-wrong-…`).
#[must_use]
pub fn label_class(label: &str) -> String {
    format!("l-{}", super::slug(label))
}

/// A label as a coloured badge.
#[must_use]
pub fn badge(label: &str) -> String {
    format!("<span class=\"badge {}\">{}</span>", label_class(label), html(label))
}

/// Background colours of every label the study uses (the taxonomy may add classes), from
/// the charts' palette.
#[must_use]
pub fn label_css(run: &StudyRun) -> String {
    let mut labels: BTreeSet<String> = ["passed", "failed", "unknown", "-"].iter().map(ToString::to_string).collect();
    for v in run.arms.iter().flat_map(|a| &a.verdicts) {
        labels.extend(v.classes.iter().cloned());
        labels.extend(v.primary.iter().cloned());
    }
    let mut s = String::new();
    for l in &labels {
        let c = crate::report::chart::color(l);
        // Dark backgrounds take white text.
        let luma = 0.299 * f64::from(c.0) + 0.587 * f64::from(c.1) + 0.114 * f64::from(c.2);
        let fg = if luma < 150.0 { "#fff" } else { "#111" };
        let _ = writeln!(s, ".{} {{ background: rgb({}, {}, {}); color: {fg}; }}", label_class(l), c.0, c.1, c.2);
    }
    s
}

/// A `<pre>` of untrusted text, folded into `<details>` when long: the first line shows, the
/// rest opens on a click. Text beyond `MAX_CHARS` is cut with a count, so one giant tool output
/// cannot make a page unopenable; the source span says where the whole text is.
#[must_use]
pub fn text_block(text: &str, class: &str) -> String {
    const FOLD_CHARS: usize = 1200;
    const FOLD_LINES: usize = 16;
    const MAX_CHARS: usize = 100_000;
    if text.is_empty() {
        return String::new();
    }
    let total = text.chars().count();
    let shown = if total > MAX_CHARS {
        let end = text.char_indices().nth(MAX_CHARS).map_or(text.len(), |(i, _)| i);
        format!("{}\n… {} more characters not shown (see the source file)", &text[..end], total - MAX_CHARS)
    } else {
        text.to_string()
    };
    let lines = text.lines().count();
    if total <= FOLD_CHARS && lines <= FOLD_LINES {
        return format!("<pre class=\"{class}\">{}</pre>\n", html(&shown));
    }
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let first: String = first.chars().take(160).collect();
    format!(
        "<details class=\"fold {class}\"><summary><span class=\"first\">{}</span> <span class=\"size\">{lines} lines, {total} chars</span></summary><pre>{}</pre></details>\n",
        html(&first),
        html(&shown)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_carries_the_policy_and_escapes_the_title() {
        let p = shell("<img src=x onerror=alert(1)>", 1, "<p>body</p>");
        assert!(p.contains("Content-Security-Policy"));
        assert!(p.contains("script-src 'self'"));
        assert!(p.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(p.contains("href=\"../assets/site.css\""));
    }

    #[test]
    fn long_text_folds_and_giant_text_is_cut() {
        assert!(text_block("short", "out").starts_with("<pre"));
        let long = "line\n".repeat(40);
        assert!(text_block(&long, "out").starts_with("<details"));
        let giant = "x".repeat(250_000);
        let b = text_block(&giant, "out");
        assert!(b.len() < 110_000 && b.contains("150000 more characters"), "{}", b.len());
    }
}
