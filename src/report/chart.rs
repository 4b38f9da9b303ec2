//! Charts with plotters, as SVG and PNG: failure modes per arm (stacked bars), pass rate per
//! arm with interval whiskers, the per-task outcome heatmap, and step counts per arm.
//!
//! Labels render from a bundled font (DejaVu Sans), so charts look the same on machines
//! without system fonts, and the same inputs give the same bytes.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::tables::Report;

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        // `register_font` fails only on a malformed font; the bundled one is not.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

/// The colour of an outcome or class, the same in every chart.
#[must_use]
pub fn color(label: &str) -> RGBColor {
    match label {
        "passed" => RGBColor(46, 139, 87),
        "infrastructure" => RGBColor(150, 150, 150),
        "budget_exhausted" => RGBColor(230, 145, 56),
        "hallucinated_tool" => RGBColor(148, 103, 189),
        "plan_without_execution" => RGBColor(140, 86, 75),
        "early_resignation" => RGBColor(227, 119, 194),
        "worked_then_wrong" => RGBColor(214, 39, 40),
        "unclassified" => RGBColor(188, 189, 34),
        "-" => RGBColor(255, 255, 255),
        _ => RGBColor(210, 210, 210),
    }
}

/// The charts coroner draws: (file stem, size).
pub const CHARTS: &[(&str, (u32, u32))] =
    &[("pass_rate", (800, 500)), ("failure_modes", (900, 560)), ("per_task", (900, 0)), ("steps", (800, 500))];

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn text_style(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK)
}

/// Text from transcripts (arm names, task ids) as a chart shows it: controls made visible, since
/// they are not even legal in the SVG's XML (plotters escapes the markup).
fn label(s: &str) -> String {
    super::sanitize::terminal(s).into_owned()
}

/// A chart with one category per arm on x (labelled by arm name) and a linear y axis.
fn arm_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    arms: &'a [String],
    top: f64,
    y_desc: &str,
) -> Result<
    ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>,
    Box<dyn std::error::Error>,
>
where
    DB::ErrorType: 'static,
{
    let n = arms.len();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, text_style(22))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5).max(0.5), 0f64..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n.max(1))
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 { arms.get(i as usize).map(|a| label(a)).unwrap_or_default() } else { String::new() }
        })
        .y_label_formatter(&|y| format!("{y:.0}"))
        .y_desc(y_desc)
        .x_desc("arm")
        .label_style(text_style(14))
        .axis_desc_style(text_style(16))
        .draw()?;
    Ok(chart)
}

fn pass_rate<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let names: Vec<String> = r.arms.iter().map(|a| a.arm.clone()).collect();
    let mut chart = arm_chart(root, "Pass rate per arm (pass@1, 95% interval)", &names, 100.0, "pass@1 (%)")?;
    for (i, a) in r.arms.iter().enumerate() {
        let x = i as f64;
        let (lo, mid, hi) = (100.0 * a.pass_at_1.interval.lo, 100.0 * a.pass_at_1.estimate, 100.0 * a.pass_at_1.interval.hi);
        chart.draw_series(std::iter::once(PathElement::new(vec![(x, lo), (x, hi)], BLACK.stroke_width(2))))?;
        chart.draw_series([lo, hi].into_iter().map(|y| PathElement::new(vec![(x - 0.08, y), (x + 0.08, y)], BLACK.stroke_width(2))))?;
        chart.draw_series(std::iter::once(Circle::new((x, mid), 7, color("passed").filled())))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("{}/{} = {mid:.1}%", a.passed, a.evaluated),
            (x + 0.1, mid),
            text_style(14),
        )))?;
    }
    root.present()?;
    Ok(())
}

fn failure_modes<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let n = r.arms.len();
    let totals: Vec<u64> = (0..n).map(|i| r.classes.iter().map(|c| c.per_arm[i].0).sum()).collect();
    let top = (*totals.iter().max().unwrap_or(&1)).max(1) as f64 * 1.1;
    let (plot, legend) = root.split_horizontally(640);
    let names: Vec<String> = r.arms.iter().map(|a| a.arm.clone()).collect();
    let mut chart = arm_chart(&plot, "Failure modes per arm (count of failed runs)", &names, top, "failed runs")?;
    for i in 0..n {
        let mut base = 0.0;
        for c in &r.classes {
            let v = c.per_arm[i].0 as f64;
            if v > 0.0 {
                let x = i as f64;
                chart.draw_series(std::iter::once(Rectangle::new([(x - 0.3, base), (x + 0.3, base + v)], color(&c.class).filled())))?;
                chart.draw_series(std::iter::once(Text::new(format!("{}", c.per_arm[i].0), (x + 0.32, base + v / 2.0), text_style(13))))?;
                base += v;
            }
        }
    }
    legend.fill(&WHITE)?;
    for (k, c) in r.classes.iter().enumerate() {
        let y = 80 + 28 * k as i32;
        legend.draw(&Rectangle::new([(10, y), (28, y + 18)], color(&c.class).filled()))?;
        legend.draw(&Text::new(c.class.replace('_', " "), (36, y + 2), text_style(15)))?;
    }
    root.present()?;
    Ok(())
}

/// Most rows the per-task heatmap draws; a person cannot read more, and the bitmap of 10,000
/// rows would take half a gigabyte.
pub const MAX_TASK_ROWS: usize = 300;

/// The tasks the heatmap shows: all of them when they fit, else those where the arms differ
/// first (the ones worth a look), then the rest, in task order, up to [`MAX_TASK_ROWS`].
fn shown_tasks(r: &Report) -> Vec<&super::tables::TaskRow> {
    if r.tasks.len() <= MAX_TASK_ROWS {
        return r.tasks.iter().collect();
    }
    let differs = |t: &&super::tables::TaskRow| t.per_arm.windows(2).any(|w| w[0].2 != w[1].2);
    let mut v: Vec<&super::tables::TaskRow> =
        r.tasks.iter().filter(differs).chain(r.tasks.iter().filter(|t| !differs(t))).take(MAX_TASK_ROWS).collect();
    v.sort_by(|a, b| a.task.cmp(&b.task));
    v
}

fn per_task<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let tasks = shown_tasks(r);
    let title = if tasks.len() < r.tasks.len() {
        format!("Per-task outcome ({} of {} tasks, those where arms differ first)", tasks.len(), r.tasks.len())
    } else {
        "Per-task outcome (tasks × arms)".to_string()
    };
    root.draw(&Text::new(title, (20, 12), text_style(22)))?;
    let left = 300;
    let col = ((560 - 20) / r.arms.len().max(1)).min(200) as i32;
    let row = 18;
    for (j, a) in r.arms.iter().enumerate() {
        root.draw(&Text::new(label(&a.arm), (left + col * j as i32 + 4, 50), text_style(14)))?;
    }
    for (i, t) in tasks.iter().enumerate() {
        let y = 75 + row * i as i32;
        root.draw(&Text::new(label(&t.task.chars().take(40).collect::<String>()), (10, y + 2), text_style(13)))?;
        for (j, (_, _, label)) in t.per_arm.iter().enumerate() {
            let x = left + col * j as i32;
            root.draw(&Rectangle::new([(x, y), (x + col - 4, y + row - 3)], color(label).filled()))?;
        }
    }
    let labels = [
        "passed",
        "infrastructure",
        "budget_exhausted",
        "hallucinated_tool",
        "plan_without_execution",
        "early_resignation",
        "worked_then_wrong",
        "unclassified",
    ];
    for (k, l) in labels.iter().enumerate() {
        let y = 80 + 26 * k as i32;
        let x = left + col * r.arms.len() as i32 + 20;
        root.draw(&Rectangle::new([(x, y), (x + 16, y + 16)], color(l).filled()))?;
        root.draw(&Text::new(l.replace('_', " "), (x + 22, y + 1), text_style(14)))?;
    }
    root.present()?;
    Ok(())
}

fn steps<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let top = r.arms.iter().map(|a| a.steps.max()).fold(1.0, f64::max) * 1.1;
    let names: Vec<String> = r.arms.iter().map(|a| a.arm.clone()).collect();
    let mut chart = arm_chart(root, "Steps per trajectory, per arm", &names, top, "steps")?;
    for (i, a) in r.arms.iter().enumerate() {
        if a.steps.is_empty() {
            continue;
        }
        let [min, q1, med, q3, max] = [0.0, 0.25, 0.5, 0.75, 1.0].map(|p| a.steps.quantile(p));
        let x = i as f64;
        let blue = RGBColor(31, 119, 180);
        chart.draw_series(std::iter::once(Rectangle::new([(x - 0.2, q1), (x + 0.2, q3)], blue.mix(0.35).filled())))?;
        chart.draw_series(std::iter::once(Rectangle::new([(x - 0.2, q1), (x + 0.2, q3)], blue.stroke_width(2))))?;
        chart.draw_series(std::iter::once(PathElement::new(vec![(x - 0.2, med), (x + 0.2, med)], BLACK.stroke_width(3))))?;
        chart
            .draw_series([(min, q1), (q3, max)].into_iter().map(|(a, b)| PathElement::new(vec![(x, a), (x, b)], BLACK.stroke_width(1))))?;
        // One dot per distinct value: dots of equal values would be drawn on one another.
        chart.draw_series(a.steps.0.keys().map(|s| Circle::new((x + 0.3, f64::from(*s)), 2, blue.filled())))?;
        chart.draw_series(std::iter::once(Text::new(format!("median {med:.0}"), (x + 0.22, med), text_style(13))))?;
    }
    root.present()?;
    Ok(())
}

fn size_of(name: &str, r: &Report) -> (u32, u32) {
    let (_, (w, h)) = CHARTS.iter().find(|(n, _)| *n == name).copied().unwrap_or(("", (800, 500)));
    if h == 0 { (w, 120 + 18 * r.tasks.len().min(MAX_TASK_ROWS) as u32) } else { (w, h) }
}

fn draw_on<DB: DrawingBackend>(name: &str, root: &DrawingArea<DB, Shift>, r: &Report) -> DrawResult
where
    DB::ErrorType: 'static,
{
    match name {
        "pass_rate" => pass_rate(root, r),
        "failure_modes" => failure_modes(root, r),
        "per_task" => per_task(root, r),
        _ => steps(root, r),
    }
}

/// Draws one chart as SVG text.
///
/// # Errors
/// A drawing failure.
pub fn svg(name: &str, r: &Report) -> Result<String, Box<dyn std::error::Error>> {
    register_font();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, size_of(name, r)).into_drawing_area();
        draw_on(name, &root, r)?;
    }
    Ok(s)
}

/// Draws one chart as a PNG file.
///
/// # Errors
/// A drawing or encoding failure.
pub fn png(name: &str, r: &Report, path: &Path) -> DrawResult {
    register_font();
    let root = BitMapBackend::new(path, size_of(name, r)).into_drawing_area();
    draw_on(name, &root, r)
}
