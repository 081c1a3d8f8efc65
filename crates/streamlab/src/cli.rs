//! The command line: one subcommand per experiment (its options are the experiment's
//! parameter struct), `run-all`, `device-info`, `report` and `compare`. Options that steer a run
//! (`--out`, `--device`, `--quick`, and `--kernels`/`--form` where kernel sets apply)
//! belong to the commands they apply to; `--quick` starts from small sizes and lets
//! options given explicitly override them.
use std::path::PathBuf;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::options::{KernelOptions, RunOptions};
use crate::table::{ALL, Runnable};

/// Reproduce the classic CUDA-streams experiments with Rust kernels, verify every output,
/// and write JSON, CSV, charts, GPU-side timelines and a report.
#[derive(Debug, Parser)]
#[command(
    name = "streamlab",
    version,
    about,
    propagate_version = true,
    max_term_width = 100,
    after_help = "Each command's options, and what it measures and writes: streamlab <COMMAND> --help"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The commands besides the experiments' (which [`command`] adds from the GPU side's
/// table).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the GPU: its name, SMs, copy engines, memory and driver.
    ///
    /// Its compute capability too. What every run records as its device, for checking a machine before a run:
    /// the copy engines decide how many copies overlap, the PCIe link the copy
    /// rates. Exits 1 with one line where there is no driver or no such GPU.
    DeviceInfo {
        /// GPU ordinal.
        #[arg(long, default_value_t = 0)]
        device: usize,
    },
    /// Run every experiment and write the report: the command to start with.
    #[command(long_about = run_all_about())]
    RunAll {
        #[command(flatten)]
        kernels: KernelOptions,
        #[command(flatten)]
        run: RunOptions,
    },
    /// Render the report again from a results folder, with no GPU.
    ///
    /// Reads every experiment's JSON in DIR and writes report.md, report.html, the
    /// CSV files, charts and timelines again, into DIR or --out; the measured samples
    /// are never changed (the derived numbers beside them are computed again), so a
    /// folder renders the same way every time. A folder that is
    /// not a streamlab run, or JSON this build cannot read, is a usage error
    /// (exit 2) that names the file.
    Report {
        /// The results folder to read.
        #[arg(required_unless_present = "from", conflicts_with = "from")]
        dir: Option<PathBuf>,
        /// The results folder to read (the same as DIR).
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// Where to write the charts, timelines and report (default: the folder
        /// read).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print no tables: only where the report is.
        #[arg(long)]
        quiet: bool,
        /// Print every column and row of each table side by side (by default
        /// printed output keeps to 100 columns).
        #[arg(long)]
        wide: bool,
    },
    /// Compare two results folders and say what changed, with no GPU.
    ///
    /// Folders of other GPUs, builds or kernel forms; whole runs or single
    /// experiments. Prints what changed, and writes a report of every headline and
    /// measured row side by side, B over A, raw and held against its control in the
    /// same run (its C++ twin, the link's probes, the launch probe), each judged
    /// faster, slower, the same or too noisy to say.
    ///
    /// Runs are the unit: a row is called changed only beyond the spread its experiment
    /// shows between two machines of one kind running one build (fitted on recorded A/A
    /// pairs), the two runs' own noise and how far the GPU's clocks moved between them,
    /// chosen over all rows at once at a 5% false-discovery rate. Exit codes: 0 compared; 3
    /// compared and a row changed as --fail-on names; 2 for folders that are not streamlab
    /// runs or JSON this build cannot read (one line naming the file; nothing written); 1
    /// for anything else.
    Compare {
        /// The first results folder (A).
        a: PathBuf,
        /// The second results folder (B).
        b: PathBuf,
        /// Where to write report.md, report.html, comparison.json and the charts
        /// (default: `A-vs-B` beside A, A and B being the folders' names).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Never call a change smaller than this, as a percentage (e.g. 3%) or a
        /// fraction (0.03), on top of the rule's margins.
        #[arg(long, value_parser = parse_min_change, default_value_t = Percent(0.0),
              allow_hyphen_values = true)]
        min_change: Percent,
        /// Exit with code 3 when a row changed this way (the controlled verdict
        /// where the row has a control, else the raw one).
        #[arg(long, value_enum)]
        fail_on: Option<streamlab_results::compare::FailOn>,
    },
}

/// The whole command line: [`Cli`]'s commands and one per experiment of the GPU side's
/// table.
pub fn command() -> clap::Command {
    Cli::command().subcommands(ALL.iter().map(|r| r.command()))
}

/// `run-all --help`: what it does, and the options it gives experiments other than
/// their commands' defaults, as typed.
fn run_all_about() -> String {
    let choices: Vec<String> = (ALL.iter())
        .filter(|r| !r.run_all_args().is_empty())
        .map(|r| format!("  {} {}", r.name(), r.run_all_args()))
        .collect();
    let mut about = "Measure the bounds, compare the kernels, and run every experiment with its \
        defaults (or --quick); write summary.json and the report, and print a compact table."
        .to_owned();
    if !choices.is_empty() {
        about += "\n\nOptions run-all gives experiments other than their commands' defaults \
            (each report's parameters show what ran):\n";
        about += &choices.join("\n");
    }
    about
}

/// A fraction given and shown as a percentage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percent(pub f64);

impl std::fmt::Display for Percent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&streamlab_results::verdict::percent(self.0))
    }
}

/// `--min-change`: "3%" or "0.03", from 0 up to (not including) 100%.
fn parse_min_change(text: &str) -> Result<Percent, String> {
    if text.trim().starts_with('-') {
        return Err(format!(
            "`{text}` is negative: --min-change is the smallest change called, from 0% up; give e.g. 3% or 0.03"
        ));
    }
    let (number, scale) = match text.trim().strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (text.trim(), 1.0),
    };
    let value = number
        .trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * scale)
        .filter(|v| (0.0..1.0).contains(v))
        .ok_or_else(|| {
            format!("`{text}` is not a change between 0% and 100%: give e.g. 3% or 0.03")
        })?;
    Ok(Percent(value))
}

/// The parsed command line: an experiment's command with its options, or another.
pub enum Parsed {
    Experiment {
        runner: &'static dyn Runnable,
        matches: ArgMatches,
    },
    Other(Cli),
}

/// Parse `args` (program name first). `help --help` asks for the help's help: the
/// command's own, as `--help` gives it.
pub fn parse<I, T>(args: I) -> Result<Parsed, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    if args.get(1).is_some_and(|a| a == "help") {
        args.retain(|a| a != "--help" && a != "-h");
    }
    let matches = command().try_get_matches_from(args)?;
    if let Some((name, sub)) = matches.subcommand()
        && let Some(runner) = ALL.iter().find(|r| r.name() == name)
    {
        return Ok(Parsed::Experiment {
            runner: *runner,
            matches: sub.clone(),
        });
    }
    Ok(Parsed::Other(Cli::from_arg_matches(&matches)?))
}

/// A parse error as one line: clap's first line with the lines under it that name what
/// it is about (the missing arguments, the accepted values, a suggestion), and where the
/// help is: the subcommand's, where `args` name one.
pub fn usage_line(err: &clap::Error, args: &[std::ffi::OsString]) -> String {
    let text = err.render().to_string();
    let mut parts: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() {
            parts.push(line);
        }
    }
    let line = match parts.as_slice() {
        [] => "error: invalid arguments".to_owned(),
        parts => parts.join(" "),
    };
    let command = command();
    let sub = (args.get(1).and_then(|a| a.to_str()))
        .filter(|name| *name != "help" && command.find_subcommand(name).is_some());
    match sub {
        Some(sub) => format!("{line} (see streamlab {sub} --help)"),
        None => format!("{line} (see streamlab --help)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::Run as Runs;
    use crate::options::{KernelChoice, Options, with_quick};
    use streamlab_results::experiments::{matmul_streams, memcpy_kernel, sincos_overlap};
    use streamlab_results::saved::{KernelForm, Params};

    fn parse_ok(args: &[&str]) -> Parsed {
        match parse(std::iter::once("streamlab").chain(args.iter().copied())) {
            Ok(parsed) => parsed,
            Err(err) => panic!("{args:?}: {err}"),
        }
    }

    fn parse_err(args: &[&str]) -> clap::Error {
        match parse(std::iter::once("streamlab").chain(args.iter().copied())) {
            Ok(_) => panic!("{args:?} parsed"),
            Err(err) => err,
        }
    }

    /// Experiment `E`'s options as `args` give them, with their matches.
    fn options<E: Runs>(args: &[&str]) -> (Options<E>, ArgMatches) {
        let Parsed::Experiment { runner, matches } = parse_ok(args) else {
            panic!("{args:?} is not an experiment's command")
        };
        assert_eq!(runner.name(), E::NAME);
        (Options::<E>::from_arg_matches(&matches).unwrap(), matches)
    }

    fn other(args: &[&str]) -> Command {
        match parse_ok(args) {
            Parsed::Other(cli) => cli.command,
            Parsed::Experiment { .. } => panic!("{args:?} is an experiment's command"),
        }
    }

    #[test]
    fn defaults_are_the_write_ups() {
        let (a, _) = options::<matmul_streams::MatmulStreams>(&["matmul-streams"]);
        assert_eq!(a.params, matmul_streams::Params::default());
        let (a, _) = options::<sincos_overlap::SincosOverlap>(&["sincos-overlap"]);
        assert_eq!(
            (a.params.elements, a.params.threads, a.params.iterations),
            (1 << 25, 1024, 1000)
        );
        assert_eq!(a.params.batches(), 10);
        assert_eq!(a.kernels.map(|k| k.form), Some(KernelForm::Tuned));
    }

    #[test]
    fn quick_starts_small_and_explicit_options_win() {
        let (a, matches) = options::<sincos_overlap::SincosOverlap>(&[
            "sincos-overlap",
            "--quick",
            "--iterations",
            "7",
            "--stream-counts",
            "1,3",
        ]);
        let p = with_quick(&a.params, a.run.quick, Some(&matches)).unwrap();
        assert_eq!(p.iterations, 7);
        assert_eq!(p.stream_counts, [1, 3]);
        assert_eq!(p.elements, sincos_overlap::Params::quick().elements);
        assert_eq!(p.batches(), 4);
    }

    #[test]
    fn batches_default_to_at_most_the_iterations() {
        let (a, _) =
            options::<sincos_overlap::SincosOverlap>(&["sincos-overlap", "--iterations", "2"]);
        assert_eq!(a.params.batches(), 2);
        assert!(a.params.validate().is_ok());
    }

    #[test]
    fn negative_values_are_accepted_where_a_value_may_be_negative() {
        let (a, _) =
            options::<memcpy_kernel::MemcpyKernel>(&["memcpy-kernel", "--add-value", "-7"]);
        assert_eq!(a.params.add_value, -7);
    }

    #[test]
    fn ranges_are_checked_by_the_parser() {
        for args in [
            &["memcpy-kernel", "--cycles", "9..=3"][..],
            &["memcpy-kernel", "--streams-step", "0"],
            &["matmul-streams", "--rows", "-3"],
            &["matmul-streams", "--rows", "0"],
            &["sincos-overlap", "--streams", "0"],
            &["sincos-overlap", "--streams", "5000000"],
            &["sincos-overlap", "--threads", "2048"],
            &["no-such-command"],
            &["report"],
            &["run-all", "--kernels", "opencl"],
        ] {
            assert_eq!(parse_err(args).exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn options_belong_to_the_commands_they_apply_to() {
        let Command::Report { dir, from, out, .. } =
            other(&["report", "--from", "a", "--out", "b"])
        else {
            panic!()
        };
        assert_eq!((dir, from), (None, Some(PathBuf::from("a"))));
        assert_eq!(out, Some(PathBuf::from("b")));
        let Command::Report { dir, .. } = other(&["report", "a"]) else {
            panic!()
        };
        assert_eq!(dir, Some(PathBuf::from("a")));
        for args in [&["report", "a", "--from", "b"][..], &["report"]] {
            assert_eq!(parse_err(args).exit_code(), 2, "{args:?}");
        }
        for args in [
            &["report", "--from", "a", "--quick"][..],
            &["report", "--from", "a", "--device", "1"],
            &["bounds", "--kernels", "rust"],
            &["device-info", "--out", "x"],
        ] {
            assert_eq!(parse_err(args).exit_code(), 2, "{args:?}");
        }
        let Command::RunAll { run, kernels } = other(&[
            "run-all",
            "--device",
            "3",
            "--out",
            "/tmp/x",
            "--kernels",
            "rust",
        ]) else {
            panic!()
        };
        assert_eq!((run.device, run.out), (3, Some(PathBuf::from("/tmp/x"))));
        assert_eq!(kernels.kernels, KernelChoice::Rust);
    }
}
