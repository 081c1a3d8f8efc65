//! What every experiment's saved result is built from: the device, the provenance, the
//! verification, stage samples, link probes, traced timelines ([`timeline`]), the
//! parameters' shared parts and the files' names.
mod params;

pub use params::{
    MAX_STREAMS, Params, Repeats, SizeSweep, UsageError, check_sample_ms, clap_defaults, count,
};
pub use streamlab_record::{
    CudaBuild, DeviceInfo, IssueOrder, KernelForm, KernelSet, clocks, links, timeline,
};

use serde::{Deserialize, Serialize};

use crate::stats::Series;

/// File names inside a results folder.
pub mod files {
    use super::KernelSet;

    pub const SUMMARY: &str = "summary.json";
    pub const REPORT_MD: &str = "report.md";
    pub const REPORT_HTML: &str = "report.html";
    /// What `compare` saves beside its report: every compared row with its verdict.
    pub const COMPARISON: &str = "comparison.json";

    /// The JSON of experiment `name` measured with `set`: `name.json` for the Rust
    /// kernels, `name-cuda.json` for the CUDA C++ twins.
    pub fn json(name: &str, set: KernelSet) -> String {
        format!("{}.json", stem(name, set))
    }

    /// The stem of every file of experiment `name` measured with `set`.
    pub fn stem(name: &str, set: KernelSet) -> String {
        match set {
            KernelSet::Rust => name.to_owned(),
            KernelSet::Cuda => format!("{name}-cuda"),
        }
    }
}

/// An H100-like GPU at `ordinal`, for results made up in tests.
#[cfg(test)]
pub fn made_up_device(ordinal: usize) -> DeviceInfo {
    DeviceInfo {
        ordinal,
        name: "GPU".into(),
        compute_capability: (9, 0),
        sm_count: 132,
        copy_engines: 3,
        concurrent_kernels: true,
        total_memory_bytes: 80 << 30,
        l2_bytes: 50 << 20,
        driver_cuda_version: "12.8".into(),
        pcie_link: None,
    }
}

/// `kind` on `stream` in iteration 0 from `start_ms` to `end_ms`, ready at 0, 32 MiB
/// where it moves data, for timelines made up in tests.
#[cfg(test)]
pub fn made_up_op(
    kind: timeline::OpKind,
    stream: usize,
    start_ms: f64,
    end_ms: f64,
) -> timeline::TimelineOp {
    timeline::TimelineOp {
        stream,
        iteration: 0,
        kind,
        ready_ms: Some(0.0),
        start_ms,
        end_ms,
        bytes: (kind != timeline::OpKind::Kernel).then_some(32 << 20),
        pageable: false,
        synchronous: false,
        call: None,
    }
}

/// One iteration of `ops` on `streams` streams from the GPU's records, timed at
/// `timed_ms`, for timelines made up in tests.
#[cfg(test)]
pub fn made_up_timeline(
    streams: usize,
    ops: Vec<timeline::TimelineOp>,
    timed_ms: f64,
) -> timeline::Timeline {
    timeline::Timeline {
        title: "t".into(),
        source: timeline::TraceSource::Cupti,
        streams,
        other_lanes: Vec::new(),
        devices: Vec::new(),
        iterations: 1,
        ops,
        reference: timeline::TraceReference {
            timed_ms,
            back_to_back: false,
            median_ms: None,
            rates: None,
        },
        retraced: Vec::new(),
    }
}

#[cfg(test)]
impl<P> RunRecord<P> {
    /// A complete, verified run with `params` on [`made_up_device`], for results made
    /// up in tests.
    pub fn made_up(params: P) -> RunRecord<P> {
        RunRecord {
            params,
            device: made_up_device(0),
            provenance: Provenance::made_up(),
            verification: Verification {
                passed: true,
                checked: 1,
                mismatches: 0,
                max_abs_error: 0.0,
                detail: "ok".into(),
            },
        }
    }
}

#[cfg(test)]
impl Provenance {
    /// A complete run of the tuned Rust kernels, for results made up in tests.
    pub fn made_up() -> Provenance {
        Provenance {
            streamlab_version: "0".into(),
            started_utc: String::new(),
            ptx_target: "sm_90".into(),
            kernels: KernelSet::Rust,
            form: KernelForm::Tuned,
            complete: true,
            link: None,
            build: None,
            host: None,
            duration_s: None,
            clocks: None,
            gpus: Vec::new(),
            nccl: None,
        }
    }
}

/// Versions and provenance of a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub streamlab_version: String,
    /// UTC time the run started, RFC 3339.
    pub started_utc: String,
    /// `.target` of the embedded Rust PTX (e.g. sm_90).
    pub ptx_target: String,
    /// Which kernel set produced the timed results.
    pub kernels: KernelSet,
    /// Which form of the kernels ran.
    pub form: KernelForm,
    /// False when the run was stopped before every configuration was measured.
    pub complete: bool,
    /// The link probed just before and just after this experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkProbe>,
    /// How the binary was built (not recorded before 2026-11-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildInfo>,
    /// What it ran on beside the GPU, and how it was started (not recorded before
    /// 2026-11-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostInfo>,
    /// Seconds this result's measuring took, from the experiment's start to its result
    /// (runs before 2026-11-25 17:30 UTC did not record it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// The session's GPU's clocks just before and just after this experiment (not
    /// recorded before 2026-11-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks: Option<clocks::ClockProbe>,
    /// Every GPU of an experiment that ran on several, in its order: each one's clocks
    /// around it and its host link (empty for one GPU, and before 2026-11-28).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<clocks::GpuProbe>,
    /// The NCCL of an experiment whose GPUs talk through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl: Option<NcclUsed>,
}

/// The NCCL a result's collectives ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NcclUsed {
    /// The library's full path, and where it was found.
    pub path: String,
    pub found_in: String,
    pub version: String,
    /// Every `NCCL_*` variable in force, `NAME=value`.
    pub variables: Vec<String>,
}

/// What is said of a fact that a results folder of an earlier format did not record.
pub const NOT_RECORDED: &str = "not recorded";

/// How the `streamlab` binary that measured a result was built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// The commit it was built from; `None` when built outside a git checkout.
    pub commit: Option<String>,
    /// Whether the checkout's tracked files differed from that commit.
    pub dirty: Option<bool>,
    /// The compiler of the host code: `rustc -V` and its LLVM.
    pub host_rustc: String,
    /// The compiler of the Rust kernels (rustc's NVPTX backend) and its LLVM.
    pub kernel_rustc: String,
    /// The cargo profile, e.g. "release".
    pub profile: String,
}

impl BuildInfo {
    /// The commit as reports show it: "0123456789ab", "0123456789ab with uncommitted
    /// changes", or "not recorded".
    pub fn commit_text(&self) -> String {
        let Some(commit) = &self.commit else {
            return NOT_RECORDED.to_owned();
        };
        let short = commit.get(..12).unwrap_or(commit);
        match self.dirty {
            Some(true) => format!("{short} with uncommitted changes"),
            _ => short.to_owned(),
        }
    }
}

/// The machine and command a run had beside its GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// The NVIDIA driver's version, e.g. "580.159.04", where the system says it.
    pub driver_version: Option<String>,
    /// The NVRTC that compiled the CUDA C++ twins, e.g. "NVRTC 13.0"; `None` without it.
    pub nvrtc: Option<String>,
    /// The CPU's model name, where the system says it.
    pub cpu: Option<String>,
    /// The command line, as typed.
    pub command_line: String,
}

/// The link's rates probed over the same 32 MiB each way just before and just after an
/// experiment: how much the machine's other traffic moved them while it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkProbe {
    pub before: StageTimes,
    pub after: StageTimes,
}

/// Copy rates in GB/s of large copies (fixed costs in the noise): each way alone and
/// both ways at once, in total.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinkRates {
    pub htod_gbps: f64,
    pub dtoh_gbps: f64,
    pub both_gbps: f64,
}

/// What every result records of its run, saved at the top level of its JSON beside the
/// experiment's own fields (`#[serde(flatten)]`): its parameters, the GPU, the provenance
/// and the verification of every output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord<P> {
    pub params: P,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    pub verification: Verification,
}

/// Outcome of checking every output element against a reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    pub passed: bool,
    /// Elements compared.
    pub checked: u64,
    /// Elements outside the tolerance.
    pub mismatches: u64,
    /// Largest absolute difference from the reference (NaN where an output was NaN).
    pub max_abs_error: f64,
    /// What was checked, and the first mismatch if any.
    pub detail: String,
}

/// What a verdict folds, read from its detail: how many single checks, how many of them
/// failed, and the detail of the last one (or of the first that failed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Folded<'a> {
    pub checks: usize,
    pub failed: usize,
    pub detail: &'a str,
}

impl Verification {
    /// The single checks this verdict folds: "17 checks passed; 2 checks passed; X"
    /// (a fold of folds, as runs before 2026-11-25 17:30 UTC wrote them) is 18 checks
    /// ending in X.
    pub fn folded(&self) -> Folded<'_> {
        let (mut checks, mut failed, mut rest) = (1usize, usize::from(!self.passed), &*self.detail);
        loop {
            if let Some((n, tail)) = rest.split_once(" checks passed; ")
                && let Ok(n) = n.parse::<usize>()
            {
                checks = (checks + n).saturating_sub(1);
                rest = tail;
                continue;
            }
            if let Some((head, tail)) = rest.split_once(" checks failed; ")
                && let Some((f, n)) = head.split_once(" of ")
                && let (Ok(f), Ok(n)) = (f.parse::<usize>(), n.parse::<usize>())
            {
                checks = (checks + n).saturating_sub(1);
                failed = (failed + f).saturating_sub(1);
                rest = tail;
                continue;
            }
            break;
        }
        Folded {
            checks,
            failed,
            detail: rest,
        }
    }

    /// The verdict as the report says it, e.g. "19 checks passed (1154764 elements); the
    /// last: …".
    pub fn sentence(&self) -> String {
        let f = self.folded();
        if self.passed && f.checks <= 1 {
            return f.detail.to_owned();
        }
        let (checks, detail) = (f.checks, f.detail);
        if self.passed {
            let elements = self.checked;
            return format!("{checks} checks passed ({elements} elements); the last: {detail}");
        }
        format!(
            "{} of {checks} checks FAILED; the first: {detail}",
            f.failed.max(1)
        )
    }
}

/// The parts of a chunked copy → kernel → copy schedule, each run on its own at full
/// speed over the same chunks, in the same run: the stages of the schedule's bound. Each
/// sample is the time of one pass over the whole data (milliseconds), the mean over
/// `passes` passes back to back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTimes {
    /// Chunks the data is split into (one stream each in the schedule).
    pub chunks: usize,
    /// Bytes of the whole data, each way.
    pub bytes: u64,
    pub passes: usize,
    /// Every chunk copied host to device, back to back on one stream.
    pub htod: Series,
    /// Every chunk copied device to host, back to back on one stream.
    pub dtoh: Series,
    /// Every chunk copied in on one stream and out on another, at once: until both are
    /// done.
    pub both: Series,
    /// During `both`, until the copies in were done.
    pub both_htod: Series,
    /// During `both`, until the copies out were done.
    pub both_dtoh: Series,
    /// The chunks' kernels, one chunk per stream, all at once; `None` where the
    /// experiment times its kernels otherwise.
    pub kernels: Option<Series>,
}

impl Provenance {
    /// Why the GPUs of this result ran slower than they can, where they did
    /// ([`clocks::ClockProbe::held_back`]), each GPU named for an experiment of several.
    pub fn held_back(&self) -> Option<String> {
        if self.gpus.is_empty() {
            return self.clocks.as_ref().and_then(clocks::ClockProbe::held_back);
        }
        let why: Vec<String> = (self.gpus.iter())
            .filter_map(|g| Some(format!("GPU {}: {}", g.ordinal, g.clocks.held_back()?)))
            .collect();
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// Whether every GPU's clocks were read before and after this result's work: where
    /// not, whether a GPU held back during it is not known.
    pub fn clocks_read(&self) -> bool {
        let read = |c: &clocks::ClockProbe| matches!(c, clocks::ClockProbe::Read { .. });
        if self.gpus.is_empty() {
            self.clocks.as_ref().is_some_and(read)
        } else {
            self.gpus.iter().all(|g| read(&g.clocks))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Verification;

    #[test]
    fn a_fold_of_folds_reads_as_its_single_checks() {
        let verdict = |passed: bool, detail: &str| Verification {
            passed,
            checked: 1000,
            mismatches: 0,
            max_abs_error: 0.0,
            detail: detail.to_owned(),
        };
        let old = verdict(
            true,
            "17 checks passed; 2 checks passed; 2 checks passed; x: all",
        );
        assert_eq!((old.folded().checks, old.folded().detail), (19, "x: all"));
        let said = "19 checks passed (1000 elements); the last: x: all";
        assert_eq!(old.sentence(), said);
        let one = verdict(true, "copied: all 4 elements identical");
        assert_eq!(one.sentence(), "copied: all 4 elements identical");
        let failed = verdict(
            false,
            "2 of 9 checks failed; 1 of 3 checks failed; y: 4 wrong",
        );
        let said = "2 of 11 checks FAILED; the first: y: 4 wrong";
        assert_eq!(failed.sentence(), said);
    }
}
