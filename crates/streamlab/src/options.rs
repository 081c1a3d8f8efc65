//! The options of a GPU command: where and how it runs (`--out`, `--device`, `--quick`,
//! …), which kernels (`--kernels`, `--form`) where kernel sets apply, an experiment's
//! own parameters beside them, its command and help, and the parameters `--quick` gives.
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches};
use streamlab_results::saved::{KernelForm, Params};

use crate::experiments::Run as Runs;

/// Where and how a GPU command runs.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Run options")]
pub struct RunOptions {
    /// Folder for results (default: a new folder in results/, named after the UTC time).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Small sizes for a fast look; options given explicitly still win.
    #[arg(long)]
    pub quick: bool,
    /// Fail the run when a traced timeline still fails its checks after its retraces (by
    /// default it is marked "disturbed" and the run goes on: only a wrong answer fails).
    #[arg(long)]
    pub strict: bool,
    /// Print no tables: only notes, progress and where the report is.
    #[arg(long)]
    pub quiet: bool,
    /// Print every column and row of each table side by side (by default printed
    /// output keeps to 100 columns).
    #[arg(long)]
    pub wide: bool,
}

/// Which kernels an experiment runs.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Kernel options")]
pub struct KernelOptions {
    /// The Rust kernels, their CUDA C++ twins (compiled at run time with NVRTC), or both
    /// on the same buffers. With `both`, a machine without NVRTC runs the Rust kernels
    /// and says so.
    #[arg(long, value_enum, default_value_t = KernelChoice::Both)]
    pub kernels: KernelChoice,
    /// The kernels' form: the write-ups' (plain), safe (no `unsafe` in the kernel
    /// bodies) or tuned.
    #[arg(long, value_enum, default_value_t = KernelForm::Tuned)]
    pub form: KernelForm,
}

/// The `--kernels` choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KernelChoice {
    Rust,
    Cuda,
    Both,
}

/// A GPU experiment's command: its parameters, the kernel options where it runs the
/// project's kernels ([`streamlab_results::experiment::Experiment::USES_KERNEL_SETS`]), and the run options.
pub struct Options<E: Runs> {
    pub params: E::Params,
    pub kernels: Option<KernelOptions>,
    pub run: RunOptions,
}

impl<E: Runs> std::fmt::Debug for Options<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("params", &self.params)
            .field("kernels", &self.kernels)
            .field("run", &self.run)
            .finish()
    }
}

impl<E: Runs> FromArgMatches for Options<E> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Options {
            params: E::Params::from_arg_matches(matches)?,
            kernels: (E::USES_KERNEL_SETS)
                .then(|| KernelOptions::from_arg_matches(matches))
                .transpose()?,
            run: RunOptions::from_arg_matches(matches)?,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl<E: Runs> clap::Args for Options<E> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let cmd = E::Params::augment_args(cmd);
        let cmd = if E::USES_KERNEL_SETS {
            KernelOptions::augment_args(cmd)
        } else {
            cmd
        };
        RunOptions::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// Experiment `E`'s command: named by its `NAME`, listed with its `SUMMARY`, helped by
/// its `ABOUT`, with its
/// parameters, the kernel options where it runs the project's kernels and the run
/// options.
pub fn experiment_command<E: Runs>() -> clap::Command {
    // The options' own doc comments would name the command: its help goes on last.
    <Options<E> as clap::Args>::augment_args(clap::Command::new(E::NAME))
        .about(E::SUMMARY)
        .long_about(experiment_long_about::<E>())
}

/// An experiment's `--help`: what it measures, what it writes and where, and how
/// `run-all` runs it.
fn experiment_long_about<E: Runs>() -> String {
    let name = E::NAME;
    let run_all = match <E::Params as Params>::RUN_ALL {
        "" if E::IN_RUN_ALL => "run-all runs it with these defaults.".to_owned(),
        "" => "run-all leaves it out: run it by hand.".to_owned(),
        args => format!("run-all runs it with {args}."),
    };
    format!(
        "{}.\n\nWrites {name}.json (every sample, the parameters, the GPU and the build), \
         {name}.csv, its charts and timelines where it draws any, and a report of what it \
         ran (report.md, report.html) into --out (default: a new folder in results/, named \
         after the UTC time). Every output \
         element is checked; a wrong answer fails the run (exit 1). {run_all}",
        E::ABOUT.trim_end_matches('.')
    )
}

/// The parameters a run uses: `given` as parsed, or with `--quick` the quick defaults
/// with every option given explicitly on the command line taken from `given`.
pub fn with_quick<P: Params>(
    given: &P,
    quick: bool,
    matches: Option<&ArgMatches>,
) -> Result<P, clap::Error> {
    if !quick {
        return Ok(given.clone());
    }
    let to_json = |p: &P| serde_json::to_value(p).expect("parameters serialise");
    let (given_json, mut merged) = (to_json(given), to_json(&P::quick()));
    if let (Some(matches), Some(given_json), Some(merged)) =
        (matches, given_json.as_object(), merged.as_object_mut())
    {
        for (field, value) in given_json {
            if matches.value_source(field) == Some(ValueSource::CommandLine) {
                merged.insert(field.clone(), value.clone());
            }
        }
    }
    serde_json::from_value(merged)
        .map_err(|err| clap::Error::raw(clap::error::ErrorKind::InvalidValue, err))
}
