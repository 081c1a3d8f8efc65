//! `summary.json`: the stable, machine-readable headline of a run, whose keys other tools
//! read.
use serde::{Deserialize, Serialize};

use crate::saved::{DeviceInfo, Provenance};

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// False when the run was stopped before every step ran.
    pub complete: bool,
    /// The signal that stopped the run, e.g. "SIGINT".
    pub interrupted_by: Option<String>,
    /// The steps of the run that did not run or did not finish.
    pub steps_not_run: Vec<String>,
    /// The headline of each experiment run with the Rust kernels, by experiment.
    pub experiments: Entries,
    /// What experiments add at the top level: the measured limits (`bounds`), the kernel
    /// ratios (`rust_over_cuda`, `rust_over_cuda_safe`, `rust_over_cuda_plain`).
    #[serde(flatten)]
    pub facts: Entries,
    /// The headlines of the experiments that also ran with the CUDA C++ kernels.
    pub cuda_experiments: Option<Entries>,
    /// Per such experiment: total time of every configuration measured with both kernel
    /// sets, Rust over CUDA C++.
    pub experiment_rust_over_cuda: Option<Entries>,
    /// Per experiment: how far the link's both-ways rate moved between the probes before
    /// and after it (their medians), relative to the faster (summaries of 2026-11-25 and
    /// before lack it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_moved: Option<Entries>,
    /// How many experiments probed the link, and in how many it moved no more than
    /// [`crate::derived::rates::NOISY_LINK`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_steady: Option<LinkSteady>,
    /// Seconds from the run's start (opening the GPU) to its summary (runs before
    /// 2026-11-25 17:30 UTC did not record it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// The questions the report answers first, each from the experiment that measures
    /// it, in the questions' order (summaries before 2026-11-28 lack them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Answered>,
}

/// One question answered in a sentence by one experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    pub question: String,
    pub experiment: String,
    pub answer: String,
}

/// How many experiments saw the link hold still.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinkSteady {
    pub experiments: usize,
    pub steady: usize,
}

impl RunSummary {
    /// The headline of experiment `name` (Rust kernels), if it has one.
    pub fn experiment(&self, name: &str) -> Option<&Json> {
        self.experiments.get(name).filter(|v| !v.is_null())
    }

    /// "incomplete run (stopped by SIGINT; not run or not finished: …)", if it is one.
    pub fn incomplete(&self) -> Option<String> {
        if self.complete {
            return None;
        }
        let signal = (self.interrupted_by.iter()).map(|signal| format!("stopped by {signal}"));
        let steps = (!self.steps_not_run.is_empty())
            .then(|| format!("not run or not finished: {}", self.steps_not_run.join(", ")));
        let parts: Vec<String> = signal.chain(steps).collect();
        Some(match parts.is_empty() {
            true => "incomplete run".to_owned(),
            false => format!("incomplete run ({})", parts.join("; ")),
        })
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunStatus {
    pub interrupted_by: Option<String>,
    pub steps_not_run: Vec<String>,
    /// Seconds from the run's start to its summary.
    pub duration_s: Option<f64>,
}

/// A JSON value. serde_json's `preserve_order` keeps an object's keys in the order they
/// were written, so each experiment's headline reads field by field, in its own order.
pub type Json = serde_json::Value;

/// Named JSON values in a fixed order, written as one JSON object.
pub type Entries = serde_json::Map<String, Json>;

/// Take `other`'s value for every key whose value in `entries` is `null` or missing.
pub fn keep_where_null(entries: &mut Entries, other: &Entries) {
    for (key, value) in other {
        let kept = entries.entry(key.clone()).or_insert(Json::Null);
        if kept.is_null() {
            *kept = value.clone();
        }
    }
}
