//! What each subcommand does, from parsed options to files on disk and a verdict.
use std::path::{Path, PathBuf};

use crate::baseline::{self, Availability, CudaKernels};
use crate::cli::{Cli, Command, KernelChoice};
use crate::compare::{self, CompareError};
use crate::experiments::{Context, UsageError, matmul_streams, memcpy_kernel, sincos_overlap};
use crate::kernels::KernelSet;
use crate::report::{self, ReportError, json};
use crate::results::{
    Bounds, BoundsSummary, ExperimentRatios, ExperimentsSummary, KernelComparison,
    MatmulStreamsResult, MatmulSummary, MemcpyKernelResult, MemcpySummary, RunSummary,
    RustOverCuda, SincosOverlapResult, SincosSummary, Verification, files,
};
use crate::runtime::{Gpu, Kernels, RuntimeError};

/// Why a command failed; usage errors exit with 2, everything else with 1.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error("the CUDA C++ kernels are unavailable: {0}")]
    Baseline(String),
    #[error("could not create the results folder {path}: {source}")]
    OutDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("verification failed (results written to {dir}): {detail}")]
    Verification { dir: PathBuf, detail: String },
}

impl AppError {
    pub fn exit_code(&self) -> i32 {
        match self {
            AppError::Usage(_) => 2,
            _ => 1,
        }
    }
}

/// Run the parsed command.
pub fn run(cli: Cli) -> Result<(), AppError> {
    let started_utc = crate::clock::now_rfc3339();
    match &cli.command {
        Command::MatmulStreams(p) => p.validate()?,
        Command::MemcpyKernel(p) => p.validate()?,
        Command::SincosOverlap(p) => p.validate()?,
        Command::Bounds(p) => p.validate()?,
        Command::CompareKernels(p) => p.validate()?,
        Command::Report { from } => {
            report::render(from)?;
            print!("{}", report::tables(&json::SavedRun::load(from)?));
            println!("\nreport: {}", from.join("report.html").display());
            return Ok(());
        }
        Command::DeviceInfo | Command::RunAll => {}
    }
    let gpu = Gpu::open(cli.device)?;
    if let Command::DeviceInfo = cli.command {
        print!("{}", report::table::device(gpu.info()));
        return Ok(());
    }
    let wants_cuda =
        matches!(cli.command, Command::CompareKernels(_)) || cli.kernels != KernelChoice::Rust;
    let cuda = if wants_cuda {
        cuda_kernels(&gpu, &cli)?
    } else {
        None
    };
    let mut sets = Vec::new();
    if cli.kernels != KernelChoice::Cuda {
        sets.push(*gpu.kernels());
    }
    sets.extend(cuda.as_ref().map(|c| c.kernels));
    let out = out_dir(cli.out.as_deref())?;
    eprint!("{}", report::table::device(gpu.info()));
    eprintln!("results: {}", out.display());
    let mut run = Run {
        gpu: &gpu,
        sets,
        started_utc,
        out: out.clone(),
        failures: Vec::new(),
    };
    match &cli.command {
        Command::MatmulStreams(p) => drop(run.matmul(p)?),
        Command::MemcpyKernel(p) => drop(run.memcpy(p)?),
        Command::SincosOverlap(p) => drop(run.sincos(p)?),
        Command::Bounds(p) => drop(run.bounds(p)?),
        Command::CompareKernels(p) => drop(run.compare(p, cuda.as_ref())?),
        Command::RunAll => run.all(cli.quick, cuda.as_ref())?,
        Command::DeviceInfo | Command::Report { .. } => unreachable!("handled above"),
    }
    match run.failures.is_empty() {
        true => Ok(()),
        false => Err(AppError::Verification {
            dir: out,
            detail: run.failures.join("; "),
        }),
    }
}

/// The CUDA C++ kernels, or `None` with a visible note when `--kernels both` and this
/// machine has no NVRTC; with `--kernels cuda` (or `compare-kernels`) that is an error.
fn cuda_kernels(gpu: &Gpu, cli: &Cli) -> Result<Option<CudaKernels>, AppError> {
    let required =
        cli.kernels == KernelChoice::Cuda || matches!(cli.command, Command::CompareKernels(_));
    let unavailable = |why: String| {
        if required {
            Err(AppError::Baseline(why))
        } else {
            eprintln!("note: running the Rust kernels only; {why}");
            Ok(None)
        }
    };
    match baseline::load(gpu) {
        Ok(Availability::Ready(cuda)) => Ok(Some(cuda)),
        Ok(Availability::NvrtcMissing(note)) => unavailable(note.to_string()),
        Err(err) => unavailable(err.to_string()),
    }
}

fn out_dir(requested: Option<&Path>) -> Result<PathBuf, AppError> {
    let path = requested
        .map(Path::to_owned)
        .unwrap_or_else(|| Path::new("results").join(crate::clock::now_compact()));
    std::fs::create_dir_all(&path).map_err(|source| AppError::OutDir {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// The result file of an experiment for a kernel set: `name.json` for Rust,
/// `name-cuda.json` for CUDA C++ (and the same stem for its CSV).
fn file_stem(experiment: &str, set: KernelSet) -> String {
    match set {
        KernelSet::Rust => experiment.to_owned(),
        KernelSet::Cuda => format!("{experiment}-cuda"),
    }
}

/// One invocation: the GPU, the kernel sets to run, where results go, and the
/// verification failures so far (reported after everything is written).
struct Run<'a> {
    gpu: &'a Gpu,
    sets: Vec<Kernels>,
    started_utc: String,
    out: PathBuf,
    failures: Vec<String>,
}

impl Run<'_> {
    fn context<'k>(&'k self, kernels: &'k Kernels) -> Context<'k> {
        Context {
            gpu: self.gpu,
            kernels,
            started_utc: self.started_utc.clone(),
        }
    }

    fn note(&mut self, verification: &Verification) {
        if !verification.passed {
            self.failures.push(verification.detail.clone());
        }
    }

    /// Run one experiment with every kernel set: write its JSON and CSV, print its table,
    /// and note a failed verification.
    fn experiment<R: serde::Serialize>(
        &mut self,
        name: &str,
        run: impl Fn(&Context) -> Result<R, RuntimeError>,
        output: Output<R>,
    ) -> Result<Vec<R>, AppError> {
        let mut results = Vec::new();
        for kernels in self.sets.clone() {
            let r = run(&self.context(&kernels))?;
            let stem = file_stem(name, kernels.set);
            json::write(&self.out, &format!("{stem}.json"), &r)?;
            report::write_file(&self.out, &format!("{stem}.csv"), &(output.csv)(&r))?;
            print!("\n{stem}\n{}", (output.table)(&r));
            self.note((output.verification)(&r));
            results.push(r);
        }
        Ok(results)
    }

    fn matmul(&mut self, p: &matmul_streams::Params) -> Result<Vec<MatmulStreamsResult>, AppError> {
        let output = Output {
            csv: report::csv::matmul_streams,
            table: report::table::matmul_streams,
            verification: |r| &r.verification,
        };
        self.experiment("matmul-streams", |ctx| matmul_streams::run(ctx, p), output)
    }

    fn memcpy(&mut self, p: &memcpy_kernel::Params) -> Result<Vec<MemcpyKernelResult>, AppError> {
        let output = Output {
            csv: report::csv::memcpy_kernel,
            table: report::table::memcpy_kernel,
            verification: |r| &r.verification,
        };
        self.experiment("memcpy-kernel", |ctx| memcpy_kernel::run(ctx, p), output)
    }

    fn sincos(&mut self, p: &sincos_overlap::Params) -> Result<Vec<SincosOverlapResult>, AppError> {
        let output = Output {
            csv: report::csv::sincos_overlap,
            table: report::table::sincos_overlap,
            verification: |r| &r.verification,
        };
        self.experiment("sincos-overlap", |ctx| sincos_overlap::run(ctx, p), output)
    }

    fn bounds(&mut self, p: &crate::bounds::Params) -> Result<Bounds, AppError> {
        let b = crate::bounds::measure(self.gpu, p)?;
        json::write(&self.out, files::BOUNDS, &b)?;
        print!("\nbounds\n{}", report::table::bounds(&b));
        Ok(b)
    }

    fn compare(
        &mut self,
        p: &compare::Params,
        cuda: Option<&CudaKernels>,
    ) -> Result<Option<KernelComparison>, AppError> {
        let Some(cuda) = cuda else { return Ok(None) };
        let r = match compare::run(self.gpu, cuda, p) {
            Ok(r) => r,
            Err(CompareError::Mismatch(r)) => *r,
            Err(CompareError::Runtime(err)) => return Err(err.into()),
        };
        json::write(&self.out, files::KERNEL_COMPARISON, &r)?;
        print!(
            "\nkernel comparison (Rust over CUDA C++)\n{}",
            report::table::kernel_comparison(&r)
        );
        self.note(&r.verification);
        Ok(Some(r))
    }

    /// `run-all`: bounds, kernel comparison, the three experiments with every kernel set,
    /// `summary.json`, the report, and the compact table.
    fn all(&mut self, quick: bool, cuda: Option<&CudaKernels>) -> Result<(), AppError> {
        fn pick<P>(quick: bool, small: P, full: P) -> P {
            if quick { small } else { full }
        }
        let bounds = self.bounds(&pick(
            quick,
            crate::bounds::Params::quick(),
            crate::bounds::Params::default(),
        ))?;
        let comparison = self.compare(
            &pick(quick, compare::Params::quick(), compare::Params::default()),
            cuda,
        )?;
        let s = self.sincos(&pick(
            quick,
            sincos_overlap::Params::quick(),
            sincos_overlap::Params::default(),
        ))?;
        let m = self.matmul(&pick(
            quick,
            matmul_streams::Params::quick(),
            matmul_streams::Params::default(),
        ))?;
        let k = self.memcpy(&pick(
            quick,
            memcpy_kernel::Params::quick(),
            memcpy_kernel::Params::run_all(),
        ))?;
        let of = |set| ByKernels {
            sincos: s.iter().find(|r| r.provenance.kernels == set),
            matmul: m.iter().find(|r| r.provenance.kernels == set),
            memcpy: k.iter().find(|r| r.provenance.kernels == set),
        };
        let (rust, cuda) = (of(KernelSet::Rust.label()), of(KernelSet::Cuda.label()));
        let provenance = self.context(&self.sets[0]).provenance();
        let summary = RunSummary {
            device: self.gpu.info().clone(),
            provenance,
            experiments: rust.summary(),
            bounds: Some(bounds_summary(&bounds)),
            rust_over_cuda: comparison.as_ref().and_then(rust_over_cuda),
            cuda_experiments: cuda.any().then(|| cuda.summary()),
            experiment_rust_over_cuda: cuda.any().then(|| experiment_ratios(&rust, &cuda)),
        };
        json::write(&self.out, files::SUMMARY, &summary)?;
        report::render(&self.out)?;
        print!("\nsummary\n{}", report::table::summary(&summary));
        println!("\nreport: {}", self.out.join("report.html").display());
        Ok(())
    }
}

/// How an experiment's result becomes files and text.
struct Output<R> {
    csv: fn(&R) -> String,
    table: fn(&R) -> String,
    verification: fn(&R) -> &Verification,
}

/// The results of one kernel set, where it ran.
struct ByKernels<'a> {
    sincos: Option<&'a SincosOverlapResult>,
    matmul: Option<&'a MatmulStreamsResult>,
    memcpy: Option<&'a MemcpyKernelResult>,
}

impl ByKernels<'_> {
    fn any(&self) -> bool {
        self.sincos.is_some() || self.matmul.is_some() || self.memcpy.is_some()
    }

    /// The `summary.json` headline figures.
    fn summary(&self) -> ExperimentsSummary {
        ExperimentsSummary {
            sincos_overlap: self.sincos.and_then(|r| {
                let best = r
                    .points
                    .iter()
                    .min_by(|a, b| a.time.summary.mean.total_cmp(&b.time.summary.mean))?;
                Some(SincosSummary {
                    verified: r.verification.passed,
                    sequential_ms: r.sequential.summary.mean,
                    best_async_ms: best.time.summary.mean,
                    best_async_variant: best.variant,
                    best_async_streams: best.streams,
                })
            }),
            matmul_streams: self.matmul.map(|r| MatmulSummary {
                verified: r.verification.passed,
                ms_by_streams: r.points.iter().map(|p| p.time.summary.mean).collect(),
                speedup_max_streams: r.points.last().map_or(f64::NAN, |p| p.speedup),
            }),
            memcpy_kernel: self.memcpy.map(|r| MemcpySummary {
                verified: r.verification.passed,
                num_streams: r.params.streams.start() as usize,
                best_speedup: r
                    .rows
                    .iter()
                    .map(|row| row.speedup)
                    .fold(f64::NAN, f64::max),
                breakeven_cycles: r.breakeven_cycles,
            }),
        }
    }
}

fn bounds_summary(b: &Bounds) -> BoundsSummary {
    BoundsSummary {
        h2d_ms: b.h2d_ms,
        d2h_ms: b.d2h_ms,
        h2d_gbps: b.h2d_gbps,
        d2h_gbps: b.d2h_gbps,
        bidirectional_gbps: b.bidirectional_gbps,
        d2d_gbps: b.d2d_gbps,
        launch_us: b.launch_us,
    }
}

/// Per kernel, the ratio of its first case (e.g. `add_kernel (cycles 256)`).
fn rust_over_cuda(c: &KernelComparison) -> Option<RustOverCuda> {
    let ratio = |name: &str| {
        c.kernels
            .iter()
            .find(|k| k.kernel == name || k.kernel.starts_with(&format!("{name} ")))
            .map(|k| k.ratio_median)
    };
    Some(RustOverCuda {
        fill: ratio("fill")?,
        matmul: ratio("matmul")?,
        add_kernel: ratio("add_kernel")?,
        sincos: ratio("sincos")?,
    })
}

/// Total time of the configurations both kernel sets measured, Rust over CUDA C++.
fn experiment_ratios(rust: &ByKernels, cuda: &ByKernels) -> ExperimentRatios {
    let total = |times: Vec<(String, f64)>, other: &[(String, f64)]| -> (f64, f64) {
        times
            .iter()
            .filter_map(|(key, t)| other.iter().find(|(k, _)| k == key).map(|(_, u)| (*t, *u)))
            .fold((0.0, 0.0), |(a, b), (t, u)| (a + t, b + u))
    };
    let ratio = |r: Vec<(String, f64)>, c: Vec<(String, f64)>| {
        let (a, b) = total(r, &c);
        (b > 0.0).then(|| a / b)
    };
    let sincos = |r: &SincosOverlapResult| -> Vec<(String, f64)> {
        std::iter::once(("sequential".to_owned(), r.sequential.summary.mean))
            .chain(
                r.points
                    .iter()
                    .map(|p| (format!("{:?}{}", p.variant, p.streams), p.time.summary.mean)),
            )
            .collect()
    };
    let matmul = |r: &MatmulStreamsResult| -> Vec<(String, f64)> {
        r.points
            .iter()
            .map(|p| (p.streams.to_string(), p.time.summary.mean))
            .collect()
    };
    let memcpy = |r: &MemcpyKernelResult| -> Vec<(String, f64)> {
        r.rows
            .iter()
            .map(|row| {
                (
                    format!("{}/{}", row.streams, row.cycles),
                    row.total.summary.mean + row.concurrent.summary.mean,
                )
            })
            .collect()
    };
    ExperimentRatios {
        sincos_overlap: rust
            .sincos
            .zip(cuda.sincos)
            .and_then(|(r, c)| ratio(sincos(r), sincos(c))),
        matmul_streams: rust
            .matmul
            .zip(cuda.matmul)
            .and_then(|(r, c)| ratio(matmul(r), matmul(c))),
        memcpy_kernel: rust
            .memcpy
            .zip(cuda.memcpy)
            .and_then(|(r, c)| ratio(memcpy(r), memcpy(c))),
    }
}
