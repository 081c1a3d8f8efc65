//! The table of experiments: each registered experiment as the command line and
//! `run-all` reach it ([`Runnable`]), one [`Runner`] per experiment in [`ALL`], in the
//! registry's order.
use std::marker::PhantomData;

use clap::{ArgMatches, FromArgMatches};
use streamlab_results::saved::{KernelForm, Params};

use crate::error::AppError;
use crate::experiments::{Context, Run};
use crate::options::{self, Options};
use crate::runtime::Gpu;
use crate::session::Session;

/// The table of every experiment, in the registry's order.
macro_rules! table {
    ($($module:ident :: $experiment:ident),* $(,)?) => {
        /// Every experiment, in the registry's order, as the command line and `run-all`
        /// reach it.
        pub static ALL: &[&dyn Runnable] = &[
            $(&Runner::<streamlab_results::experiments::$module::$experiment>::NEW),*
        ];
    };
}
streamlab_results::registered!(table);

/// One experiment as the command line and `run-all` reach it: [`ALL`] holds one per
/// registered experiment.
pub trait Runnable: Sync {
    fn name(&self) -> &'static str;
    /// Its command, with its options and help.
    fn command(&self) -> clap::Command;
    /// The options `run-all` gives it, as typed ([`Params::RUN_ALL`]).
    fn run_all_args(&self) -> &'static str;
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
        options::experiment_command::<E>()
    }

    fn run_all_args(&self) -> &'static str {
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
        let mut params = options::with_quick(given, options.run.quick, Some(matches))?;
        if let Some(change) = params.fit() {
            crate::progress::note(&format!("note: {change}"));
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
