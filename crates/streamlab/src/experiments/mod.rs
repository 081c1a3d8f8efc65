//! The experiments, each one file that reads top to bottom like the write-up it
//! reproduces: set up buffers, measure every configuration, verify every output, trace
//! a schedule, and return the saved result (`streamlab_results::saved`).
//!
//! An experiment is a [`Run`]: the results side's [`Experiment`] (its name, parameters,
//! result, tables and report) plus how it runs on the GPU and its command's help. Adding
//! one is its results module, its file here (named as its results module) and its line
//! in the results side's registry (`streamlab_results::registered!`): the modules here
//! and the table of experiments ([`crate::table::ALL`]), which the command line and
//! `run-all` read, follow the registry. What the experiments share to measure is in [`crate::measure`], the sincos
//! workload in [`crate::sincos`].
use streamlab_results::experiment::Experiment;
use streamlab_results::saved::{
    KernelForm, KernelSet, Provenance, RunRecord, UsageError, Verification,
};
use streamlab_results::spread::{self, Devices};

use crate::runtime::baseline::CudaKernels;
use crate::runtime::{Gpu, Kernels, RuntimeError};

/// One module per registered experiment.
macro_rules! modules {
    ($($module:ident :: $experiment:ident),* $(,)?) => {
        $(pub mod $module;)*
    };
}
streamlab_results::registered!(modules);

/// What every experiment runs with.
pub struct Context<'a> {
    pub gpu: &'a Gpu,
    /// The kernel set this run times (the Rust one unless `--kernels` says otherwise).
    pub kernels: &'a Kernels,
    /// The CUDA C++ twins, where NVRTC is present (compare-kernels, launch-overhead).
    pub cuda: Option<&'a CudaKernels>,
    /// Which form of the kernels to run.
    pub form: KernelForm,
    pub started_utc: &'a str,
    /// The kernel set this experiment ran with just before, in the same session
    /// (`--kernels both` runs it once per set), so that an experiment can do work that
    /// does not depend on the kernels in the first set's run only.
    pub earlier_set: Option<KernelSet>,
}

impl Context<'_> {
    /// What every result records of its run: `params`, this GPU, the provenance
    /// (`complete` false where the run was stopped before every step ran) and
    /// `verification`.
    pub fn record<P>(&self, params: P, verification: Verification, complete: bool) -> RunRecord<P> {
        RunRecord {
            params,
            device: self.gpu.info().clone(),
            provenance: self.provenance(complete),
            verification,
        }
    }

    /// The provenance every result records.
    fn provenance(&self, complete: bool) -> Provenance {
        Provenance {
            streamlab_version: env!("CARGO_PKG_VERSION").to_owned(),
            started_utc: self.started_utc.to_owned(),
            ptx_target: crate::runtime::kernels::ptx_target(crate::runtime::kernels::RUST_PTX)
                .to_owned(),
            kernels: self.kernels.set,
            form: self.form,
            complete,
            // Filled in by the session, which probes the link around every experiment,
            // times it, and knows the build and the machine.
            link: None,
            build: None,
            host: None,
            duration_s: None,
            clocks: None,
            gpus: Vec::new(),
            nccl: None,
        }
    }

    /// Whether a signal asked the run to stop: experiments stop between measurements
    /// and return what they measured, marked incomplete.
    pub fn stopping(&self) -> bool {
        crate::stop::requested().is_some()
    }
}

/// Why an experiment could not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The parameters cannot work with what the run found (exit code 2).
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// An input file could not be used (exit code 1).
    #[error("{0}")]
    Input(String),
}

/// An experiment the GPU side can run.
pub trait Run: Experiment {
    /// What it measures in one line: its line in `streamlab --help`.
    const SUMMARY: &'static str;
    /// Its command's help: what it measures, in a sentence or two.
    const ABOUT: &'static str;
    /// Whether `run-all` runs it (not those that need the user's input).
    const IN_RUN_ALL: bool = true;
    /// Whether it needs the CUDA C++ twins whatever `--kernels` says.
    const NEEDS_CUDA_TWINS: bool = false;

    fn run(ctx: &Context, params: &Self::Params) -> Result<Self::Result, RunError>;

    /// Why this machine cannot run it with `params`, in one line; `None` where it can.
    /// Run alone it then exits with 2 and that line; `run-all` skips it with that line
    /// and goes on. Parameters that do not fit the machine are a usage error.
    fn unavailable(_params: &Self::Params) -> Result<Option<String>, RunError> {
        Ok(None)
    }

    /// The GPUs it runs on where it runs on several, as it resolves `params` (every GPU
    /// where `--devices` names none): the session reads each one's clocks and host link
    /// around it. Empty for an experiment of the session's GPU alone.
    fn gpus(params: &Self::Params) -> Result<Vec<usize>, RunError> {
        let _ = params;
        Ok(Vec::new())
    }

    /// Where these parameters make this process a worker of a parent run of the same
    /// experiment (kernel-concurrency starts one per hardware-queue count): the work,
    /// whose JSON the worker prints for its parent instead of writing results.
    fn worker(params: &Self::Params) -> Option<Worker<Self::Params>> {
        let _ = params;
        None
    }
}

/// A worker process's work: its output, as JSON for its parent.
pub type Worker<P> = fn(&Context, &P) -> Result<String, RunError>;

/// The GPUs `experiment` runs on, two or more: `devices` (every GPU where it is empty)
/// on this machine, or in one line why it cannot run here.
pub fn several_gpus(experiment: &str, devices: &[usize]) -> Result<Devices, RunError> {
    let machine = crate::runtime::peer::gpu_names()?;
    Ok(spread::devices_on(experiment, devices, &machine)?)
}

/// The ordinals [`several_gpus`] chooses; fewer than two is a usage error saying why.
pub fn chosen_gpus(experiment: &str, devices: &[usize]) -> Result<Vec<usize>, RunError> {
    match several_gpus(experiment, devices)? {
        Devices::Chosen(ordinals) => Ok(ordinals),
        Devices::TooFew(why) => Err(UsageError::new(why).into()),
    }
}

/// Makes the session's GPU current again when a run over several GPUs ends, however it
/// ends.
pub struct Rebind<'a>(pub &'a Gpu);

impl Drop for Rebind<'_> {
    fn drop(&mut self) {
        let _ = self.0.bind();
    }
}
