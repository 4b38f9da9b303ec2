//! `coroner compare`: two arms, a verdict sentence first, then the numbers.

use clap::Args;

use super::report::{ReportFormat, StudyArgs};
use super::{CliError, Done};

/// Compare two arms: pass rates with intervals, the difference with its interval, a verdict
/// (better, worse, or no detectable difference at this n), the flipped tasks and how failure
/// classes moved.
///
/// Paired (McNemar mid-p, Newcombe's interval) when the arms ran the same tasks, unpaired
/// (Fisher, Newcombe's hybrid interval) otherwise. Two runs of the same arm give the measured
/// noise floor.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first arm's name (from the study, `--arm`, or metadata).
    pub a: String,
    /// The second arm's name.
    pub b: String,
    #[command(flatten)]
    pub study: StudyArgs,
    /// Output format (`table` prints text).
    #[arg(long, value_enum, default_value_t)]
    pub format: ReportFormat,
    /// Interval of each arm's pass rate.
    #[arg(long, value_enum, default_value_t, value_name = "METHOD")]
    pub rate_interval: crate::stats::ProportionMethod,
    /// Test of a paired comparison.
    #[arg(long, value_enum, default_value_t, value_name = "METHOD")]
    pub paired_test: crate::stats::McNemarMethod,
    /// Interval of a paired difference.
    #[arg(long, value_enum, default_value_t, value_name = "METHOD")]
    pub paired_interval: crate::stats::PairedDiffMethod,
    /// Test of an unpaired comparison.
    #[arg(long, value_enum, default_value_t, value_name = "METHOD")]
    pub unpaired_test: crate::stats::UnpairedTest,
    /// Interval of an unpaired difference.
    #[arg(long, value_enum, default_value_t, value_name = "METHOD")]
    pub unpaired_interval: crate::stats::UnpairedDiffMethod,
}

pub fn run(a: &CompareArgs) -> Result<Done, CliError> {
    let t = super::report::load_tallies(&a.study, None)?;
    let (Some(x), Some(y)) = (t.arm(&a.a), t.arm(&a.b)) else {
        let names: Vec<&str> = t.arms.iter().map(|x| x.name.as_str()).collect();
        return Err(CliError::usage(format!("failed to find arms `{}` and `{}`", a.a, a.b))
            .with_help(format!("the arms are: {}", names.join(", "))));
    };
    let methods = crate::report::compare::Methods {
        rate: a.rate_interval,
        mcnemar: a.paired_test,
        paired_interval: a.paired_interval,
        unpaired_test: a.unpaired_test,
        unpaired_interval: a.unpaired_interval,
    };
    let c = crate::report::compare::compare_with(x, y, methods);
    let text = match a.format {
        ReportFormat::Table => crate::report::compare::render(&c, false),
        ReportFormat::Markdown => crate::report::compare::render(&c, true),
        ReportFormat::Json => super::output::json_text(&c),
    };
    super::output::print_stdout(&text).map_err(|e| CliError::write("the comparison", e))?;
    Ok(Done::partial_if(t.quarantined > 0))
}
