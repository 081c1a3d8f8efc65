//! The command line: what each subcommand measures, its options (the experiments'
//! parameter structs), and `--quick`, which starts from small sizes and lets explicit
//! options override them.
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::experiments::{matmul_streams, memcpy_kernel, sincos_overlap};
use crate::{bounds, compare};

/// Reproduce the classic CUDA-streams experiments with Rust kernels, verify every output,
/// and write JSON, CSV and a report.
#[derive(Debug, Parser)]
#[command(name = "streamlab", version, about, propagate_version = true)]
pub struct Cli {
    /// Folder for results (default: results/<UTC timestamp>/).
    #[arg(long, global = true)]
    pub out: Option<PathBuf>,
    /// GPU ordinal.
    #[arg(long, global = true, default_value_t = 0)]
    pub device: usize,
    /// Small sizes for a fast look; explicit options still win.
    #[arg(long, global = true)]
    pub quick: bool,
    /// Which kernels the experiments run: the Rust ones, their CUDA C++ twins (compiled
    /// at run time with NVRTC), or both on the same buffers. With `both`, a machine
    /// without NVRTC runs the Rust kernels and says so.
    #[arg(long, global = true, value_enum, default_value_t = KernelChoice::Both)]
    pub kernels: KernelChoice,
    #[command(subcommand)]
    pub command: Command,
}

/// The `--kernels` choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KernelChoice {
    Rust,
    Cuda,
    Both,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the GPU's name, compute capability, SMs, copy engines, memory and driver.
    DeviceInfo,
    /// 16 independent naive matrix products over 1..=16 streams (product i on stream
    /// i % s): time per stream count, speedup, and the ceil(16/s) tasks-per-stream model
    /// behind the plateaus. Timed on the GPU: the first stream joins every other one
    /// before the stop event.
    MatmulStreams(matmul_streams::Params),
    /// The CUDA Handbook's AddKernel shmoo: sequential HtoD, kernel, DtoH and total times
    /// against the streamed version (all copies in, all kernels, all copies out) for each
    /// cycles value, with speedup and the three-engine Amdahl ideal. Unlike the original,
    /// every stream count of a range gets a table, chunks always cover the whole array,
    /// and the cycles range is extended until the kernel outlasts the copies.
    MemcpyKernel(memcpy_kernel::Params),
    /// b = a + sqrt(sin² + cos²) over 2^25 pinned floats: sequential (blocking copies)
    /// against asynchronous version 1 (per stream: copy, kernel, copy) and version 2
    /// (all copies in, all kernels, all copies out), over --streams and a sweep of stream
    /// counts, beside each part timed alone (the copy-engine bound). As in the blog's
    /// program, iterations run back to back and are timed together, in --batches.
    SincosOverlap(sincos_overlap::Params),
    /// Measure the physical limits: pinned HtoD and DtoH bandwidth alone and both at once,
    /// device-to-device bandwidth and launch overhead, for the sincos array size.
    Bounds(bounds::Params),
    /// Time each Rust kernel against its CUDA C++ twin (NVRTC) from interleaved launches on
    /// the experiments' buffers and shapes: medians, spread, and Rust over CUDA C++.
    CompareKernels(compare::Params),
    /// Measure the bounds, compare the kernels, and run all three experiments with their
    /// defaults (or --quick), memcpy-kernel at 8 streams (the Handbook's) and at 32 (a
    /// deeper pipeline); write summary.json and the report, and print a compact table.
    RunAll,
    /// Render the report again from a results folder's JSON, with no GPU.
    Report {
        /// The results folder to read.
        #[arg(long)]
        from: PathBuf,
    },
}

/// Parse `args` (program name first), applying `--quick` under explicit options.
pub fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = Cli::command().try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if cli.quick {
        let sub = matches.subcommand().map(|(_, m)| m);
        match &mut cli.command {
            Command::MatmulStreams(p) => *p = overlay(p, matmul_streams::Params::quick(), sub)?,
            Command::MemcpyKernel(p) => *p = overlay(p, memcpy_kernel::Params::quick(), sub)?,
            Command::SincosOverlap(p) => *p = overlay(p, sincos_overlap::Params::quick(), sub)?,
            Command::Bounds(p) => *p = overlay(p, bounds::Params::quick(), sub)?,
            Command::CompareKernels(p) => *p = overlay(p, compare::Params::quick(), sub)?,
            _ => {}
        }
    }
    Ok(cli)
}

/// `quick` with every option the user gave explicitly taken from `given`.
fn overlay<P>(given: &P, quick: P, matches: Option<&ArgMatches>) -> Result<P, clap::Error>
where
    P: serde::Serialize + serde::de::DeserializeOwned,
{
    let to_json = |p: &P| serde_json::to_value(p).expect("params serialise");
    let (given, mut merged) = (to_json(given), to_json(&quick));
    if let (Some(matches), Some(given), Some(merged)) =
        (matches, given.as_object(), merged.as_object_mut())
    {
        for (field, value) in given {
            if matches.value_source(field) == Some(ValueSource::CommandLine) {
                merged.insert(field.clone(), value.clone());
            }
        }
    }
    serde_json::from_value(merged)
        .map_err(|err| clap::Error::raw(clap::error::ErrorKind::InvalidValue, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(args: &[&str]) -> Cli {
        parse(std::iter::once("streamlab").chain(args.iter().copied())).unwrap()
    }

    fn parse_err(args: &[&str]) -> clap::Error {
        parse(std::iter::once("streamlab").chain(args.iter().copied())).unwrap_err()
    }

    #[test]
    fn defaults_are_the_write_ups() {
        let Command::MatmulStreams(p) = parse_ok(&["matmul-streams"]).command else {
            panic!()
        };
        assert_eq!(p, matmul_streams::Params::default());
        let Command::SincosOverlap(p) = parse_ok(&["sincos-overlap"]).command else {
            panic!()
        };
        assert_eq!(
            (p.elements, p.threads, p.warmup, p.iterations, p.streams),
            (1 << 25, 1024, 100, 1000, 4)
        );
        let Command::MemcpyKernel(p) = parse_ok(&["memcpy-kernel"]).command else {
            panic!()
        };
        assert_eq!(p, memcpy_kernel::Params::default());
    }

    #[test]
    fn quick_keeps_explicit_options() {
        let cli = parse_ok(&[
            "--quick",
            "sincos-overlap",
            "--iterations",
            "7",
            "--stream-counts",
            "1,3",
        ]);
        let Command::SincosOverlap(p) = cli.command else {
            panic!()
        };
        assert_eq!(p.iterations, 7);
        assert_eq!(p.stream_counts, [1, 3]);
        assert_eq!(p.elements, sincos_overlap::Params::quick().elements);
        let Command::MemcpyKernel(p) =
            parse_ok(&["memcpy-kernel", "--quick", "--streams", "2..=4"]).command
        else {
            panic!()
        };
        assert_eq!((p.size, p.streams.start(), p.streams.end()), (16, 2, 4));
    }

    #[test]
    fn malformed_options_are_clap_usage_errors() {
        assert_eq!(
            parse_err(&["memcpy-kernel", "--cycles", "9..=3"]).exit_code(),
            2
        );
        assert_eq!(
            parse_err(&["matmul-streams", "--rows", "-3"]).exit_code(),
            2
        );
        assert_eq!(
            parse_err(&["sincos-overlap", "--streams", "x"]).exit_code(),
            2
        );
        assert_eq!(parse_err(&["no-such-command"]).exit_code(), 2);
        assert_eq!(parse_err(&["report"]).exit_code(), 2);
    }

    #[test]
    fn kernels_default_to_both_and_accept_one_set() {
        assert_eq!(parse_ok(&["run-all"]).kernels, KernelChoice::Both);
        assert_eq!(
            parse_ok(&["sincos-overlap", "--kernels", "rust"]).kernels,
            KernelChoice::Rust
        );
        assert_eq!(
            parse_err(&["run-all", "--kernels", "opencl"]).exit_code(),
            2
        );
    }

    #[test]
    fn global_options_parse_anywhere() {
        let cli = parse_ok(&["run-all", "--device", "3", "--out", "/tmp/x"]);
        assert_eq!(
            (cli.device, cli.out.as_deref()),
            (3, Some(std::path::Path::new("/tmp/x")))
        );
    }
}
