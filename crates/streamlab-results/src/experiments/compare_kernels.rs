//! compare-kernels: each Rust kernel against its CUDA C++ twin, in every form (plain,
//! safe and tuned), on the experiments' buffers and launch shapes: per case the quartiles
//! of both languages and the ratio of medians, and per kernel the headline ratio of each
//! form (`summary.json`'s `rust_over_cuda`, `rust_over_cuda_safe` and
//! `rust_over_cuda_plain`).
use crate::card::KernelCard;
use crate::derived::summary::Json;
use serde::{Deserialize, Serialize};

use crate::experiment::{self, Experiment, MS, MeasuredRow, With};
use crate::report::ReportError;
use crate::report::chart::{BOUND_COLOR, BarSeries, Level, PALETTE, XAxis, YScale};
use crate::report::figures::{FigureModel, blank};
use crate::report::section::{Section, draw};
use crate::report::table::{Columns, Table, noise, num};
use crate::saved::{CudaBuild, DeviceInfo, KernelForm, Provenance, UsageError, Verification};
use crate::stats::{Quartiles, Series};
use crate::verdict::{self, Rule, Verdict};

/// The compare-kernels experiment.
pub struct CompareKernels;

/// What to compare; shapes are the experiments' defaults.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Timed launches of each kernel in each language and form (matmul's shared among its
    /// placements).
    #[arg(long, default_value_t = 100,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub launches: usize,
    /// Untimed launches of each before timing.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// matmul's inner dimension (A is 32 × aligned, B aligned × 16; at most 2^24).
    #[arg(long, default_value_t = 131_072,
          value_parser = clap::value_parser!(u32).range(1..=1 << 24))]
    pub aligned: u32,
    /// matmul's second case: a SQUARE × SQUARE output, one thread per cell, enough threads
    /// to fill the GPU (the first case, the wiki's 32 × 16, is latency-bound).
    #[arg(long, default_value_t = 512,
          value_parser = clap::value_parser!(u32).range(1..=32_768))]
    // 0 (and `square_inner` 0) in runs from before this case.
    #[serde(default)]
    pub square: u32,
    /// The square case's inner dimension (at most 2^24).
    #[arg(long, default_value_t = 2048,
          value_parser = clap::value_parser!(u32).range(1..=1 << 24))]
    #[serde(default)]
    pub square_inner: u32,
    /// add_kernel's array in M ints (2^20 ints each).
    #[arg(long, default_value_t = 128,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub add_size: usize,
    /// add_kernel's cycles, one case each, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "256,0",
          value_parser = clap::value_parser!(i32).range(0..))]
    pub add_cycles: Vec<i32>,
    /// sincos' array in floats.
    #[arg(long, default_value_t = 1 << 25,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=u32::MAX as u64))]
    pub sincos_elements: usize,
    /// Places in GPU memory matmul's inputs are timed at, visited in order and back again,
    /// --launches shared among the visits: placement k puts A k × 2 MiB into one
    /// allocation and B (PLACEMENTS − 1 − k) × 2 MiB after A's span (what a latency-bound
    /// kernel takes can depend on where its inputs lie).
    #[arg(long, default_value_t = 4,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    // 1 in runs from before placements.
    #[serde(default = "one_placement")]
    pub placements: usize,
}

/// One placement, or one visit of one.
fn one_placement() -> usize {
    1
}

/// How far apart [`Params::placements`] put an input: the GPU's large page.
pub const PLACEMENT_STEP_BYTES: usize = 2 << 20;

impl Default for Params {
    /// The command line's defaults: the `#[arg]` attributes above are their one source.
    fn default() -> Params {
        crate::saved::clap_defaults()
    }
}

impl crate::saved::Params for Params {
    fn quick() -> Params {
        Params {
            launches: 20,
            warmup: 2,
            aligned: 8192,
            square: 128,
            square_inner: 512,
            add_size: 16,
            sincos_elements: 1 << 22,
            placements: 2,
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        if self.add_cycles.is_empty() {
            return Err(UsageError::new("--add-cycles needs at least one value"));
        }
        if self.placements > 1 && self.launches < 2 * self.placements {
            return Err(UsageError::new(format!(
                "--launches {} is too few for --placements {}: each placement is visited twice, with a launch or more each; give --launches {} or more, or fewer --placements",
                self.launches,
                self.placements,
                2 * self.placements
            )));
        }
        Ok(())
    }
}

/// One kernel case in one form, timed as Rust and as CUDA C++ from launches alternated
/// on one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelCase {
    /// The kernel, e.g. "add_kernel".
    pub kernel: String,
    /// The case within the kernel, e.g. "cycles 256" (empty where there is one).
    pub case: String,
    /// `None` for one code in every form: `fill`'s plain and tuned forms (its safe form
    /// is a case of its own), and the math library kernels.
    pub form: Option<KernelForm>,
    /// The launch shape and sizes, in words.
    pub launch: String,
    pub rust: Series,
    pub cuda: Series,
    /// Both outputs against the CPU reference and against each other.
    pub verification: Verification,
    /// The Rust and the CUDA C++ entry's cards (none in runs from before cards).
    #[serde(default)]
    pub cards: Option<[KernelCard; 2]>,
    /// For a math library kernel, the Rust and the CUDA C++ output's largest error in
    /// units in the last place against an f64 reference.
    #[serde(default)]
    pub max_ulps: Option<[f64; 2]>,
    /// Where the case was timed at several places in memory ([`Params::placements`]),
    /// each place's launches; `rust` and `cuda` then hold all of them, place by place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placements: Vec<Placement>,
}

/// One place in GPU memory a case's inputs were timed at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// Each input's start, in bytes from the start of the one allocation holding them.
    pub offsets_bytes: Vec<usize>,
    /// How many times the place was visited, its launches split among the visits (1 in
    /// runs from before the visits there and back).
    #[serde(default = "one_placement")]
    pub visits: usize,
    pub rust: Series,
    pub cuda: Series,
}

/// Result of compare-kernels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelComparison {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    pub cuda_build: CudaBuild,
    pub cases: Vec<KernelCase>,
    pub verification: Verification,
}

/// The kernels every comparison covers, in table order.
pub const KERNELS: [&str; 4] = ["fill", "matmul", "add_kernel", "sincos"];

/// Whether a case of form `form` stands for `wanted` (see [`KernelCase::form`]).
fn stands_for(form: Option<KernelForm>, wanted: KernelForm) -> bool {
    form.map_or(wanted != KernelForm::Safe, |f| f == wanted)
}

/// One case, Rust against CUDA C++.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRatio {
    pub kernel: String,
    pub case: String,
    /// As [`KernelCase::form`].
    pub form: Option<KernelForm>,
    pub rust: Quartiles,
    pub cuda: Quartiles,
    /// Relative noise of the Rust and the CUDA C++ samples.
    pub rust_noise: f64,
    pub cuda_noise: f64,
    /// Median Rust time over median CUDA C++ time: below 1 Rust is faster.
    pub ratio: f64,
    /// Rust against CUDA C++ by the one rule of [`crate::verdict`]: faster, slower, the
    /// same, or too noisy to say.
    pub verdict: Verdict,
    /// As [`KernelCase::cards`].
    #[serde(default)]
    pub cards: Option<[KernelCard; 2]>,
    /// As [`KernelCase::max_ulps`].
    #[serde(default)]
    pub max_ulps: Option<[f64; 2]>,
    /// Median Rust time over median CUDA C++ time at each of the case's placements, in
    /// order (empty where it was timed at one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_placement: Vec<f64>,
    /// The lowest and the highest of `by_placement`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_range: Option<[f64; 2]>,
    /// The largest relative noise of one placement's Rust or CUDA C++ samples: a range of
    /// `by_placement` wider than it is the places' doing, not the launches'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_noise: Option<f64>,
}

/// Everything derived from a kernel comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonAnalysis {
    pub cases: Vec<CaseRatio>,
    /// Per kernel, its first case in the tuned form (or its only form).
    pub tuned: Option<KernelRatios>,
    /// Per kernel, its first case in the safe form.
    #[serde(default)]
    pub safe: Option<KernelRatios>,
    /// Per kernel, its first case in the plain form (or its only form).
    pub plain: Option<KernelRatios>,
    /// Per case with a safe form, what safety costs (none in runs from before this table).
    #[serde(default)]
    pub safety: Vec<SafetyCost>,
}

/// The most a safe Rust kernel may take of its CUDA C++ safe twin's time.
pub const SAFE_TWIN_TARGET: f64 = 1.05;
/// The most a safe Rust kernel may take of the time of the C++ kernel of the same
/// algorithm with no checks ([`unchecked_form`]).
pub const UNCHECKED_TARGET: f64 = 1.10;

/// The C++ form that runs the safe form's algorithm with no checks: for `matmul` the plain
/// form (the safe form keeps the naive loop; the tuned one batches its loads), for every
/// other kernel the tuned form (the safe forms keep the tuned algorithm).
pub fn unchecked_form(kernel: &str) -> KernelForm {
    if kernel == KERNELS[1] {
        KernelForm::Plain
    } else {
        KernelForm::Tuned
    }
}

/// What safety costs in one case: the safe Rust kernel's median time against three others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SafetyCost {
    pub kernel: String,
    pub case: String,
    /// Safe Rust over its CUDA C++ safe twin.
    pub over_cuda_safe: f64,
    /// Safe Rust over the C++ kernel of the same algorithm with no checks.
    pub over_cuda_unchecked: f64,
    /// Which C++ form that is ([`unchecked_form`]).
    pub unchecked_form: KernelForm,
    /// Safe Rust over tuned Rust: what the safe form gives up against `unsafe`.
    pub over_rust_tuned: f64,
    /// Both targets met: at most [`SAFE_TWIN_TARGET`] and [`UNCHECKED_TARGET`].
    pub within_targets: bool,
}

/// Each safe case against the C++ safe twin, the unchecked C++ kernel and tuned Rust.
fn safety_costs(cases: &[CaseRatio]) -> Vec<SafetyCost> {
    let median = |kernel: &str, case: &str, form: KernelForm, rust: bool| {
        (cases.iter())
            .find(|k| k.kernel == kernel && k.case == case && stands_for(k.form, form))
            .map(|k| if rust { k.rust.median } else { k.cuda.median })
    };
    (cases.iter())
        .filter(|k| k.form == Some(KernelForm::Safe))
        .filter_map(|k| {
            let unchecked = unchecked_form(&k.kernel);
            let over = |form, rust| Some(k.rust.median / median(&k.kernel, &k.case, form, rust)?);
            let (over_cuda_safe, over_cuda_unchecked) = (k.ratio, over(unchecked, false)?);
            Some(SafetyCost {
                kernel: k.kernel.clone(),
                case: k.case.clone(),
                over_cuda_safe,
                over_cuda_unchecked,
                unchecked_form: unchecked,
                over_rust_tuned: over(KernelForm::Tuned, true)?,
                within_targets: over_cuda_safe <= SAFE_TWIN_TARGET
                    && over_cuda_unchecked <= UNCHECKED_TARGET,
            })
        })
        .collect()
}

/// The safety table: one row per safe case.
fn safety_columns<'a>() -> Columns<'a, SafetyCost> {
    Columns::new()
        .show("kernel", |k: &SafetyCost| k.kernel.clone())
        .show("case", |k| k.case.clone())
        .show("safe Rust / safe C++", |k| num(k.over_cuda_safe, 3))
        .show("safe Rust / unchecked C++", |k| {
            format!(
                "{} ({} C++)",
                num(k.over_cuda_unchecked, 3),
                k.unchecked_form.label()
            )
        })
        .show("safe Rust / tuned Rust", |k| num(k.over_rust_tuned, 3))
        .show("within both targets", |k| {
            if k.within_targets { "yes" } else { "no" }.into()
        })
}

fn case_ratio(c: &KernelCase) -> CaseRatio {
    let by_placement: Vec<f64> = (c.placements.iter())
        .map(|p| p.rust.median() / p.cuda.median())
        .collect();
    let placement_range =
        by_placement
            .iter()
            .fold(None, |range: Option<[f64; 2]>, &r| match range {
                None => Some([r, r]),
                Some([lo, hi]) => Some([f64::min(lo, r), f64::max(hi, r)]),
            });
    let placement_noise = (c.placements.iter())
        .flat_map(|p| [p.rust.noise(), p.cuda.noise()])
        .reduce(f64::max);
    CaseRatio {
        kernel: c.kernel.clone(),
        case: c.case.clone(),
        form: c.form,
        rust: c.rust.quartiles(),
        cuda: c.cuda.quartiles(),
        rust_noise: c.rust.noise(),
        cuda_noise: c.cuda.noise(),
        ratio: c.rust.median() / c.cuda.median(),
        verdict: verdict::judge(&Rule::default(), (&c.cuda).into(), (&c.rust).into(), 0.0).verdict,
        cards: c.cards,
        max_ulps: c.max_ulps,
        by_placement,
        placement_range,
        placement_noise,
    }
}

/// Derive everything from `c`.
fn analyze(c: &KernelComparison) -> ComparisonAnalysis {
    let cases: Vec<CaseRatio> = c.cases.iter().map(case_ratio).collect();
    let ratios = |form: KernelForm| {
        let of = |kernel: &str| {
            (cases.iter())
                .find(|k| k.kernel == kernel && stands_for(k.form, form))
                .map(|k| k.ratio)
        };
        Some(KernelRatios {
            fill: of(KERNELS[0])?,
            matmul: of(KERNELS[1])?,
            add_kernel: of(KERNELS[2])?,
            sincos: of(KERNELS[3])?,
        })
    };
    ComparisonAnalysis {
        tuned: ratios(KernelForm::Tuned),
        safe: ratios(KernelForm::Safe),
        plain: ratios(KernelForm::Plain),
        safety: safety_costs(&cases),
        cases,
    }
}

/// Median-time ratios per kernel, Rust over CUDA C++.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelRatios {
    pub fill: f64,
    pub matmul: f64,
    pub add_kernel: f64,
    pub sincos: f64,
}

/// The one declaration of the table and the CSV: a row per case.
fn columns(c: &KernelComparison) -> Columns<'_, CaseRatio> {
    let quartiles =
        |q: &Quartiles| format!("{} ({}–{})", num(q.median, 4), num(q.q1, 4), num(q.q3, 4));
    Columns::new()
        .both(
            "kernel",
            |k: &CaseRatio| k.kernel.clone(),
            "kernel",
            |k| k.kernel.clone(),
        )
        .both("case", |k| k.case.clone(), "case", |k| k.case.clone())
        .both(
            "form",
            |k| k.form.map_or("one form".into(), |f| f.label().to_owned()),
            "form",
            |k| k.form.map_or("one".into(), |f| f.label().to_owned()),
        )
        .both(
            "Rust",
            move |k| quartiles(&k.rust),
            "rust_median_ms",
            |k| format!("{:.5}", k.rust.median),
        )
        .both(
            "Rust noise",
            |k| noise(k.rust_noise),
            "rust_noise",
            |k| format!("{:.4}", k.rust_noise),
        )
        .both(
            "CUDA C++",
            move |k| quartiles(&k.cuda),
            "cuda_median_ms",
            |k| format!("{:.5}", k.cuda.median),
        )
        .both(
            "C++ noise",
            |k| noise(k.cuda_noise),
            "cuda_noise",
            |k| format!("{:.4}", k.cuda_noise),
        )
        .both(
            "Rust / C++",
            |k| num(k.ratio, 3),
            "rust_over_cuda",
            |k| format!("{:.4}", k.ratio),
        )
        .both(
            "Rust against C++",
            |k| k.verdict.text().into(),
            "rust_against_cuda",
            |k| k.verdict.key().into(),
        )
        .then(c.params.placements > 1, |columns| {
            columns.both(
                "Rust / C++ by placement",
                |k| {
                    k.placement_range.map_or(String::new(), |[lo, hi]| {
                        format!(
                            "{}–{} over {} (each place's noise up to {})",
                            num(lo, 3),
                            num(hi, 3),
                            k.by_placement.len(),
                            k.placement_noise.map_or("–".into(), noise)
                        )
                    })
                },
                "rust_over_cuda_by_placement",
                |k| {
                    (k.by_placement.iter())
                        .map(|r| format!("{r:.4}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                },
            )
        })
        .raw("rust_max_ulps", |k| {
            k.max_ulps.map_or(String::new(), |u| format!("{:.3}", u[0]))
        })
        .raw("cuda_max_ulps", |k| {
            k.max_ulps.map_or(String::new(), |u| format!("{:.3}", u[1]))
        })
        .show("launch", move |k| {
            (c.cases.iter())
                .find(|s| s.kernel == k.kernel && s.case == k.case && s.form == k.form)
                .map_or(String::new(), |s| s.launch.clone())
        })
}

/// The cards' columns, Rust beside CUDA C++ in each cell ("40 / 38"); on screen only
/// (the CSV has each figure in its own column: [`card_csv_columns`]).
fn card_columns<'a>() -> Columns<'a, CaseRatio> {
    let pair = |f: fn(&KernelCard) -> String| {
        move |k: &CaseRatio| {
            k.cards
                .map_or("–".into(), |[r, c]| format!("{} / {}", f(&r), f(&c)))
        }
    };
    Columns::new()
        .show("kernel", |k: &CaseRatio| k.kernel.clone())
        .show("case", |k| k.case.clone())
        .show("form", |k| {
            k.form.map_or("one form".into(), |f| f.label().to_owned())
        })
        .show("registers", pair(|c| c.driver.registers.to_string()))
        .show("local bytes", pair(|c| c.driver.local_bytes.to_string()))
        .show(
            "shared bytes",
            pair(|c| c.driver.static_shared_bytes.to_string()),
        )
        .show(
            "max threads",
            pair(|c| c.driver.max_threads_per_block.to_string()),
        )
        .show(
            "occupancy",
            pair(|c| format!("{:.0}%", 100.0 * c.driver.occupancy)),
        )
        .show("global loads", pair(|c| c.ptx.global_loads.to_string()))
        .show("global stores", pair(|c| c.ptx.global_stores.to_string()))
        .show("FMAs", pair(|c| c.ptx.fmas.to_string()))
        .show("traps", pair(|c| c.ptx.traps.to_string()))
        .show(
            "hottest loop",
            pair(|c| {
                c.ptx
                    .hottest_loop_instructions
                    .map_or("none".into(), |n| n.to_string())
            }),
        )
}

/// The cards' figures as CSV columns of the main table, Rust then CUDA C++.
fn card_csv_columns<'a>(columns: Columns<'a, CaseRatio>) -> Columns<'a, CaseRatio> {
    let mut columns = columns;
    type Figure = (&'static str, &'static str, fn(&KernelCard) -> String);
    let figures: [Figure; 10] = [
        ("rust_registers", "cuda_registers", |c| {
            c.driver.registers.to_string()
        }),
        ("rust_local_bytes", "cuda_local_bytes", |c| {
            c.driver.local_bytes.to_string()
        }),
        ("rust_shared_bytes", "cuda_shared_bytes", |c| {
            c.driver.static_shared_bytes.to_string()
        }),
        ("rust_max_threads", "cuda_max_threads", |c| {
            c.driver.max_threads_per_block.to_string()
        }),
        ("rust_occupancy", "cuda_occupancy", |c| {
            format!("{:.4}", c.driver.occupancy)
        }),
        ("rust_global_loads", "cuda_global_loads", |c| {
            c.ptx.global_loads.to_string()
        }),
        ("rust_global_stores", "cuda_global_stores", |c| {
            c.ptx.global_stores.to_string()
        }),
        ("rust_fmas", "cuda_fmas", |c| c.ptx.fmas.to_string()),
        ("rust_traps", "cuda_traps", |c| c.ptx.traps.to_string()),
        ("rust_hottest_loop", "cuda_hottest_loop", |c| {
            c.ptx
                .hottest_loop_instructions
                .map_or(String::new(), |n| n.to_string())
        }),
    ];
    for (rust, cuda, f) in figures {
        columns = columns
            .raw(rust, move |k| k.cards.map_or(String::new(), |[r, _]| f(&r)))
            .raw(cuda, move |k| k.cards.map_or(String::new(), |[_, c]| f(&c)));
    }
    columns
}

/// "Whose math": the math library kernels' times and largest errors, the `libm` crate's
/// (Rust) against CUDA's (C++).
fn math_columns<'a>() -> Columns<'a, CaseRatio> {
    let ulps = |i: usize| move |k: &CaseRatio| k.max_ulps.map_or("–".into(), |u| num(u[i], 2));
    Columns::new()
        .show("function", |k: &CaseRatio| k.kernel.clone())
        .show("libm crate (Rust), ms", |k| num(k.rust.median, 4))
        .show("CUDA (C++), ms", |k| num(k.cuda.median, 4))
        .show("Rust / C++", |k| num(k.ratio, 3))
        .show("libm crate, largest error (ulps)", ulps(0))
        .show("CUDA, largest error (ulps)", ulps(1))
}

/// compare-kernels: Rust time over CUDA C++ time per kernel case, in each form.
fn figures(a: &ComparisonAnalysis) -> Vec<FigureModel> {
    let mut cases: Vec<(String, String)> = Vec::new();
    for c in &a.cases {
        let key = (c.kernel.clone(), c.case.clone());
        if !cases.contains(&key) {
            cases.push(key);
        }
    }
    // Each entry drawn once: in its form's series, or in "one form" where its code is
    // the same in every form.
    let ratio = |key: &(String, String), form: Option<KernelForm>| {
        (a.cases.iter())
            .find(|c| (&c.kernel, &c.case) == (&key.0, &key.1) && c.form == form)
            .map_or(f64::NAN, |c| c.ratio)
    };
    let mut chart = blank(
        "Rust kernels against their CUDA C++ twins (median time ratio; below 1: Rust faster)"
            .into(),
        "kernel",
        "Rust time / CUDA C++ time",
        XAxis::Categories(
            (cases.iter())
                .map(|(k, case)| {
                    if case.is_empty() {
                        k.clone()
                    } else {
                        format!("{k} {case}")
                    }
                })
                .collect(),
        ),
        YScale::Log,
    );
    let forms = (KernelForm::ALL.into_iter().map(Some)).chain([None]);
    for (i, form) in forms.enumerate() {
        let values: Vec<f64> = cases.iter().map(|key| ratio(key, form)).collect();
        if values.iter().all(|v| v.is_nan()) {
            continue;
        }
        chart.bars.push(BarSeries {
            name: form.map_or("one form: Rust / C++".into(), |f| {
                format!("{} Rust / {} C++", f.label(), f.label())
            }),
            color: PALETTE[i],
            values,
            whiskers: None,
        });
    }
    chart.levels.push(Level {
        name: "same time".into(),
        color: BOUND_COLOR,
        y: 1.0,
    });
    vec![FigureModel::chart("compare-kernels.svg".into(), chart)]
}

impl Experiment for CompareKernels {
    const NAME: &'static str = "compare-kernels";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = KernelComparison;
    type Derived = ComparisonAnalysis;

    experiment::result_fields!();

    fn measured_rows(c: &KernelComparison, _derived: &Self::Derived) -> Vec<MeasuredRow> {
        let mut rows = Vec::new();
        for k in &c.cases {
            let form = k.form.map_or("", KernelForm::label);
            let words: Vec<&str> = [k.kernel.as_str(), k.case.as_str(), form]
                .into_iter()
                .filter(|w| !w.is_empty())
                .collect();
            let (key, label) = (words.join("/"), words.join(" "));
            rows.push(MeasuredRow::median(
                format!("{key}/rust"),
                format!("{label}, Rust"),
                &k.rust,
                MS,
            ));
            rows.push(MeasuredRow::median(
                format!("{key}/cuda"),
                format!("{label}, CUDA C++"),
                &k.cuda,
                MS,
            ));
        }
        rows
    }

    fn derive(c: &KernelComparison) -> ComparisonAnalysis {
        analyze(c)
    }

    fn tables(
        c: &KernelComparison,
        derived: &Self::Derived,
        _cuda: Option<With<'_, Self>>,
    ) -> Vec<Table> {
        let caption = "median ms per launch (quartiles in brackets)".to_owned();
        let cases = &derived.cases;
        let mut tables = vec![columns(c).table(Some(caption), cases)];
        let math: Vec<CaseRatio> = (cases.iter())
            .filter(|k| k.max_ulps.is_some())
            .cloned()
            .collect();
        if !math.is_empty() {
            let caption = "whose math: each library's function alone over the blog's indices (x = 0, 1, 2, …), median ms per launch, and its largest error against an f64 reference".to_owned();
            tables.push(math_columns().table(Some(caption), &math));
        }
        if !derived.safety.is_empty() {
            let caption = format!(
                "what safety costs: each safe Rust kernel's median time over its CUDA C++ safe twin's (target ×{SAFE_TWIN_TARGET:.2}), over the C++ kernel of the same algorithm with no checks (target ×{UNCHECKED_TARGET:.2}), and over tuned Rust"
            );
            tables.push(safety_columns().table(Some(caption), &derived.safety));
        }
        if cases.iter().any(|k| k.cards.is_some()) {
            let caption = "each entry's card, Rust / CUDA C++: the driver's figures at the launch shape, and the PTX's counts (over the entry and what it calls; the hottest loop is the largest innermost one, in instructions)".to_owned();
            tables.push(card_columns().table(Some(caption), cases));
        }
        tables
    }

    fn csv(c: &KernelComparison, derived: &Self::Derived) -> Option<String> {
        Some(card_csv_columns(columns(c)).csv(&derived.cases))
    }

    fn section(
        c: &KernelComparison,
        derived: &Self::Derived,
        _cuda: Option<With<'_, Self>>,
    ) -> Result<Section, ReportError> {
        let mut sec = experiment::section::<CompareKernels>(
            "Rust against CUDA C++: the same kernels",
            "Each kernel in Rust and its CUDA C++ twin, written statement for statement alike, launched alternately on one stream and timed with events. Each exists in a plain form (the write-ups' algorithm with checked indexing: the naive matmul loop, AddKernel's volatile local, separate sinf and cosf), a safe form (no unsafe in the kernel body: slices, get and get_mut, and nvptx-kernel's views, which check a shape once and then iterate unchecked: a matrix's row zipped with a column for matmul, the grid-stride loop for AddKernel with hint::opaque as its register barrier; one sincosf) and a tuned form (raw pointers and unchecked indexing, matmul's loads in batches with one batch loaded a step ahead, AddKernel's register behind an assembly barrier, one sincosf); a ratio always compares the same form. One statement differs between the tuned matmuls: the few products after the last batch are a guarded batch in Rust and a loop in C++, the spelling with which each side's main loop runs fastest (kernels.cu says why). The tuned AddKernels run the same sums, but Rust spells out what NVVM's code for the C++ loop does by itself: a loop of its own when there are no sums (a copy), the next index and the loop's test right after the load, and the sums eight a step with the rest straight-line (kernels.cu says what each changed on either side). The C++ twins of the safe forms check what the Rust ones check. matmul runs at two shapes: the wiki's, whose few threads each walk a long row and column (latency-bound: the time is how many loads each thread has in flight), and a square one with a thread per cell over the whole GPU.",
            c,
        );
        sec.tables = Self::tables(c, derived, None);
        sec.note(
            "What safety costs, and when to reach for what",
            "A bounds check costs little by itself; what costs is what it stops the compiler from doing. A check inside the hottest loop (a trap in the card's hottest loop) keeps LLVM from unrolling it, so each thread has one load in flight instead of several, and a latency-bound kernel pays that in full; a kernel with enough threads hides it. The safe views move every check out of the loop: the card of a safe form built on them shows its traps before the loop and a hottest loop like the unchecked kernel's. Reach for get and get_mut where a thread touches one element, for the views (Matrix, zip_exact, GridStride) where it walks rows, columns or a grid-stride loop, and for unsafe only to change the algorithm itself, as the tuned matmul's batched loads do: the safety table's \"safe Rust / tuned Rust\" column is what that buys.",
        );
        let visits = (c.cases.iter())
            .flat_map(|k| &k.placements)
            .map(|p| p.visits)
            .min();
        if let Some(visits) = visits {
            let order = if visits > 1 {
                "visited in order and back again, so that a drift of the machine over the case falls on every place alike"
            } else {
                "visited once each, in order (so a drift of the machine over the case would show as a difference between places)"
            };
            sec.note(
                "Where the inputs lie",
                format!(
                    "matmul's inputs are timed at {} places in one allocation, each a step of whole 2 MiB pages from the last (every input's offset is in the JSON), {order}; a row's medians pool every place's launches. \"Rust / C++ by placement\" gives the lowest and the highest ratio of the places' medians, and the largest noise of one place's samples: where the range is wider than that noise, the same two kernels on the same GPU compare differently at different places, and a run whose buffers lie at one place would have shown only its ratio.",
                    c.params.placements
                ),
            );
        }
        sec.note(
            "Math libraries",
            "The Rust sincos kernels call the libm crate (a port of musl's sinf, cosf and sincosf, compiled into the PTX with the kernel); the CUDA C++ twins call CUDA's own math library (sinf, cosf, sincosf from libdevice). Both are checked against an f64 reference on the CPU.",
        );
        sec.note(
            "Rust against C++",
            format!(
                "Each row judged as `streamlab compare` judges two runs, the C++ twin as A and Rust as B: {}",
                Rule::default().describe()
            ),
        );
        sec.note(
            "C++ build",
            format!(
                "{}, options {}, PTX target {}.",
                c.cuda_build.compiler,
                c.cuda_build.options.join(" "),
                c.cuda_build.ptx_target
            ),
        );
        sec.figures = draw(figures(derived));
        Ok(sec)
    }

    const FACTS: &'static [&'static str] = &[
        "rust_over_cuda",
        "rust_over_cuda_safe",
        "rust_over_cuda_plain",
    ];
    fn facts(_c: &KernelComparison, derived: &Self::Derived) -> Vec<Json> {
        let a = derived;
        vec![
            experiment::json(&a.tuned),
            experiment::json(&a.safe),
            experiment::json(&a.plain),
        ]
    }
    fn fact_lines(facts: &[&Json]) -> Vec<(String, String)> {
        (["Rust/C++ (tuned)", "Rust/C++ (safe)", "Rust/C++ (plain)"].iter().zip(facts))
            .filter_map(|(label, v)| {
                let r: KernelRatios = experiment::parse(v)?;
                Some((
                    (*label).to_owned(),
                    format!(
                        "fill {:.3}, matmul {:.3}, add_kernel {:.3}, sincos {:.3} (median kernel times)",
                        r.fill, r.matmul, r.add_kernel, r.sincos
                    ),
                ))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A passed case of `rust` and `cuda` samples, timed at one place.
    fn kernel_case(
        kernel: &str,
        case: &str,
        form: Option<KernelForm>,
        rust: &[f64],
        cuda: &[f64],
    ) -> KernelCase {
        let series = |ms: &[f64]| Series::new(ms.to_vec()).unwrap();
        KernelCase {
            kernel: kernel.into(),
            case: case.into(),
            form,
            launch: String::new(),
            rust: series(rust),
            cuda: series(cuda),
            verification: Verification {
                passed: true,
                checked: 1,
                mismatches: 0,
                max_abs_error: 0.0,
                detail: String::new(),
            },
            cards: None,
            max_ulps: None,
            placements: Vec::new(),
        }
    }

    /// A case timed at `rust` and `cuda` ms (every launch alike).
    fn timed(
        kernel: &str,
        case: &str,
        form: Option<KernelForm>,
        rust: f64,
        cuda: f64,
    ) -> CaseRatio {
        case_ratio(&kernel_case(kernel, case, form, &[rust; 5], &[cuda; 5]))
    }

    #[test]
    fn each_placement_gets_its_own_ratio_and_the_row_pools_them() {
        let placed = |rust: &[f64], cuda: &[f64]| Placement {
            offsets_bytes: vec![0, 64],
            visits: 2,
            rust: Series::new(rust.to_vec()).unwrap(),
            cuda: Series::new(cuda.to_vec()).unwrap(),
        };
        let mut case = kernel_case(
            "matmul",
            "32×16×131072",
            Some(KernelForm::Tuned),
            &[3.0, 3.0, 3.0, 4.2, 4.2, 4.2],
            &[3.1, 3.1, 3.1, 4.0, 4.0, 4.0],
        );
        case.placements = vec![placed(&[3.0; 3], &[3.1; 3]), placed(&[4.2; 3], &[4.0; 3])];
        let ratio = case_ratio(&case);
        assert_eq!(ratio.by_placement.len(), 2);
        assert!((ratio.by_placement[0] - 3.0 / 3.1).abs() < 1e-12);
        assert!((ratio.by_placement[1] - 4.2 / 4.0).abs() < 1e-12);
        let [lo, hi] = ratio.placement_range.unwrap();
        assert!(lo < 1.0 && hi > 1.0);
        // The row's own ratio pools the places' launches.
        assert!((ratio.ratio - case.rust.median() / case.cuda.median()).abs() < 1e-12);
        // Every place's launches alike: none of the range is noise.
        assert_eq!(ratio.placement_noise, Some(0.0));
        case.placements.clear();
        assert_eq!(case_ratio(&case).placement_range, None);
        assert_eq!(case_ratio(&case).placement_noise, None);
    }

    #[test]
    fn safety_is_held_against_the_unchecked_twin_of_its_own_algorithm_and_case() {
        use KernelForm::{Plain, Safe, Tuned};
        let cases = [
            // matmul: the unchecked twin is the plain loop, per case
            timed("matmul", "wide", Some(Plain), 40.0, 10.0),
            timed("matmul", "wide", Some(Safe), 10.8, 11.0),
            timed("matmul", "wide", Some(Tuned), 6.0, 6.0),
            timed("matmul", "square", Some(Plain), 9.0, 2.0),
            timed("matmul", "square", Some(Safe), 2.3, 2.1),
            timed("matmul", "square", Some(Tuned), 2.0, 2.0),
            // fill: one code for plain and tuned (form None) is its unchecked twin
            timed("fill", "", None, 1.0, 1.0),
            timed("fill", "", Some(Safe), 1.0, 1.0),
        ];
        let costs = safety_costs(&cases);
        assert_eq!(costs.len(), 3);
        let wide = &costs[0];
        assert_eq!(
            (wide.kernel.as_str(), wide.case.as_str()),
            ("matmul", "wide")
        );
        assert_eq!(wide.unchecked_form, Plain);
        assert!((wide.over_cuda_safe - 10.8 / 11.0).abs() < 1e-12);
        assert!((wide.over_cuda_unchecked - 1.08).abs() < 1e-12);
        assert!((wide.over_rust_tuned - 1.8).abs() < 1e-12);
        assert!(wide.within_targets);
        // within 1.05 of its safe twin (2.3 / 2.1 = 1.095) fails
        let square = &costs[1];
        assert_eq!(square.case, "square");
        assert!((square.over_cuda_unchecked - 2.3 / 2.0).abs() < 1e-12);
        assert!(!square.within_targets);
        let fill = &costs[2];
        assert_eq!(fill.unchecked_form, Tuned);
        assert!((fill.over_cuda_unchecked - 1.0).abs() < 1e-12);
        assert!(fill.within_targets);
    }
}
