//! A run's `summary.json` from its analysed results ([`summarize`]), and its headlines
//! as lines ([`headlines`], [`summary_text`]): every experiment the registry lists (with
//! `null` where a kernel-set experiment or a fact did not run), then any the registry
//! does not list.
use std::fmt::Write;

use super::SavedRun;
use crate::derived::rates::{NOISY_LINK, link_moved};
use crate::derived::summary::{Entries, Json, LinkSteady, RunStatus, RunSummary};
use crate::experiment::{self, Analysis, MeasuredRow};
use crate::experiments;
use crate::report::table;
use crate::saved::KernelSet;

/// An experiment as the summary lists it: its name, whether it runs with both kernel
/// sets, and its facts' keys.
struct Listed {
    name: &'static str,
    uses_kernel_sets: bool,
    facts: &'static [&'static str],
}

/// The registry's experiments, then those `run` holds that it does not list.
fn listed(run: &SavedRun) -> Vec<Listed> {
    let mut out: Vec<Listed> = (experiments::ALL.iter())
        .map(|e| Listed {
            name: e.name(),
            uses_kernel_sets: e.uses_kernel_sets(),
            facts: e.facts(),
        })
        .collect();
    for h in run.held() {
        if !out.iter().any(|l| l.name == h.name()) {
            out.push(Listed {
                name: h.name(),
                uses_kernel_sets: h.uses_kernel_sets(),
                facts: h.facts(),
            });
        }
    }
    out
}

/// The headline of everything in `run`; `None` when it holds no result to name its
/// device.
pub fn summarize(run: &SavedRun, status: RunStatus) -> Option<RunSummary> {
    let (device, mut provenance) = run.header()?;
    // The run's duration is the summary's own, not its first experiment's.
    provenance.duration_s = None;
    let mut experiments = Entries::default();
    let mut cuda = Entries::default();
    let mut ratios = Entries::default();
    let mut facts = Entries::default();
    let mut moved = Entries::default();
    for l in listed(run) {
        let rust = run.analysis(l.name, KernelSet::Rust);
        if let Some(probe) = rust.and_then(|a| a.provenance.link.as_ref()) {
            moved.push(l.name, experiment::json(&link_moved(probe).2));
        }
        let headline = |a: Option<&Analysis>| a.and_then(|a| a.summary.headline.clone());
        if l.uses_kernel_sets {
            let twin = run.analysis(l.name, KernelSet::Cuda);
            experiments.push(l.name, headline(rust).unwrap_or(Json::Null));
            cuda.push(l.name, headline(twin).unwrap_or(Json::Null));
            let ratio = rust
                .zip(twin)
                .and_then(|(r, c)| rust_over_cuda(&r.rows, &c.rows));
            ratios.push(l.name, experiment::json(&ratio));
        } else if let Some(h) = headline(rust) {
            experiments.push(l.name, h);
        }
        for (i, key) in l.facts.iter().enumerate() {
            let value = rust.and_then(|a| a.summary.facts.get(i).cloned());
            facts.push(key, value.unwrap_or(Json::Null));
        }
    }
    let any_cuda = cuda.any();
    let moves: Vec<f64> = (moved.0.iter())
        .filter_map(|(_, v)| match v {
            Json::Number(n) => n.as_f64(),
            _ => None,
        })
        .collect();
    let link_steady = (!moves.is_empty()).then(|| LinkSteady {
        experiments: moves.len(),
        steady: moves.iter().filter(|m| **m <= NOISY_LINK).count(),
    });
    Some(RunSummary {
        device,
        provenance,
        complete: status.steps_not_run.is_empty() && status.interrupted_by.is_none(),
        interrupted_by: status.interrupted_by,
        steps_not_run: status.steps_not_run,
        experiments,
        facts,
        cuda_experiments: any_cuda.then_some(cuda),
        experiment_rust_over_cuda: any_cuda.then_some(ratios),
        link_moved: link_steady.map(|_| moved),
        link_steady,
        duration_s: status.duration_s,
    })
}

/// Every time both kernel sets measured, summed, Rust over CUDA C++.
fn rust_over_cuda(rust: &[MeasuredRow], cuda: &[MeasuredRow]) -> Option<f64> {
    let (r, c) = (rust.iter())
        .filter_map(|t| {
            (cuda.iter())
                .find(|u| u.key == t.key && u.unit == t.unit)
                .map(|u| (t.value, u.value))
        })
        .fold((0.0, 0.0), |(a, b), (t, u)| (a + t, b + u));
    (c > 0.0).then(|| r / c)
}

/// The headline lines of `a` and its facts' lines, labelled: (label, line).
pub fn lines(a: &Analysis) -> Vec<(String, String)> {
    let label = match a.set {
        KernelSet::Rust => "headline".to_owned(),
        KernelSet::Cuda => "headline, CUDA C++ kernels".to_owned(),
    };
    let mut out: Vec<(String, String)> = a
        .summary
        .line
        .iter()
        .map(|l| (label.clone(), l.clone()))
        .collect();
    if a.set == KernelSet::Rust {
        out.extend(a.summary.fact_lines.iter().cloned());
    }
    out
}

/// One line per experiment and kernel set of `run`, then one per fact (the limits, the
/// kernel ratios), labelled.
pub fn headlines(run: &SavedRun) -> Vec<(String, String)> {
    let mut heads = Vec::new();
    let mut facts = Vec::new();
    for a in run.analyses() {
        if let Some(line) = &a.summary.line {
            heads.push((table::heading(a.name, a.set), line.clone()));
        }
        if a.set == KernelSet::Rust {
            facts.extend(a.summary.fact_lines.iter().cloned());
        }
    }
    heads.extend(facts);
    heads
}

/// The compact summary `run-all` prints last: the device, whether the run is complete,
/// and [`headlines`].
pub fn summary_text(run: &SavedRun, s: &RunSummary) -> String {
    let mut out = table::device(&s.device);
    if !s.complete {
        let _ = writeln!(
            out,
            "INCOMPLETE ({}): not run or not finished: {}",
            s.interrupted_by.as_deref().unwrap_or("stopped"),
            s.steps_not_run.join(", ")
        );
    }
    for (name, line) in headlines(run) {
        let _ = writeln!(out, "{name:<19} {line}");
    }
    out
}
