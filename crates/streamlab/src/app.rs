//! What each command does, from parsed options to files on disk and a verdict: one
//! generic path runs any experiment ([`Runner`]: validate, open the GPU, probe the link,
//! measure with each kernel set, probe the link again, write its JSON with the derived
//! numbers and trace checks, its CSV, print its table, and its charts and report);
//! `run-all` runs them all in order and writes `summary.json` and the report, rendered
//! from memory; `report` and `compare` render from results folders with no GPU. Only a wrong answer fails a run: a trace that
//! still fails its checks after its retraces is marked disturbed (fatal with
//! `--strict`). A signal stops a run between measurements; what was measured is written
//! and marked incomplete.
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use clap::{ArgMatches, FromArgMatches};
use streamlab_results::compare::{self, CompareError};
use streamlab_results::derived::summary::RunStatus;
use streamlab_results::derived::trace::TraceChecks;
use streamlab_results::experiment::{Experiment, Saved};
use streamlab_results::folder::{self, FolderError};
use streamlab_results::report::fit::Width;
use streamlab_results::report::{self, ReportError};
use streamlab_results::run::recorder::Recorder;
use streamlab_results::run::{self as results, SavedRun};
use streamlab_results::saved::clocks::ClockProbe;
use streamlab_results::saved::{HostInfo, KernelForm, LinkProbe, Params, UsageError, files};

use crate::cli::{self, Command, KernelChoice, KernelOptions, Options, Parsed, RunOptions};
use crate::experiments::{Context, Run, RunError};
use crate::measure::LinkProber;
use crate::runtime::baseline::{self, Availability, BaselineError, CudaKernels};
use crate::runtime::{Gpu, Kernels, RuntimeError, clocks};
use crate::stop::{self, Signal};

/// Why a command failed; usage errors (bad options, and a folder or file named that is
/// not what the command needs) exit with 2, an interrupted run with 128 + the signal,
/// everything else with 1.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// This machine cannot run the experiment (exit code 2).
    #[error("{0}")]
    Unavailable(String),
    #[error(transparent)]
    Options(#[from] clap::Error),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Baseline(#[from] BaselineError),
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Compare(#[from] CompareError),
    #[error("could not create the results folder {path}: {source}")]
    OutDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} check(s) failed (results written to {}): {}", .details.len(), .dir.display(), .details.join("; "))]
    Failed { dir: PathBuf, details: Vec<String> },
    #[error("stopped by {}: what was measured is in {} (marked incomplete)", .signal.name(), .dir.display())]
    Interrupted { signal: Signal, dir: PathBuf },
    /// `compare --fail-on` found such a change (exit code 3).
    #[error("{0}")]
    Changed(String),
}

impl AppError {
    pub fn exit_code(&self) -> i32 {
        match self {
            AppError::Usage(_) | AppError::Unavailable(_) => 2,
            // A GPU index the machine does not have is an option given wrong.
            AppError::Runtime(RuntimeError::NoDevice { .. }) => 2,
            AppError::Changed(_) => 3,
            AppError::Compare(err) if err.is_usage() => 2,
            AppError::Folder(err) | AppError::Report(ReportError::Folder(err))
                if err.is_usage() =>
            {
                2
            }
            AppError::Options(err) => err.exit_code(),
            AppError::Interrupted { signal, .. } => signal.exit_code(),
            _ => 1,
        }
    }
}

impl From<RunError> for AppError {
    fn from(err: RunError) -> AppError {
        match err {
            RunError::Runtime(e) => AppError::Runtime(e),
            RunError::Usage(e) => AppError::Usage(e),
            RunError::Input(e) => AppError::Input(e),
        }
    }
}

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
                Width::TERMINAL.lines(&report::table::device(gpu.info()))
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

/// One experiment as the command line and `run-all` reach it: the GPU side's table
/// ([`crate::experiments::ALL`]) holds one per registered experiment.
pub trait Runnable: Sync {
    fn name(&self) -> &'static str;
    /// Its command, with its options and help.
    fn command(&self) -> clap::Command;
    /// The options `run-all` gives it, as typed ([`Params::RUN_ALL`]).
    fn run_all_args(&self) -> &'static [&'static str];
    /// Whether `run-all` runs it ([`Run::IN_RUN_ALL`]).
    fn in_run_all(&self) -> bool;
    /// Run it alone, with the options of its command's `matches`: its parameters (with
    /// `--quick`), validated before the GPU is opened; a worker process (see
    /// [`Run::worker`]) prints its work for its parent instead.
    fn start(&self, matches: &ArgMatches) -> Result<(), AppError>;
    /// Measure it as a step of `run-all`.
    fn step(&self, session: &mut Session, quick: bool) -> Result<Outcome, AppError>;
}

/// Experiment `E` in the GPU side's table.
pub struct Runner<E>(PhantomData<fn() -> E>);

impl<E> Runner<E> {
    pub const NEW: Runner<E> = Runner(PhantomData);
}

impl<E: Run> Runnable for Runner<E> {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn command(&self) -> clap::Command {
        cli::experiment_command::<E>()
    }

    fn run_all_args(&self) -> &'static [&'static str] {
        <E::Params as Params>::RUN_ALL
    }

    fn in_run_all(&self) -> bool {
        E::IN_RUN_ALL
    }

    fn start(&self, matches: &ArgMatches) -> Result<(), AppError> {
        let options = Options::<E>::from_arg_matches(matches)?;
        let given = &options.params;
        if let Some(work) = E::worker(given) {
            let gpu = Gpu::open(options.run.device)?;
            let ctx = Context {
                gpu: &gpu,
                kernels: gpu.kernels(),
                cuda: None,
                form: KernelForm::Tuned,
                started_utc: "",
                earlier_set: None,
            };
            println!("{}", work(&ctx, given)?);
            return Ok(());
        }
        let mut params = cli::with_quick(given, options.run.quick, Some(matches))?;
        if let Some(change) = params.fit() {
            eprintln!("note: {change}");
        }
        params.validate()?;
        if let Some(why) = E::unavailable(&params)? {
            return Err(AppError::Unavailable(why));
        }
        let mut session =
            Session::open(&options.run, options.kernels.as_ref(), E::NEEDS_CUDA_TWINS)?;
        session.measure::<E>(&params)?;
        session.finish(None)
    }

    fn step(&self, session: &mut Session, quick: bool) -> Result<Outcome, AppError> {
        if E::NEEDS_CUDA_TWINS && session.cuda.is_none() {
            return Ok(Outcome::Skipped(
                "the CUDA C++ twins are unavailable".to_owned(),
            ));
        }
        let params = if quick {
            E::Params::quick()
        } else {
            E::Params::run_all()
        };
        if let Some(why) = E::unavailable(&params)? {
            return Ok(Outcome::Unavailable(why));
        }
        let complete = session.measure::<E>(&params)?;
        Ok(Outcome::Measured { complete })
    }
}

/// What one step of `run-all` came to.
pub enum Outcome {
    /// Measured; false where it stopped before the end.
    Measured { complete: bool },
    /// This machine cannot run it, for this reason.
    Unavailable(String),
    /// Not run, for this reason: the run misses it.
    Skipped(String),
}

/// `run-all`: every experiment of the table that runs on its own (`Run::IN_RUN_ALL`),
/// in the registry's order, skipping with one line those this machine cannot run
/// (`Run::unavailable`), then `summary.json` and the report.
fn run_all(kernels: &KernelOptions, run: &RunOptions) -> Result<(), AppError> {
    let started = std::time::Instant::now();
    let mut session = Session::open(run, Some(kernels), false)?;
    let mut status = RunStatus::default();
    for r in crate::experiments::ALL.iter().filter(|r| r.in_run_all()) {
        if stop::requested().is_some() {
            status.steps_not_run.push(r.name().to_owned());
            continue;
        }
        match r.step(&mut session, run.quick)? {
            Outcome::Measured { complete: true } => {}
            Outcome::Measured { complete: false } => status.steps_not_run.push(r.name().to_owned()),
            Outcome::Unavailable(why) => eprintln!("note: skipping {}: {why}", r.name()),
            Outcome::Skipped(why) => {
                eprintln!("note: skipping {}: {why}", r.name());
                status.steps_not_run.push(r.name().to_owned());
            }
        }
    }
    status.interrupted_by = stop::requested().map(|s| s.name().to_owned());
    status.duration_s = Some(started.elapsed().as_secs_f64());
    session.finish(Some(status))
}

/// How wide printed output is: `--wide` lifts the terminal's width.
fn width(wide: bool) -> Width {
    if wide { Width::Wide } else { Width::TERMINAL }
}

/// `report --from DIR --out OUT`: the report rendered again from saved JSON; results the
/// run's summary names but the folder lacks are named.
fn render(from: &Path, out: &Path, printed: Option<Width>) -> Result<(), AppError> {
    let saved = SavedRun::load(from)?;
    for missing in saved.missing() {
        eprintln!(
            "warning: {missing} is not in {}: its headline is in summary.json, but its section cannot be rendered",
            from.display()
        );
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

/// A results folder holds one run: refuse an `--out` that already holds files.
fn refuse_a_used_folder(out: &Path) -> Result<(), AppError> {
    let names = folder::names(out)?;
    if names.is_empty() {
        return Ok(());
    }
    let shown = if names.len() > 3 {
        format!("{}, … ({} files)", names[..3].join(", "), names.len())
    } else {
        names.join(", ")
    };
    Err(AppError::Usage(UsageError::new(format!(
        "--out {} already holds files ({shown}): a results folder holds one run, so name a new or empty folder",
        out.display()
    ))))
}

/// A new folder for a run's results when `--out` names none: `results/<UTC time>`, with
/// "-2", "-3", … where a run of the same second has it.
fn fresh_results_folder() -> PathBuf {
    let base = Path::new("results").join(crate::clock::now_compact());
    (1..)
        .map(|n| {
            if n == 1 {
                base.clone()
            } else {
                PathBuf::from(format!("{}-{n}", base.display()))
            }
        })
        .find(|p| !p.exists())
        .expect("some suffix is free")
}

/// The GPU, the kernel sets to run, the run being recorded, the link probe, and the
/// failed checks so far (reported after everything is written).
pub struct Session {
    gpu: Gpu,
    cuda: Option<CudaKernels>,
    choice: KernelChoice,
    form: KernelForm,
    recorder: Recorder,
    started_utc: String,
    prober: LinkProber,
    host: HostInfo,
    strict: bool,
    quiet: bool,
    width: Width,
    failures: Vec<String>,
}

impl Session {
    /// Open the GPU, load the CUDA C++ twins where they are wanted, and create the
    /// results folder (only once all that worked).
    fn open(
        run: &RunOptions,
        kernels: Option<&KernelOptions>,
        need_cuda: bool,
    ) -> Result<Session, AppError> {
        let out = match &run.out {
            Some(out) => {
                refuse_a_used_folder(out)?;
                out.clone()
            }
            None => fresh_results_folder(),
        };
        let started_utc = crate::clock::now_rfc3339();
        let gpu = Gpu::open(run.device)?;
        let choice = kernels.map_or(KernelChoice::Rust, |k| k.kernels);
        let cuda = match baseline::load(&gpu)? {
            Availability::Ready(cuda) => Some(cuda),
            Availability::NvrtcMissing(note) if need_cuda || choice == KernelChoice::Cuda => {
                return Err(AppError::Input(format!(
                    "the CUDA C++ twins are needed but unavailable: {note}"
                )));
            }
            Availability::NvrtcMissing(note) => {
                eprintln!("note: {note}");
                None
            }
        };
        std::fs::create_dir_all(&out).map_err(|source| AppError::OutDir {
            path: out.clone(),
            source,
        })?;
        eprint!(
            "{}",
            width(run.wide).lines(&report::table::device(gpu.info()))
        );
        eprintln!("results: {}", out.display());
        let host = crate::build_info::host(cuda.as_ref().map(|c| c.build.compiler.clone()));
        Ok(Session {
            prober: LinkProber::new(&gpu)?,
            gpu,
            cuda,
            choice,
            form: kernels.map_or(KernelForm::Tuned, |k| k.form),
            host,
            recorder: Recorder::new(&out),
            started_utc,
            strict: run.strict,
            quiet: run.quiet,
            width: width(run.wide),
            failures: Vec::new(),
        })
    }

    /// The kernel sets experiment `E` runs with.
    fn sets<E: Experiment>(&self) -> Vec<&Kernels> {
        let rust = self.gpu.kernels();
        let cuda = self.cuda.as_ref().map(|c| &c.kernels);
        if !E::USES_KERNEL_SETS {
            return vec![rust];
        }
        match self.choice {
            KernelChoice::Rust => vec![rust],
            KernelChoice::Cuda => cuda.into_iter().collect(),
            KernelChoice::Both => std::iter::once(rust).chain(cuda).collect(),
        }
    }

    /// Run `E` with each of its kernel sets between two probes of the link, the clocks of
    /// its GPUs read just before and after each (every GPU's, with its host link, for an
    /// experiment of several); record the results (each analysed once, its JSON and CSV written), print their tables and
    /// what their traces and the link probes say, and note failed checks. Returns
    /// whether every result is complete.
    fn measure<E: Run>(&mut self, params: &E::Params) -> Result<bool, AppError> {
        let mut results = Vec::new();
        let sets: Vec<Kernels> = self.sets::<E>().into_iter().cloned().collect();
        let before = self.prober.probe(&self.gpu)?;
        let several = E::gpus(params)?;
        for (i, kernels) in sets.iter().enumerate() {
            let ctx = Context {
                gpu: &self.gpu,
                kernels,
                cuda: self.cuda.as_ref(),
                form: self.form,
                started_utc: &self.started_utc,
                earlier_set: i.checked_sub(1).map(|e| sets[e].set),
            };
            let started = std::time::Instant::now();
            let clocks_before = clocks::read(&self.gpu);
            let each_before: Vec<_> = several.iter().map(|&o| clocks::read_ordinal(o)).collect();
            let mut result = E::run(&ctx, params)?;
            let clocks_after = clocks::read(&self.gpu);
            let provenance = result.provenance_mut();
            provenance.duration_s = Some(started.elapsed().as_secs_f64());
            provenance.clocks = Some(ClockProbe::of(clocks_before, clocks_after));
            provenance.gpus = (several.iter().zip(each_before))
                .map(|(&ordinal, before)| clocks::probe(ordinal, before))
                .collect();
            results.push((kernels.set, result));
        }
        let after = self.prober.probe(&self.gpu)?;
        for (_, result) in &mut results {
            let provenance = result.provenance_mut();
            provenance.link = Some(LinkProbe {
                before: before.clone(),
                after: after.clone(),
            });
            provenance.build = Some(crate::build_info::build());
            provenance.host = Some(self.host.clone());
        }
        let held = self.recorder.record::<E>(results)?;
        let mut complete = true;
        for a in held.analyses() {
            complete &= a.provenance.complete;
            if !a.verification.passed {
                self.failures
                    .push(format!("{}: {}", E::NAME, a.verification.detail));
            }
            for disturbed in a.trace_checks.iter().flat_map(TraceChecks::failures) {
                if self.strict {
                    self.failures.push(disturbed);
                } else {
                    eprintln!("note: marked disturbed: {disturbed}");
                }
            }
            if self.quiet {
                continue;
            }
            print!("{}", held.printed(a.set, self.width).unwrap_or_default());
            for t in &a.trace_checks {
                if let Some(o) = &t.occupancy {
                    print!(
                        "{}",
                        self.width.lines(&format!("{}: {}", t.title, o.describe()))
                    );
                }
            }
            if let Some(link) = report::table::link(&a.provenance) {
                print!("{}", self.width.lines(&link));
            }
            let clocks = report::table::clocks(&a.provenance);
            print!("{}", self.width.lines(&format!("clocks: {clocks}")));
        }
        Ok(complete)
    }

    /// Finish the run: with `status` (run-all), its summary, printed; then its charts
    /// and report, rendered from what it measured; then the verdict: interrupted, failed
    /// checks, or fine.
    fn finish(self, status: Option<RunStatus>) -> Result<(), AppError> {
        let dir = self.recorder.dir().to_owned();
        // After a signal the report is still rendered whole: it shows what was measured.
        let (run, summary) = self.recorder.finish(status)?;
        if let (Some(summary), false) = (&summary, self.quiet) {
            print!(
                "\nsummary\n{}",
                results::summary::summary_text(&run, summary, self.width)
            );
        }
        println!("\nreport: {}", dir.join(files::REPORT_HTML).display());
        if let Some(signal) = stop::requested() {
            return Err(AppError::Interrupted { signal, dir });
        }
        if !self.failures.is_empty() {
            return Err(AppError::Failed {
                dir,
                details: self.failures,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_the_machine_does_not_have_is_a_usage_error() {
        let no_device = AppError::Runtime(RuntimeError::NoDevice {
            ordinal: 3,
            count: 1,
        });
        assert_eq!(no_device.exit_code(), 2);
        assert!(no_device.to_string().contains("--device 0..=0"));
        assert_eq!(AppError::Runtime(RuntimeError::NoDriver).exit_code(), 1);
    }
}
