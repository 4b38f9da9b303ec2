//! One page per trajectory: who and where it came from, how it ended, its verdict with every
//! evidence item linked to its step, then the steps themselves with the evidence steps marked,
//! long outputs folded, reasoning collapsed, and each call linked to its result and back.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::page::{badge, shell, text_block};
use crate::model::{Evidence, Trajectory, Verdict};
use crate::report::sanitize::html;
use crate::spotcheck::render as show;

fn step_anchor(i: u32) -> String {
    format!("s-{i}")
}

/// Evidence items by the step they point at.
fn by_step(v: &Verdict) -> BTreeMap<u32, Vec<&Evidence>> {
    let mut m: BTreeMap<u32, Vec<&Evidence>> = BTreeMap::new();
    for e in &v.evidence {
        for s in &e.steps {
            m.entry(*s).or_default().push(e);
        }
    }
    m
}

/// Where in its source file an evidence item or step is: the file, its bytes and line.
fn span_text(t: &Trajectory, s: &crate::model::SourceSpan) -> String {
    let file = t.provenance.files.get(s.file as usize).map_or("?", |f| f.path.as_str());
    format!("{file}, bytes {}–{} (line {})", s.offset, s.offset + s.len, s.line)
}

fn verdict_line(v: &Verdict) -> String {
    match &v.primary {
        Some(p) => {
            let others: Vec<String> = v.classes.iter().filter(|c| *c != p).map(|c| badge(c)).collect();
            let mut s = badge(p);
            if !others.is_empty() {
                let _ = write!(s, " <span class=\"also\">also</span> {}", others.join(" "));
            }
            s
        }
        None => badge(v.outcome.as_str()),
    }
}

fn evidence_list(t: &Trajectory, v: &Verdict) -> String {
    if v.evidence.is_empty() {
        return "<p class=\"muted\">No evidence items: the verdict rests on the outcome alone.</p>\n".into();
    }
    let mut s = String::from("<ol class=\"evidence-list\">\n");
    for e in &v.evidence {
        let at = if e.steps.is_empty() {
            "<span class=\"at\">run end</span>".to_string()
        } else {
            let links: Vec<String> = e.steps.iter().map(|i| format!("<a href=\"#{}\">step {i}</a>", step_anchor(*i))).collect();
            format!("<span class=\"at\">{}</span>", links.join(", "))
        };
        let _ = write!(s, "<li>{at} <code>{}</code> → {} <q>{}</q>", html(&e.rule), badge(&e.supports), html(&e.excerpt));
        if let Some(d) = &e.detail {
            let _ = write!(s, " <span class=\"detail\">{}</span>", html(d));
        }
        if let Some(sp) = &e.source_span {
            let _ = write!(s, " <span class=\"src\">{}</span>", html(&span_text(t, sp)));
        }
        s.push_str("</li>\n");
    }
    s.push_str("</ol>\n");
    s
}

/// Where each call's results are, so a call can link forward to them.
fn results_of(t: &Trajectory) -> BTreeMap<(u32, u32), Vec<(u32, u32)>> {
    let mut m: BTreeMap<(u32, u32), Vec<(u32, u32)>> = BTreeMap::new();
    for s in &t.steps {
        for (j, r) in s.tool_results.iter().enumerate() {
            if let Some(c) = r.call {
                m.entry((c.step, c.call)).or_default().push((s.index, j as u32));
            }
        }
    }
    m
}

fn step_html(
    t: &Trajectory,
    st: &crate::model::Step,
    ev: Option<&Vec<&Evidence>>,
    results: &BTreeMap<(u32, u32), Vec<(u32, u32)>>,
) -> String {
    let i = st.index;
    let role = show::role(st.role);
    let mut s = String::new();
    let class = if ev.is_some() { " evidence" } else { "" };
    let _ = write!(s, "<article class=\"step role-{role}{class}\" id=\"{}\">\n<header>", step_anchor(i));
    let _ = write!(s, "<a class=\"idx\" href=\"#{}\">#{i}</a> <span class=\"role\">{role}</span>", step_anchor(i));
    if let Some(a) = &st.agent {
        let _ = write!(s, " <span class=\"agent\">{}</span>", html(a));
    }
    if let Some(ts) = &st.timestamp {
        let _ = write!(s, " <span class=\"time\">{}</span>", html(ts));
    }
    if let Some(tk) = &st.tokens {
        let n = tk.prompt.unwrap_or(0) + tk.completion.unwrap_or(0);
        if n > 0 {
            let _ = write!(s, " <span class=\"tok\">{n} tokens</span>");
        }
    }
    if let Some(sp) = &st.source_span {
        let _ = write!(s, " <span class=\"src\">line {}</span>", sp.line);
    }
    if let Some(ev) = ev {
        let mut marks: Vec<String> = ev.iter().map(|e| format!("{} → {}", e.rule, e.supports)).collect();
        marks.dedup();
        let _ = write!(s, " <span class=\"mark\">evidence: {}</span>", html(&marks.join(", ")));
    }
    s.push_str("</header>\n");
    if let Some(f) = &st.format_error {
        let _ = writeln!(s, "<p class=\"format-error\">unusable reply: {}</p>", html(f));
    }
    if let Some(summary) = show::reasoning_summary(st) {
        let text = st.reasoning.as_ref().and_then(|r| r.text.as_deref()).unwrap_or("");
        let _ = writeln!(s, "<details class=\"reasoning\"><summary>{}</summary><pre>{}</pre></details>", html(&summary), html(text));
    }
    s.push_str(&text_block(&st.text, "text"));
    for (j, c) in st.tool_calls.iter().enumerate() {
        let j = j as u32;
        let _ = write!(s, "<div class=\"call\" id=\"c-{i}-{j}\"><div class=\"head\">{}", html(&show::call_label(c)));
        match results.get(&(i, j)) {
            Some(rs) => {
                for (rs_step, rs_idx) in rs {
                    let _ = write!(s, " <a class=\"to-result\" href=\"#r-{rs_step}-{rs_idx}\">→ result in step {rs_step}</a>");
                }
            }
            None => s.push_str(" <span class=\"muted\">no result</span>"),
        }
        s.push_str("</div>\n");
        s.push_str(&text_block(&show::arguments(c, true), "args"));
        s.push_str("</div>\n");
    }
    for (j, r) in st.tool_results.iter().enumerate() {
        let err = if r.is_error || r.exit_code.is_some_and(|c| c != 0) { " error" } else { "" };
        let _ = write!(s, "<div class=\"result{err}\" id=\"r-{i}-{j}\"><div class=\"head\">{}", html(&show::result_label(t, i, r)));
        if let Some(c) = r.call {
            let _ = write!(s, " <a class=\"to-call\" href=\"#c-{}-{}\">← the call</a>", c.step, c.call);
        }
        s.push_str("</div>\n");
        s.push_str(&text_block(&r.output, "out"));
        s.push_str("</div>\n");
    }
    s.push_str("</article>\n");
    s
}

/// The page of one trajectory; `arm` is the arm it was read for.
#[must_use]
pub fn page(arm: &str, t: &Trajectory, v: &Verdict) -> String {
    let ev = by_step(v);
    let results = results_of(t);
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<p class=\"crumbs\"><a href=\"../index.html\">overview</a> › <a href=\"../{}\">{}</a> › <a href=\"../{}\">{}</a></p>",
        super::lists::arm_href(arm),
        html(arm),
        super::task_href(&v.task_id),
        html(&v.task_id)
    );
    let _ = writeln!(b, "<h1>{} <span class=\"sub\">trial {} · {}</span></h1>", html(&v.task_id), v.trial, html(arm));
    let _ = writeln!(b, "<p class=\"verdict\">{}</p>", verdict_line(v));
    b.push_str("<table class=\"facts\">\n");
    let header = show::header(t, v, &show::ShowOptions::default());
    for (k, val) in header.iter().filter(|(k, _)| *k != "evidence") {
        let _ = writeln!(b, "<tr><th>{k}</th><td>{}</td></tr>", html(val));
    }
    let _ = writeln!(b, "<tr><th>steps</th><td>{} ({} tool calls)</td></tr>", t.steps.len(), v.mechanics.tool_calls);
    b.push_str("</table>\n");
    let _ = writeln!(b, "<section id=\"evidence\"><h2>Evidence</h2>\n{}</section>", evidence_list(t, v));
    let _ = writeln!(
        b,
        "<section id=\"steps\"><h2>Steps <span class=\"sub\">{} steps, numbered from 0</span></h2>\n\
         <div class=\"toolbar\"><button type=\"button\" id=\"only-evidence\">evidence steps only</button> \
         <button type=\"button\" id=\"expand-all\">expand all</button> <button type=\"button\" id=\"collapse-all\">collapse all</button> \
         <button type=\"button\" id=\"next-evidence\">next evidence ↓</button></div>",
        t.steps.len()
    );
    for st in &t.steps {
        b.push_str(&step_html(t, st, ev.get(&st.index), &results));
    }
    b.push_str("</section>\n");
    shell(&format!("{} · {}", v.task_id, arm), 1, &b)
}

/// The start of `text` on one line (runs of whitespace become one space), at least `chars`
/// characters when the text has them; only as much of the text is read as that needs.
fn first_words(text: &str, chars: usize) -> String {
    let (mut out, mut n) = (String::new(), 0);
    for w in text.split_whitespace() {
        if n >= chars {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
            n += 1;
        }
        out.push_str(w);
        n += w.chars().count();
    }
    out
}

/// One line of HTML per step for the task page's side-by-side view: role, the calls (name and
/// the start of the command) or the start of the text, and the evidence mark. No newline
/// inside a line, so the lines are the file's lines.
#[must_use]
pub fn step_lines(t: &Trajectory, v: &Verdict) -> String {
    const CHARS: usize = 140;
    let ev = by_step(v);
    let mut out = String::new();
    for st in &t.steps {
        let summary = if st.tool_calls.is_empty() {
            let text = if st.text.trim().is_empty() { st.tool_results.first().map_or("", |r| r.output.as_str()) } else { st.text.as_str() };
            first_words(text, CHARS + 1)
        } else {
            st.tool_calls
                .iter()
                .map(|c| {
                    let arg = match &c.arguments {
                        serde_json::Value::Object(m) => m.values().next().map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string)),
                        _ => c.raw_arguments.clone(),
                    };
                    format!("{} {}", c.name, first_words(&arg.unwrap_or_default(), CHARS + 1))
                })
                .collect::<Vec<_>>()
                .join(" ; ")
        };
        let short: String = summary.chars().take(CHARS).collect();
        let more = if summary.chars().count() > CHARS { "…" } else { "" };
        let mark = if ev.contains_key(&st.index) { " evidence" } else { "" };
        let _ = writeln!(
            out,
            "<span class=\"sl role-{}{mark}\"><span class=\"role\">{}</span> {}{more}</span>",
            show::role(st.role),
            show::role(st.role),
            html(&short).replace('\n', " ")
        );
    }
    out
}
