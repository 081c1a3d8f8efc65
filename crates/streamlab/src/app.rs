//! What each subcommand does, from parsed options to files on disk and a verdict.
use std::path::{Path, PathBuf};

use crate::cli::{Cli, Command};
use crate::experiments::{Context, UsageError, matmul_streams, memcpy_kernel, sincos_overlap};
use crate::report::{self, ReportError, json};
use crate::results::{
    ExperimentsSummary, MatmulStreamsResult, MatmulSummary, MemcpyKernelResult, MemcpySummary,
    RunSummary, SincosOverlapResult, SincosSummary, files,
};
use crate::runtime::{Gpu, RuntimeError};

/// Why a command failed; usage errors exit with 2, everything else with 1.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Report(#[from] ReportError),
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
        Command::Report { from } => return report::render(from).map_err(AppError::from),
        Command::DeviceInfo | Command::RunAll => {}
    }
    let gpu = Gpu::open(cli.device)?;
    let ctx = Context {
        gpu: &gpu,
        kernels: gpu.kernels(),
        started_utc,
    };
    if let Command::DeviceInfo = cli.command {
        print!("{}", report::table::device(gpu.info()));
        return Ok(());
    }
    let out = out_dir(cli.out.as_deref())?;
    eprint!("{}", report::table::device(gpu.info()));
    eprintln!("results: {}", out.display());
    let failures = match &cli.command {
        Command::MatmulStreams(p) => matmul(&ctx, p, &out)?.1,
        Command::MemcpyKernel(p) => memcpy(&ctx, p, &out)?.1,
        Command::SincosOverlap(p) => sincos(&ctx, p, &out)?.1,
        Command::RunAll => run_all(&ctx, cli.quick, &out)?,
        Command::DeviceInfo | Command::Report { .. } => unreachable!("handled above"),
    };
    match failures {
        Some(detail) => Err(AppError::Verification { dir: out, detail }),
        None => Ok(()),
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

/// The failure detail of a verification, if it failed.
fn failure(v: &crate::results::Verification) -> Option<String> {
    (!v.passed).then(|| v.detail.clone())
}

fn matmul(
    ctx: &Context,
    p: &matmul_streams::Params,
    out: &Path,
) -> Result<(MatmulStreamsResult, Option<String>), AppError> {
    let r = matmul_streams::run(ctx, p)?;
    json::write(out, files::MATMUL_STREAMS, &r)?;
    report::write_file(out, "matmul-streams.csv", &report::csv::matmul_streams(&r))?;
    print!("\nmatmul-streams\n{}", report::table::matmul_streams(&r));
    let failed = failure(&r.verification);
    Ok((r, failed))
}

fn memcpy(
    ctx: &Context,
    p: &memcpy_kernel::Params,
    out: &Path,
) -> Result<(MemcpyKernelResult, Option<String>), AppError> {
    let r = memcpy_kernel::run(ctx, p)?;
    json::write(out, files::MEMCPY_KERNEL, &r)?;
    report::write_file(out, "memcpy-kernel.csv", &report::csv::memcpy_kernel(&r))?;
    print!("\nmemcpy-kernel\n{}", report::table::memcpy_kernel(&r));
    let failed = failure(&r.verification);
    Ok((r, failed))
}

fn sincos(
    ctx: &Context,
    p: &sincos_overlap::Params,
    out: &Path,
) -> Result<(SincosOverlapResult, Option<String>), AppError> {
    let r = sincos_overlap::run(ctx, p)?;
    json::write(out, files::SINCOS_OVERLAP, &r)?;
    report::write_file(out, "sincos-overlap.csv", &report::csv::sincos_overlap(&r))?;
    print!("\nsincos-overlap\n{}", report::table::sincos_overlap(&r));
    let failed = failure(&r.verification);
    Ok((r, failed))
}

fn run_all(ctx: &Context, quick: bool, out: &Path) -> Result<Option<String>, AppError> {
    fn pick<P>(quick: bool, small: P, full: P) -> P {
        if quick { small } else { full }
    }
    let (s, s_fail) = sincos(
        ctx,
        &pick(
            quick,
            sincos_overlap::Params::quick(),
            sincos_overlap::Params::default(),
        ),
        out,
    )?;
    let (m, m_fail) = matmul(
        ctx,
        &pick(
            quick,
            matmul_streams::Params::quick(),
            matmul_streams::Params::default(),
        ),
        out,
    )?;
    let (k, k_fail) = memcpy(
        ctx,
        &pick(
            quick,
            memcpy_kernel::Params::quick(),
            memcpy_kernel::Params::run_all(),
        ),
        out,
    )?;
    let summary = summarize(ctx, Some(&s), Some(&m), Some(&k));
    json::write(out, files::SUMMARY, &summary)?;
    report::render(out)?;
    print!("\nsummary\n{}", report::table::summary(&summary));
    Ok([s_fail, m_fail, k_fail]
        .into_iter()
        .flatten()
        .reduce(|a, b| format!("{a}; {b}")))
}

/// The `summary.json` headline of whichever experiments ran.
pub fn summarize(
    ctx: &Context,
    sincos: Option<&SincosOverlapResult>,
    matmul: Option<&MatmulStreamsResult>,
    memcpy: Option<&MemcpyKernelResult>,
) -> RunSummary {
    RunSummary {
        device: ctx.gpu.info().clone(),
        provenance: ctx.provenance(),
        experiments: summarize_experiments(sincos, matmul, memcpy),
    }
}

/// The per-experiment headline figures.
pub fn summarize_experiments(
    sincos: Option<&SincosOverlapResult>,
    matmul: Option<&MatmulStreamsResult>,
    memcpy: Option<&MemcpyKernelResult>,
) -> ExperimentsSummary {
    ExperimentsSummary {
        sincos_overlap: sincos.and_then(|r| {
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
        matmul_streams: matmul.map(|r| MatmulSummary {
            verified: r.verification.passed,
            ms_by_streams: r.points.iter().map(|p| p.time.summary.mean).collect(),
            speedup_max_streams: r.points.last().map_or(f64::NAN, |p| p.speedup),
        }),
        memcpy_kernel: memcpy.map(|r| MemcpySummary {
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
