//! What each command does, from parsed options to files on disk and a verdict: an
//! experiment's command runs through its entry of the table ([`crate::table::Runner`]:
//! validate, open a session, measure, write its JSON with the derived numbers and trace
//! checks, its CSV, its table, charts and report); `run-all` runs them all in order in
//! one session ([`crate::session::Session`]) and writes `summary.json` and the report,
//! rendered from memory; `report` and `compare` render from results folders with no GPU.
//! Only a wrong answer fails a run: a trace that still fails its checks after its
//! retraces is marked disturbed (fatal with `--strict`). A signal stops a run between
//! measurements; what was measured is written and marked incomplete.
use std::path::Path;

use streamlab_results::compare;
use streamlab_results::derived::summary::RunStatus;
use streamlab_results::report::fit::Width;
use streamlab_results::report::{self, ReportError};
use streamlab_results::run::{self as results, SavedRun};
use streamlab_results::saved::files;

use crate::cli::{Command, Parsed};
use crate::error::AppError;
use crate::options::{KernelOptions, RunOptions};
use crate::progress::note;
use crate::runtime::Gpu;
use crate::session::{Session, width};
use crate::stop;
use crate::table::{ALL, Outcome};

/// Run the parsed command.
pub fn run(parsed: Parsed) -> Result<(), AppError> {
    let cli = match parsed {
        Parsed::Experiment { runner, matches } => return runner.start(&matches),
        Parsed::Other(cli) => cli,
    };
    match &cli.command {
        Command::DeviceInfo { device } => {
            let gpu = Gpu::open(*device)?;
            print!(
                "{}",
                Width::TERMINAL.lines(&report::provenance::device(gpu.info()))
            );
            Ok(())
        }
        Command::Report {
            dir,
            from,
            out,
            quiet,
            wide,
        } => {
            let from = dir
                .as_deref()
                .or(from.as_deref())
                .expect("clap requires DIR or --from");
            let printed = (!quiet).then_some(width(*wide));
            render(from, out.as_deref().unwrap_or(from), printed)
        }
        Command::Compare {
            a,
            b,
            out,
            min_change,
            fail_on,
        } => {
            let (written, comparison) = compare::write(a, b, out.as_deref(), min_change.0)?;
            print!("{}", compare::terminal::text(&comparison));
            println!("comparison: {}", written.join(files::REPORT_HTML).display());
            match fail_on {
                Some(fail) if comparison.fails(*fail) => Err(AppError::Changed(format!(
                    "a row changed as --fail-on {} names (exit code 3)",
                    format!("{fail:?}").to_lowercase()
                ))),
                _ => Ok(()),
            }
        }
        Command::RunAll { kernels, run } => run_all(kernels, run),
    }
}

/// `run-all`: every experiment of the table that runs on its own (`Run::IN_RUN_ALL`),
/// in the registry's order, skipping with one line those this machine cannot run
/// (`Run::unavailable`), then `summary.json` and the report.
fn run_all(kernels: &KernelOptions, run: &RunOptions) -> Result<(), AppError> {
    let started = std::time::Instant::now();
    let mut session = Session::open(run, Some(kernels), false)?;
    let mut status = RunStatus::default();
    for r in ALL.iter().filter(|r| r.in_run_all()) {
        if stop::requested().is_some() {
            status.steps_not_run.push(r.name().to_owned());
            continue;
        }
        match r.step(&mut session, run.quick)? {
            Outcome::Measured { complete: true } => {}
            Outcome::Measured { complete: false } => status.steps_not_run.push(r.name().to_owned()),
            Outcome::Unavailable(why) => note(&format!("note: skipping {}: {why}", r.name())),
            Outcome::Skipped(why) => {
                note(&format!("note: skipping {}: {why}", r.name()));
                status.steps_not_run.push(r.name().to_owned());
            }
        }
    }
    status.interrupted_by = stop::requested().map(|s| s.name().to_owned());
    status.duration_s = Some(started.elapsed().as_secs_f64());
    session.finish(Some(status))
}

/// `report --from DIR --out OUT`: the report rendered again from saved JSON; results the
/// run's summary names but the folder lacks are named.
fn render(from: &Path, out: &Path, printed: Option<Width>) -> Result<(), AppError> {
    let saved = SavedRun::load(from)?;
    for missing in saved.missing() {
        note(&format!(
            "warning: {missing} is not in {}: its headline is in summary.json, but its section cannot be rendered",
            from.display()
        ));
    }
    eprintln!(
        "rendering the report of {} into {}",
        from.display(),
        out.display()
    );
    let in_place = match (from.canonicalize(), out.canonicalize()) {
        (Ok(from), Ok(out)) => from == out,
        _ => false,
    };
    let rendered = results::report::render(&saved, out, in_place, &|| stop::requested().is_none());
    match (rendered, stop::requested()) {
        (Ok(_), None) => {
            if let Some(width) = printed {
                print!("{}", results::report::tables(&saved, width));
            }
            println!("\nreport: {}", out.join(files::REPORT_HTML).display());
            Ok(())
        }
        (Ok(_) | Err(ReportError::Stopped { .. }), Some(signal)) => Err(AppError::Interrupted {
            signal,
            dir: out.to_owned(),
        }),
        (Err(err), _) => Err(err.into()),
    }
}
