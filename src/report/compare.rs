//! Two arms compared: paired when they ran the same tasks, unpaired otherwise; the difference
//! with its interval, a verdict a non-statistician can read, the tasks that flipped, and how
//! failure classes moved.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::tally::{ArmTally, TaskTally};
use crate::stats::{
    self, ClassComparison, DEFAULT_CONFIDENCE, Design, Estimate, McNemarMethod, PairedDiffMethod, Proportion, TestResult,
    UnpairedDiffMethod, UnpairedTest,
};

/// The statistical methods of a comparison; the defaults are the ones the README documents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Methods {
    /// Interval of each arm's pass rate.
    pub rate: stats::ProportionMethod,
    /// Test of a paired comparison.
    pub mcnemar: McNemarMethod,
    /// Interval of a paired difference.
    pub paired_interval: PairedDiffMethod,
    /// Test of an unpaired comparison.
    pub unpaired_test: UnpairedTest,
    /// Interval of an unpaired difference.
    pub unpaired_interval: UnpairedDiffMethod,
}

impl Methods {
    fn paired_test_name(self) -> &'static str {
        match self.mcnemar {
            McNemarMethod::MidP => "McNemar mid-p",
            McNemarMethod::Exact => "McNemar exact",
            McNemarMethod::Asymptotic => "McNemar χ²",
            McNemarMethod::AsymptoticCc => "McNemar χ² (continuity-corrected)",
        }
    }

    fn unpaired_test_name(self) -> &'static str {
        match self.unpaired_test {
            UnpairedTest::Fisher => "Fisher exact",
            UnpairedTest::Boschloo => "Boschloo exact",
            UnpairedTest::Barnard => "Barnard exact",
            UnpairedTest::ZPooled => "pooled z",
            UnpairedTest::ChiSquaredYates => "χ² (Yates)",
        }
    }
}

/// What `coroner compare` says.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub paired: bool,
    /// Tasks compared (paired: run by both, without infrastructure failures; unpaired: the
    /// harmonic mean of the two arms' sizes, the equal-arm size with the same variance of the
    /// difference, used for the power figures).
    pub n: u64,
    pub a_rate: Estimate,
    pub b_rate: Estimate,
    pub a_passed: u64,
    pub b_passed: u64,
    pub n_a: u64,
    pub n_b: u64,
    /// `a - b`, with its interval.
    pub difference: Estimate,
    pub test: TestResult,
    pub test_name: String,
    /// The methods the numbers were computed with.
    pub methods: Methods,
    /// The smallest difference this design detects at 80% power.
    pub detectable: Option<f64>,
    pub verdict: String,
    pub verdict_kind: String,
    /// Noise figure of the design: 1σ of a pass rate at this n, in percentage points.
    pub sigma_pp: f64,
    /// The same in tasks: 1σ of the number of tasks passed.
    pub sigma_tasks: f64,
    /// Paired only: tasks only `a` passed, and only `b` passed.
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// Paired only: per-task moves between outcomes (`worked_then_wrong -> passed`), with tasks.
    pub transitions: BTreeMap<String, Vec<String>>,
    pub classes: Vec<ClassComparison>,
    /// Tasks left out of a paired comparison because one arm failed on infrastructure.
    pub excluded_infrastructure: Vec<String>,
    /// Tasks left out of a paired comparison because only one arm was given them.
    pub one_arm_only: Vec<String>,
}

/// Compares arm `a` with arm `b`.
#[must_use]
pub fn compare(a: &ArmTally, b: &ArmTally) -> Comparison {
    compare_with(a, b, Methods::default())
}

/// Compares arm `a` with arm `b` with the given methods. Infrastructure failures and unknown
/// outcomes say nothing about an arm: a task is compared only where some trial of it was
/// evaluated.
#[must_use]
pub fn compare_with(a: &ArmTally, b: &ArmTally, methods: Methods) -> Comparison {
    let (a_name, b_name) = (a.name.as_str(), b.name.as_str());
    fn evaluated(t: &ArmTally) -> BTreeMap<&str, &TaskTally> {
        t.tasks.iter().filter(|(_, x)| x.evaluated > 0).map(|(k, x)| (k.as_str(), x)).collect()
    }
    let (ta, tb) = (evaluated(a), evaluated(b));
    let all_a: BTreeSet<&str> = a.tasks.keys().map(String::as_str).collect();
    let all_b: BTreeSet<&str> = b.tasks.keys().map(String::as_str).collect();
    let shared: BTreeSet<&str> = ta.keys().filter(|k| tb.contains_key(*k)).copied().collect();
    let paired = !shared.is_empty() && shared.len() * 2 >= ta.len().max(tb.len());
    // Tasks both arms were given but one arm never ran (every trial lost to infrastructure).
    let excluded: Vec<String> = all_a.intersection(&all_b).filter(|t| !shared.contains(*t)).map(|t| (*t).to_string()).collect();
    let one_arm_only: Vec<String> = all_a.symmetric_difference(&all_b).map(|t| (*t).to_string()).collect();
    let class_cmp = stats::compare_classes(&a.failures, &b.failures, DEFAULT_CONFIDENCE);
    if paired {
        let mut oa: BTreeMap<String, bool> = BTreeMap::new();
        let mut ob: BTreeMap<String, bool> = BTreeMap::new();
        let mut transitions: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in &shared {
            let (va, vb) = (&ta[t], &tb[t]);
            oa.insert((*t).to_string(), va.evaluated_pass());
            ob.insert((*t).to_string(), vb.evaluated_pass());
            let (la, lb) = (va.evaluated_label(), vb.evaluated_label());
            if la != lb {
                transitions.entry(format!("{la} -> {lb}")).or_default().push((*t).to_string());
            }
        }
        let f = stats::flips(&oa, &ob);
        let table = f.table;
        let n = table.n();
        let test = stats::mcnemar(table, methods.mcnemar);
        let diff = stats::paired_difference(table, DEFAULT_CONFIDENCE, methods.paired_interval);
        let (pa, pb) = (oa.values().filter(|x| **x).count() as u64, ob.values().filter(|x| **x).count() as u64);
        let baseline = Proportion::new(pb, n).rate();
        let mde = stats::min_detectable_difference(Design::paired(n, baseline)).smallest;
        let v = stats::verdict(diff, mde, n, DEFAULT_CONFIDENCE);
        return Comparison {
            a: a_name.into(),
            b: b_name.into(),
            paired: true,
            n,
            a_rate: stats::rate_estimate(Proportion::new(pa, n), DEFAULT_CONFIDENCE, methods.rate),
            b_rate: stats::rate_estimate(Proportion::new(pb, n), DEFAULT_CONFIDENCE, methods.rate),
            a_passed: pa,
            b_passed: pb,
            n_a: n,
            n_b: n,
            difference: diff,
            test,
            test_name: methods.paired_test_name().into(),
            methods,
            detectable: mde,
            verdict: v.sentence,
            verdict_kind: format!("{:?}", v.kind),
            sigma_pp: 100.0 * stats::noise(n, baseline).se_rate,
            sigma_tasks: stats::noise(n, baseline).sd_tasks,
            only_a: f.only_a_passed,
            only_b: f.only_b_passed,
            transitions,
            classes: class_cmp,
            excluded_infrastructure: excluded,
            one_arm_only,
        };
    }
    let count = |t: &ArmTally| (t.groups[0].n, t.evaluated);
    let (ka, na) = count(a);
    let (kb, nb) = count(b);
    let (pa, pb) = (Proportion::new(ka, na), Proportion::new(kb, nb));
    let test = stats::unpaired_test(pa, pb, methods.unpaired_test);
    let diff = stats::unpaired_difference(pa, pb, DEFAULT_CONFIDENCE, methods.unpaired_interval);
    // Unequal arms: 1/na + 1/nb = 2/n gives the equal-arm n with the same variance.
    let n = if na == 0 || nb == 0 { 0 } else { ((2 * na * nb) as f64 / (na + nb) as f64).floor() as u64 };
    let mde = stats::min_detectable_difference(Design::unpaired(n, pb.rate())).smallest;
    let v = stats::verdict(diff, mde, n, DEFAULT_CONFIDENCE);
    Comparison {
        a: a_name.into(),
        b: b_name.into(),
        paired: false,
        n,
        a_rate: stats::rate_estimate(pa, DEFAULT_CONFIDENCE, methods.rate),
        b_rate: stats::rate_estimate(pb, DEFAULT_CONFIDENCE, methods.rate),
        a_passed: ka,
        b_passed: kb,
        n_a: na,
        n_b: nb,
        difference: diff,
        test,
        test_name: methods.unpaired_test_name().into(),
        methods,
        detectable: mde,
        verdict: v.sentence,
        verdict_kind: format!("{:?}", v.kind),
        sigma_pp: 100.0 * stats::noise(n, pb.rate()).se_rate,
        sigma_tasks: stats::noise(n, pb.rate()).sd_tasks,
        only_a: Vec::new(),
        only_b: Vec::new(),
        transitions: BTreeMap::new(),
        classes: class_cmp,
        excluded_infrastructure: Vec::new(),
        one_arm_only: Vec::new(),
    }
}

/// The comparison as text: the verdict sentence first, then the numbers.
#[must_use]
pub fn render(c: &Comparison, markdown: bool) -> String {
    use std::fmt::Write as _;
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    let pp = |x: f64| format!("{:+.1} pp", 100.0 * x);
    // Arm names, task ids and labels come from transcripts: escaped for Markdown here; the
    // terminal text is sanitized on its way out (`cli::output`).
    let esc = |x: &str| if markdown { super::sanitize::markdown_line(x) } else { x.to_string() };
    let list = |xs: &[String]| xs.iter().map(|x| esc(x)).collect::<Vec<_>>().join(", ");
    let (ca, cb) = (esc(&c.a), esc(&c.b));
    let mut out = String::new();
    let b = if markdown { "**" } else { "" };
    let _ = writeln!(out, "{b}{ca} vs {cb}: {}{b}", esc(&c.verdict));
    let _ = writeln!(out);
    let li = if markdown { "- " } else { "  " };
    for (name, passed, n, rate) in [(&ca, c.a_passed, c.n_a, &c.a_rate), (&cb, c.b_passed, c.n_b, &c.b_rate)] {
        let (est, lo, hi) = (pct(rate.estimate), pct(rate.interval.lo), pct(rate.interval.hi));
        let _ = writeln!(out, "{li}{name}: {passed}/{n} passed, {est} [{lo}, {hi}]");
    }
    let _ = writeln!(
        out,
        "{li}difference {} (95% CI {} to {}), {} p = {:.3}, {}",
        pp(c.difference.estimate),
        pp(c.difference.interval.lo),
        pp(c.difference.interval.hi),
        c.test_name,
        c.test.p_value,
        if c.paired {
            format!("paired design on {} tasks", c.n)
        } else if c.n_a == c.n_b {
            format!("unpaired design on {} tasks per arm", c.n_a)
        } else {
            format!("unpaired design on {} and {} tasks (power as for {} per arm)", c.n_a, c.n_b, c.n)
        }
    );
    match c.detectable {
        Some(d) => {
            let _ = writeln!(
                out,
                "{li}smallest difference this design can detect (80% power, α = 0.05): ~{:.0} pp; 1σ of a pass rate here: {:.1} pp ({:.1} tasks)",
                100.0 * d,
                c.sigma_pp,
                c.sigma_tasks
            );
        }
        None => {
            let _ = writeln!(
                out,
                "{li}this design cannot reliably detect any difference; 1σ of a pass rate here: {:.1} pp ({:.1} tasks)",
                c.sigma_pp, c.sigma_tasks
            );
        }
    }
    if c.methods != Methods::default() {
        // Named as the command-line options name them, so the line can be pasted back.
        fn name<E: clap::ValueEnum>(e: &E) -> String {
            e.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
        }
        let m = c.methods;
        let said = [
            ("--rate-interval", name(&m.rate)),
            ("--paired-test", name(&m.mcnemar)),
            ("--paired-interval", name(&m.paired_interval)),
            ("--unpaired-test", name(&m.unpaired_test)),
            ("--unpaired-interval", name(&m.unpaired_interval)),
        ];
        let _ = writeln!(out, "{li}methods: {}", said.map(|(k, v)| format!("{k} {v}")).join(" "));
    }
    if c.paired {
        let _ = writeln!(
            out,
            "{li}flipped tasks: {} passed only in {} ({}), {} only in {} ({})",
            c.only_a.len(),
            ca,
            list(&c.only_a),
            c.only_b.len(),
            cb,
            list(&c.only_b)
        );
        let _ = writeln!(
            out,
            "{li}if these are two runs of the same configuration, those {} flips are the measured noise floor",
            c.only_a.len() + c.only_b.len()
        );
        if !c.excluded_infrastructure.is_empty() {
            let _ = writeln!(out, "{li}left out (infrastructure failure in an arm): {}", list(&c.excluded_infrastructure));
        }
        if !c.one_arm_only.is_empty() {
            let _ = writeln!(out, "{li}left out (run by one arm only): {}", list(&c.one_arm_only));
        }
        if !c.transitions.is_empty() {
            let _ = writeln!(out, "\n{b}Per-task transitions ({ca} → {cb}){b}");
            for (t, tasks) in &c.transitions {
                let _ = writeln!(out, "{li}{}: {} ({})", esc(t), tasks.len(), list(tasks));
            }
        }
    }
    if !c.classes.is_empty() {
        let _ = writeln!(out, "\n{b}Failure classes (share of model failures, difference {ca} − {cb}){b}");
        for k in &c.classes {
            let _ = writeln!(
                out,
                "{li}{}: {} vs {}, {} (95% CI {} to {})",
                esc(&k.class),
                pct(k.a.rate.estimate),
                pct(k.b.rate.estimate),
                pp(k.difference.estimate),
                pp(k.difference.interval.lo),
                pp(k.difference.interval.hi)
            );
        }
    }
    out
}
