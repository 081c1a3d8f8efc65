//! Every number derived from a kernel comparison: per case the fastest spelling on each
//! side and their ratio with its verdict; per kernel and form the ratio at the write-ups'
//! shape, and its median and worst over every shape timed; and what safety costs (safe
//! Rust over the fastest unchecked C++ of the same algorithm).

use super::{Cache, KERNELS, KernelCase, KernelComparison, Origin, SpellingRun};
use crate::card::KernelCard;
use crate::experiments::prelude::*;
use crate::stats::Quartiles;
use crate::verdict;
use std::borrow::Cow;

/// One case, the fastest Rust spelling against the fastest CUDA C++ one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseRatio {
    pub kernel: String,
    pub case: String,
    /// As [`KernelCase::form`].
    pub form: Option<KernelForm>,
    /// As [`KernelCase::cache`].
    pub cache: Option<Cache>,
    /// Whether the inputs fit in the GPU's L2 (none where a run did not record either).
    pub fits_l2: Option<bool>,
    pub origin: Origin,
    pub rust: Quartiles,
    pub cuda: Quartiles,
    /// Median Rust time over median CUDA C++ time, each side's fastest spelling: below 1
    /// Rust is faster.
    pub ratio: f64,
    /// Rust against CUDA C++ by the one rule of [`crate::verdict`].
    pub verdict: Verdict,
    /// The fastest spelling's entry on each side.
    pub rust_spelling: String,
    pub cuda_spelling: String,
    /// The case as saved: its spellings (none in runs from before spellings) and launch.
    #[serde(skip)]
    pub saved: KernelCase,
    /// The fastest spellings' launches, Rust's and CUDA C++'s (their noise is the tables'
    /// and the measured rows `compare` holds).
    #[serde(skip)]
    pub times: [Series; 2],
    /// The fastest spellings' cards, Rust and CUDA C++.
    pub cards: Option<[KernelCard; 2]>,
    /// As [`KernelCase::max_ulps`].
    pub max_ulps: Option<[f64; 2]>,
    /// Rust over CUDA C++ (the fastest spellings) at each of the case's placements.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_placement: Vec<f64>,
    /// The lowest and the highest of `by_placement`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_range: Option<[f64; 2]>,
    /// The largest relative noise of one placement's samples (those two spellings'): a
    /// range of `by_placement` wider than it is the places' doing, not the launches'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_noise: Option<f64>,
}

/// Per kernel, Rust over CUDA C++ in one form at the write-ups' shape (warm), the
/// kernels both sides write alike (sincos: [`ComparisonAnalysis::libraries`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelRatios {
    pub fill: f64,
    pub matmul: f64,
    pub add_kernel: f64,
}

/// What a ratio over the shapes measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// The fastest Rust spelling of a form over the fastest C++ spelling of the same form.
    Form(KernelForm),
    /// The fastest safe Rust spelling over the fastest unchecked C++ spelling (plain or
    /// tuned) of the same algorithm: what safety costs.
    Safety,
}

impl Measure {
    pub fn label(self) -> String {
        match self {
            Measure::Form(form) => format!("{} Rust / {} C++", form.label(), form.label()),
            Measure::Safety => "safe Rust / fastest unchecked C++".into(),
        }
    }

    /// The most Rust may take of the C++ it is held against at every write-ups' shape, and
    /// at the worst shape timed (none outside [`TARGETED`]).
    pub fn targets(self) -> Option<[f64; 2]> {
        match self {
            Measure::Form(KernelForm::Tuned) => Some([1.01, 1.05]),
            Measure::Safety => Some([1.05, 1.10]),
            Measure::Form(_) => None,
        }
    }
}

/// The measures held to targets: the tuned form (against the best C++ of its algorithm)
/// and safety's cost.
pub const TARGETED: [Measure; 2] = [Measure::Form(KernelForm::Tuned), Measure::Safety];

/// One kernel's ratio over every shape timed (one cache state).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRatio {
    pub kernel: String,
    pub measure: Measure,
    pub cache: Option<Cache>,
    /// The worst over the write-ups' shapes (matmul has two: the wiki's and the square),
    /// and its case.
    pub write_up: Option<f64>,
    pub write_up_case: String,
    /// The median and the worst over every shape timed, and the worst's case.
    pub median: f64,
    pub worst: f64,
    pub worst_case: String,
    pub shapes: usize,
    /// Both targets met ([`Measure::targets`]; none where the measure has none).
    pub within_targets: Option<bool>,
}

/// What safety costs in one case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SafetyCost {
    pub kernel: String,
    pub case: String,
    pub cache: Option<Cache>,
    /// Safe Rust over the fastest safe C++ spelling.
    pub over_cuda_safe: f64,
    /// Safe Rust over the fastest unchecked C++ spelling of the same algorithm.
    pub over_cuda_unchecked: f64,
    /// That spelling's entry.
    pub unchecked_spelling: String,
    /// Safe Rust over the fastest unchecked Rust spelling: what `unsafe` buys.
    pub over_rust_tuned: f64,
}

/// Everything derived from a kernel comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonAnalysis {
    pub cases: Vec<CaseRatio>,
    /// Per kernel, its write-ups' case in the tuned form (or its only form).
    pub tuned: Option<KernelRatios>,
    /// Per kernel, its write-ups' case in the safe form.
    pub safe: Option<KernelRatios>,
    /// Per kernel, its write-ups' case in the plain form (or its only form).
    pub plain: Option<KernelRatios>,
    /// Per case with a safe form, what safety costs.
    pub safety: Vec<SafetyCost>,
    /// Per kernel, measure and cache, the ratio over every shape timed.
    pub sweep: Vec<SweepRatio>,
    /// sincos in each form at the write-ups' shape, the `libm` crate (Rust) over CUDA's
    /// libdevice (C++): a comparison of math libraries.
    pub libraries: Vec<(KernelForm, f64)>,
}

/// Whether a case of form `form` stands for `wanted` (see [`KernelCase::form`]).
fn stands_for(form: Option<KernelForm>, wanted: KernelForm) -> bool {
    form.map_or(wanted != KernelForm::Safe, |f| f == wanted)
}

/// A case's spellings: every one it timed, or in runs from before spellings the one
/// Rust and the one CUDA C++ entry it timed, named as its form's kernel.
pub fn spellings(case: &KernelCase) -> Cow<'_, [SpellingRun]> {
    if !case.spellings.is_empty() {
        return Cow::Borrowed(&case.spellings);
    }
    let entry = match case.form {
        Some(KernelForm::Plain) => format!("{}_plain", case.kernel),
        Some(KernelForm::Safe) => format!("{}_safe", case.kernel),
        _ => case.kernel.clone(),
    };
    let one = |side: usize, language| {
        Some(SpellingRun {
            language,
            entry: entry.clone(),
            how: "the one spelling timed".into(),
            times: [&case.rust, &case.cuda][side].clone()?,
            by_place: (case.placements.iter())
                .filter_map(|p| [&p.rust, &p.cuda][side].clone())
                .collect(),
            card: case.cards.map(|c| c[side]),
            verification: case.verification.clone(),
        })
    };
    let runs = [one(0, KernelSet::Rust), one(1, KernelSet::Cuda)];
    Cow::Owned(runs.into_iter().flatten().collect())
}

/// The fastest (lowest median) of `runs` in `language`.
fn fastest(runs: &[SpellingRun], language: KernelSet) -> Option<&SpellingRun> {
    (runs.iter())
        .filter(|s| s.language == language)
        .min_by(|a, b| a.times.median().total_cmp(&b.times.median()))
}

pub(super) fn case_ratio(c: &KernelCase, l2_bytes: u64) -> Option<CaseRatio> {
    let runs = spellings(c);
    let (rust, cuda) = (
        fastest(&runs, KernelSet::Rust)?,
        fastest(&runs, KernelSet::Cuda)?,
    );
    let by_placement: Vec<f64> = (rust.by_place.iter().zip(&cuda.by_place))
        .map(|(r, k)| r.median() / k.median())
        .collect();
    let placement_noise = (rust.by_place.iter().chain(&cuda.by_place))
        .map(Series::noise)
        .reduce(f64::max);
    Some(CaseRatio {
        kernel: c.kernel.clone(),
        case: c.case.clone(),
        form: c.form,
        cache: c.cache,
        fits_l2: (c.input_bytes.filter(|_| l2_bytes > 0)).map(|bytes| bytes <= l2_bytes),
        origin: c.origin,
        rust: rust.times.quartiles(),
        cuda: cuda.times.quartiles(),
        ratio: rust.times.median() / cuda.times.median(),
        verdict: verdict::judge(
            &Rule::within(super::CompareKernels::NAME),
            (&cuda.times).into(),
            (&rust.times).into(),
        )
        .verdict,
        rust_spelling: rust.entry.clone(),
        cuda_spelling: cuda.entry.clone(),
        saved: c.clone(),
        cards: rust.card.zip(cuda.card).map(|(r, k)| [r, k]),
        times: [rust.times.clone(), cuda.times.clone()],
        max_ulps: c.max_ulps,
        placement_range: span(by_placement.iter().copied()),
        placement_noise: placement_noise.filter(|_| !by_placement.is_empty()),
        by_placement,
    })
}

/// Derive everything from `c`.
pub fn analyze(c: &KernelComparison) -> ComparisonAnalysis {
    let cases: Vec<CaseRatio> = (c.cases.iter())
        .filter_map(|k| case_ratio(k, c.run.device.l2_bytes))
        .collect();
    let write_up = |kernel: &str, form: KernelForm| {
        (cases.iter()).find(|k| {
            k.kernel == kernel
                && stands_for(k.form, form)
                && k.origin == Origin::Defaults
                && k.cache != Some(Cache::Cold)
        })
    };
    let ratios = |form: KernelForm| {
        let of = |kernel: &str| write_up(kernel, form).map(|k| k.ratio);
        Some(KernelRatios {
            fill: of(KERNELS[0])?,
            matmul: of(KERNELS[1])?,
            add_kernel: of(KERNELS[2])?,
        })
    };
    let safety = safety_costs(&cases);
    let sweep = sweep_ratios(&cases, &safety);
    let safety = safety.into_iter().map(|(_, cost)| cost).collect();
    ComparisonAnalysis {
        tuned: ratios(KernelForm::Tuned),
        safe: ratios(KernelForm::Safe),
        plain: ratios(KernelForm::Plain),
        libraries: (KernelForm::ALL.into_iter())
            .filter_map(|form| Some((form, write_up(KERNELS[3], form)?.ratio)))
            .collect(),
        sweep,
        safety,
        cases,
    }
}

/// Each safe case with its cost against the fastest safe C++, unchecked C++ and unchecked
/// Rust spellings of the same shape and cache state.
fn safety_costs(cases: &[CaseRatio]) -> Vec<(&CaseRatio, SafetyCost)> {
    (cases.iter())
        .filter(|k| k.form == Some(KernelForm::Safe))
        .filter_map(|k| {
            // The plain and the tuned case of its shape (one where the kernel has one
            // unchecked code).
            let unchecked = (cases.iter()).filter(|u| {
                (u.kernel == k.kernel && u.case == k.case && u.cache == k.cache)
                    && u.form != Some(KernelForm::Safe)
            });
            let cuda =
                (unchecked.clone()).min_by(|a, b| a.cuda.median.total_cmp(&b.cuda.median))?;
            let rust = unchecked.map(|u| u.rust.median).min_by(f64::total_cmp)?;
            let cost = SafetyCost {
                kernel: k.kernel.clone(),
                case: k.case.clone(),
                cache: k.cache,
                over_cuda_safe: k.ratio,
                over_cuda_unchecked: k.rust.median / cuda.cuda.median,
                unchecked_spelling: cuda.cuda_spelling.clone(),
                over_rust_tuned: k.rust.median / rust,
            };
            Some((k, cost))
        })
        .collect()
}

/// The lowest and the highest of `values`.
pub(super) fn span(values: impl IntoIterator<Item = f64>) -> Option<[f64; 2]> {
    values.into_iter().fold(None, |s, x| {
        Some(s.map_or([x, x], |[lo, hi]: [f64; 2]| [lo.min(x), hi.max(x)]))
    })
}

/// Per kernel (the ones both sides write alike), measure and cache state: the worst ratio
/// over the write-ups' shapes, and the median and the worst over every shape timed.
fn sweep_ratios(cases: &[CaseRatio], safety: &[(&CaseRatio, SafetyCost)]) -> Vec<SweepRatio> {
    // (measure, case, ratio) of every case
    let forms = KernelForm::ALL.into_iter().flat_map(|form| {
        let cases = cases.iter().filter(move |k| stands_for(k.form, form));
        cases.map(move |k| (Measure::Form(form), k, k.ratio))
    });
    let costs = (safety.iter()).map(|(k, s)| (Measure::Safety, *k, s.over_cuda_unchecked));
    let points: Vec<_> = forms.chain(costs).collect();
    let measures = (KernelForm::ALL.map(Measure::Form).into_iter()).chain([Measure::Safety]);
    let caches = [None, Some(Cache::Warm), Some(Cache::Cold)];
    let groups = (KERNELS[..3].iter()).flat_map(|&kernel| {
        let by_cache = move |measure| caches.map(|cache| (kernel, measure, cache));
        measures.clone().flat_map(by_cache)
    });
    let sweep = groups.filter_map(|(kernel, measure, cache)| {
        let shapes: Vec<_> = (points.iter())
            .filter(|p| p.0 == measure && p.1.kernel == kernel && p.1.cache == cache)
            .collect();
        let worst_of = |write_ups: bool| {
            let of = (shapes.iter()).filter(|p| !write_ups || p.1.origin == Origin::Defaults);
            of.max_by(|a, b| a.2.total_cmp(&b.2))
        };
        let (worst, write_up) = (worst_of(false)?, worst_of(true));
        let ratios: Vec<f64> = shapes.iter().map(|p| p.2).collect();
        Some(SweepRatio {
            kernel: kernel.to_owned(),
            measure,
            cache,
            write_up: write_up.map(|p| p.2),
            write_up_case: write_up.map_or(String::new(), |p| p.1.case.clone()),
            median: stats::quantile(&stats::sorted(&ratios), 0.5),
            worst: worst.2,
            worst_case: worst.1.case.clone(),
            shapes: shapes.len(),
            within_targets: (measure.targets())
                .map(|[at, most]| write_up.is_none_or(|w| w.2 <= at) && worst.2 <= most),
        })
    });
    sweep.collect()
}
