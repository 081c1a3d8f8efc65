//! A session of measurements: the GPU opened, the CUDA C++ twins loaded where wanted, the
//! results folder made, and each experiment measured with each of its kernel sets between
//! two probes of the link, its GPUs' clocks read around it, recorded, printed, and the run
//! finished with its summary and report.
use std::path::{Path, PathBuf};

use streamlab_results::derived::summary::RunStatus;
use streamlab_results::derived::trace::TraceChecks;
use streamlab_results::experiment::{Experiment, Saved};
use streamlab_results::folder;
use streamlab_results::report::{self, fit::Width};
use streamlab_results::run::recorder::Recorder;
use streamlab_results::run::{self as results};
use streamlab_results::saved::clocks::ClockProbe;
use streamlab_results::saved::{HostInfo, KernelForm, LinkProbe, UsageError, files};

use crate::error::AppError;
use crate::experiments::{Context, Run};
use crate::measure::LinkProber;
use crate::options::{KernelChoice, KernelOptions, RunOptions};
use crate::runtime::baseline::{self, Availability, CudaKernels};
use crate::runtime::{Gpu, Kernels, clocks};
use crate::stop;

/// How wide printed output is: `--wide` lifts the terminal's width.
pub fn width(wide: bool) -> Width {
    if wide { Width::Wide } else { Width::TERMINAL }
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
    pub(crate) cuda: Option<CudaKernels>,
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
    pub fn open(
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
                crate::progress::note(&format!("note: {note}"));
                None
            }
        };
        std::fs::create_dir_all(&out).map_err(|source| AppError::OutDir {
            path: out.clone(),
            source,
        })?;
        eprint!(
            "{}",
            width(run.wide).lines(&report::provenance::device(gpu.info()))
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
    pub fn measure<E: Run>(&mut self, params: &E::Params) -> Result<bool, AppError> {
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
                    crate::progress::note(&format!("note: marked disturbed: {disturbed}"));
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
            if let Some(link) = report::provenance::link(&a.provenance) {
                print!("{}", self.width.lines(&link));
            }
            let clocks = report::provenance::clocks(&a.provenance);
            print!("{}", self.width.lines(&format!("clocks: {clocks}")));
        }
        Ok(complete)
    }

    /// Finish the run: with `status` (run-all), its summary, printed; then its charts
    /// and report, rendered from what it measured; then the verdict: interrupted, failed
    /// checks, or fine.
    pub fn finish(self, status: Option<RunStatus>) -> Result<(), AppError> {
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
