//! allreduce-overlap: computation against NCCL's all-reduce on several GPUs, the overlap
//! data-parallel training lives on.
//! How it measures, its bounds and its model are told in its words, `allreduce_overlap.md`.
use crate::experiments::prelude::*;

mod present;

use present::{figures, overlap_columns, reduce_columns};

use crate::derived::pipeline::beyond;

pub struct AllreduceOverlap;

/// The most MiB an iteration's buckets hold: each GPU's buckets, its pattern and its
/// receive buffer, and the host buffer every element is checked in.
pub const MAX_ITERATION_MIB: u64 = 4096;

/// How many of a GPU's SMs NCCL may take: its default, its efficiency policy, or at most
/// a number of CTAs (`ncclConfig_t`); on the command line `default`, `efficiency` or the
/// number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Budget {
    Default,
    Efficiency,
    MaxCtas(u32),
}

impl Budget {
    /// The budget in words, for tables.
    pub fn label(self) -> String {
        match self {
            Budget::Default => "NCCL's default".into(),
            Budget::Efficiency => "efficiency policy".into(),
            Budget::MaxCtas(n) => format!("at most {n} CTAs"),
        }
    }
}

impl TryFrom<String> for Budget {
    type Error = String;
    fn try_from(s: String) -> Result<Budget, String> {
        match s.trim() {
            "default" => Ok(Budget::Default),
            "efficiency" => Ok(Budget::Efficiency),
            n => match n.parse() {
                Ok(n @ 1..=64) => Ok(Budget::MaxCtas(n)),
                _ => Err(format!(
                    "{s:?} is no CTA budget: give default, efficiency, or a number of CTAs from 1 to 64"
                )),
            },
        }
    }
}

impl From<Budget> for String {
    /// The budget as the command line gives it.
    fn from(b: Budget) -> String {
        match b {
            Budget::Default => "default".into(),
            Budget::Efficiency => "efficiency".into(),
            Budget::MaxCtas(n) => n.to_string(),
        }
    }
}

/// What `allreduce-overlap` measures.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// The GPUs, as ordinals, e.g. `0,1` (default: every GPU).
    #[arg(long, value_delimiter = ',')]
    pub devices: Vec<usize>,
    /// Buckets (layers) per iteration, at most 16 (what one sample queues behind the gate).
    #[arg(long, default_value_t = 8, value_parser = crate::saved::count(16))]
    pub buckets: usize,
    /// Bucket sizes in MiB, swept at NCCL's default budget (PyTorch DDP's bucket is 25 MiB).
    #[arg(long, value_delimiter = ',', default_values_t = [1u32, 4, 25, 64, 256])]
    pub bucket_mib: Vec<u32>,
    /// Compute : all-reduce ratios: each layer's product is sized to take this many times
    /// one bucket's all-reduce alone.
    #[arg(long, value_delimiter = ',', default_values_t = [0.5f64, 1.0, 2.0])]
    pub ratios: Vec<f64>,
    /// NCCL CTA budgets swept at --budget-mib, each a new set of communicators:
    /// `default`, `efficiency`, or a number of CTAs.
    #[arg(long, value_delimiter = ',', default_values = ["default", "8", "4", "2"],
        value_parser = |s: &str| Budget::try_from(s.to_owned()))]
    pub budgets: Vec<Budget>,
    /// The bucket size (MiB) of the budget sweep.
    #[arg(long, default_value_t = 25)]
    pub budget_mib: u32,
    /// Rows and columns of each layer's product (its inner size sets its time).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(64..=8192))]
    pub side: u32,
    /// Untimed iterations of each configuration before its first sample.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Timed samples of each configuration, one iteration each.
    #[arg(long, default_value_t = 10, value_parser = crate::saved::count(10_000))]
    pub samples: usize,
    /// Issue the overlapped schedule without its stream wait, so that its check must fail
    /// (for the tests).
    #[arg(long, hide = true)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drop_wait: bool,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--bucket-mib 1,25 --ratios 1 --budgets default,4 --warmup 2 \
        --samples 3";

    fn validate(&self) -> Result<(), UsageError> {
        crate::spread::check_devices(AllreduceOverlap::NAME, &self.devices)?;
        let bucket_mibs = (self.bucket_mib.iter()).chain([&self.budget_mib]);
        let most = bucket_mibs.clone().max().copied().unwrap_or(0);
        let iteration_mib = self.buckets as u64 * u64::from(most);
        let ratio_twice =
            (self.ratios.iter().enumerate()).find(|(i, r)| self.ratios[..*i].contains(r));
        // `--buckets` and `--side` are held to their ranges by their parsers, and an empty
        // list (`--ratios=`) fails its parser.
        let refusals = [
            (bucket_mibs.clone().find(|&&m| !(1..=1024).contains(&m))).map(|mib| format!(
                "a bucket of {mib} MiB is outside 1..=1024: give --bucket-mib and --budget-mib from 1 to 1024"
            )),
            (self.ratios.iter().find(|r| !(0.25..=4.0).contains(*r))).map(|r| format!(
                "a compute : all-reduce ratio of {r} is outside 0.25..=4: give --ratios such as 0.5,1,2"
            )),
            ratio_twice.map(|(_, r)| format!("--ratios names {r} twice: name each ratio once")),
            (iteration_mib > MAX_ITERATION_MIB).then(|| format!(
                "--buckets {} of {most} MiB is {iteration_mib} MiB an iteration, more than {MAX_ITERATION_MIB}: use fewer or smaller buckets",
                self.buckets,
            )),
            (self.warmup == 0).then(|| {
                "--warmup 0: each configuration needs an untimed iteration first (NCCL connects on first use): give --warmup 1 or more".into()
            }),
        ];
        let refusal = refusals.into_iter().flatten().next();
        refusal.map_or(Ok(()), |refusal| Err(UsageError::new(refusal)))
    }
}

/// One (bucket size, budget): its all-reduces alone and its ratios.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub bucket_bytes: u64,
    pub budget: Budget,
    /// Milliseconds per iteration of the buckets' all-reduces alone, in place and out of
    /// place, the slowest GPU's.
    pub in_place: Series,
    pub out_of_place: Series,
    pub ratios: Vec<RatioPoint>,
}

/// One compute : all-reduce ratio of a point: every configuration's milliseconds per
/// iteration, the slowest GPU's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatioPoint {
    /// The ratio asked for.
    pub ratio: f64,
    /// The product's inner size that gave it.
    pub inner: u32,
    pub compute: Series,
    pub serialized: Series,
    pub overlapped: Series,
    /// Overlapped with the communication stream at the greatest priority.
    pub overlapped_high: Series,
    /// The compute while an independent all-reduce loop runs.
    pub compute_interfered: Series,
    /// The all-reduces while an independent loop of products runs.
    pub reduce_interfered: Series,
    /// Samples of the two in which the independent loop ended before the side measured.
    #[serde(default)]
    pub short_loops: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllreduceOverlapResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// The GPUs of the run (ranks in order).
    pub gpus: Vec<crate::saved::DeviceInfo>,
    pub points: Vec<Point>,
}

impl Saved for AllreduceOverlapResult {
    experiment::saved_fields!(Params);
}

/// A point's all-reduces alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReduceRow {
    pub bucket_mib: f64,
    pub budget: Budget,
    /// Milliseconds per bucket, in place.
    pub bucket_ms: f64,
    /// Bus bandwidth as nccl-tests defines it: bytes / time × 2(n − 1)/n.
    pub busbw_in_place: f64,
    pub busbw_out_of_place: f64,
    /// The point's samples, in place and out of place.
    #[serde(skip)]
    pub samples: [Series; 2],
}

/// A ratio point's overlap against its bound.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverlapRow {
    pub bucket_mib: f64,
    pub budget: Budget,
    pub ratio_asked: f64,
    /// Compute alone over all-reduce alone, as measured.
    pub ratio: f64,
    pub compute_ms: f64,
    pub reduce_ms: f64,
    pub serialized_ms: f64,
    pub overlapped_ms: f64,
    pub overlapped_high_ms: f64,
    /// `max(C, M) + min(C, M) / K` from the stages alone.
    pub bound_ms: f64,
    /// The same from each side as measured beside a loop of the other: an estimate under
    /// full interference (the schedule overlaps them only part of the time), not a bound.
    pub interfered_ms: f64,
    /// An independent loop ended before the side it was to slow, in some sample: that
    /// side's slowed time, and so the estimate, is low.
    pub short_loops: bool,
    /// `(C + M − T) / min(C, M)`, at the default and the greatest priority.
    pub hidden: f64,
    pub hidden_high: f64,
    /// Overlapped time over the bound.
    pub over_bound: f64,
    /// The overlapped run beat its bound by more than the slack: a stage was
    /// under-measured, so the row is flagged.
    pub beyond_bound: bool,
    pub busbw: f64,
    /// The ratio point's samples.
    #[serde(skip)]
    pub samples: RatioPoint,
}

/// Every number derived from a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllreduceAnalysis {
    pub ranks: usize,
    pub reduce: Vec<ReduceRow>,
    pub overlap: Vec<OverlapRow>,
    /// The point nearest PyTorch DDP's default (the budget sweep's bucket, NCCL's default
    /// budget, the ratio nearest 1), where measured.
    pub headline: Option<usize>,
}

/// Bus bandwidth (GB/s) of an all-reduce of `bytes` on `ranks` GPUs taking `ms`.
pub fn busbw(bytes: u64, ms: f64, ranks: usize) -> f64 {
    let n = ranks as f64;
    bytes as f64 / (ms * 1e6) * 2.0 * (n - 1.0) / n
}

/// The makespan bound of `k` equal buckets whose compute takes `c` and all-reduces `m`
/// in all: two resources in a fixed order.
pub fn bound(c: f64, m: f64, k: usize) -> f64 {
    c.max(m) + c.min(m) / k as f64
}

/// The fraction of the shorter side hidden: `(C + M − T) / min(C, M)`.
pub fn hidden(c: f64, m: f64, t: f64) -> f64 {
    (c + m - t) / c.min(m)
}

impl Experiment for AllreduceOverlap {
    const NAME: &'static str = "allreduce-overlap";
    const WORDS: &'static str = include_str!("../allreduce_overlap.md");
    type Params = Params;
    type Result = AllreduceOverlapResult;
    type Derived = AllreduceAnalysis;

    fn derive(r: &AllreduceOverlapResult, _checks: &[TraceChecks]) -> AllreduceAnalysis {
        let (ranks, k) = (r.gpus.len(), r.run.params.buckets);
        let mut reduce = Vec::new();
        let mut overlap = Vec::new();
        for p in &r.points {
            let m = p.in_place.median();
            let bucket_mib = p.bucket_bytes as f64 / (1u64 << 20) as f64;
            // The bus bandwidth of the point's buckets, all-reduced in `ms` an iteration.
            let busbw_at = |ms: f64| busbw(p.bucket_bytes, ms / k as f64, ranks);
            let busbw_in_place = busbw_at(m);
            reduce.push(ReduceRow {
                bucket_mib,
                budget: p.budget,
                bucket_ms: m / k as f64,
                busbw_in_place,
                busbw_out_of_place: busbw_at(p.out_of_place.median()),
                samples: [p.in_place.clone(), p.out_of_place.clone()],
            });
            for q in &p.ratios {
                let (c, t) = (q.compute.median(), q.overlapped.median());
                let th = q.overlapped_high.median();
                let b = bound(c, m, k);
                let interfered = [&q.compute_interfered, &q.reduce_interfered].map(Series::median);
                overlap.push(OverlapRow {
                    bucket_mib,
                    budget: p.budget,
                    ratio_asked: q.ratio,
                    ratio: c / m,
                    compute_ms: c,
                    reduce_ms: m,
                    serialized_ms: q.serialized.median(),
                    overlapped_ms: t,
                    overlapped_high_ms: th,
                    bound_ms: b,
                    interfered_ms: bound(interfered[0], interfered[1], k),
                    short_loops: q.short_loops > 0,
                    hidden: hidden(c, m, t),
                    hidden_high: hidden(c, m, th),
                    over_bound: t / b,
                    beyond_bound: beyond(t, b),
                    busbw: busbw_in_place,
                    samples: q.clone(),
                });
            }
        }
        let budget_mib = f64::from(r.run.params.budget_mib);
        // How far a row's ratio asked is from 1, either way.
        let off = |row: &OverlapRow| row.ratio_asked.ln().abs();
        let headline = (overlap.iter().enumerate())
            .filter(|(_, row)| row.budget == Budget::Default && row.bucket_mib == budget_mib)
            .min_by(|(_, a), (_, b)| off(a).total_cmp(&off(b)))
            .map(|(i, _)| i);
        AllreduceAnalysis {
            ranks,
            reduce,
            overlap,
            headline,
        }
    }

    fn rows(_r: &AllreduceOverlapResult, a: &AllreduceAnalysis) -> Vec<MeasuredRow> {
        let mut rows = reduce_columns().measured_rows(&a.reduce);
        rows.extend(overlap_columns().measured_rows(&a.overlap));
        rows
    }

    fn tables(r: &Self::Result, a: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        let k = r.run.params.buckets;
        vec![
            reduce_columns().table(
                Some(format!(
                    "{k} all-reduces of float32 per iteration on {} GPUs, medians of the slowest GPU; busbw = bytes / time × 2(n − 1)/n",
                    a.ranks
                )),
                &a.reduce,
            ),
            overlap_columns().table(
                Some(format!(
                    "ms per iteration of {k} layers; bound = max(C, M) + min(C, M)/{k}; full interference: the same from each side measured beside a loop of the other (an estimate, not a bound); hidden = (C + M − T) / min(C, M), at most 1 − 1/{k}"
                )),
                &a.overlap,
            ),
        ]
    }

    fn csv(_r: &AllreduceOverlapResult, a: &AllreduceAnalysis) -> Vec<Csv> {
        vec![
            Csv::main(overlap_columns().csv(&a.overlap)),
            Csv::extra("alone", reduce_columns().csv(&a.reduce)),
        ]
    }

    fn figures(r: &AllreduceOverlapResult, a: &Self::Derived) -> Vec<FigureModel> {
        figures(r, a)
    }

    fn summary(_r: &AllreduceOverlapResult, a: &AllreduceAnalysis) -> Summary {
        let Some((h, best, _)) = a.budget_sweep() else {
            return Summary::default();
        };
        let headline = json!({
            "gpus": a.ranks,
            "at_default": h,
            "best_budget": best.budget.label(),
            "best": best,
            "budgets_said": a.budgets_found().map_or(String::new(), |t| format!("Of {t}.")),
        });
        Summary::of(&headline).with(Overview {
            over_bound: Some((h.over_bound, "the overlapped iteration".into())),
            ..Overview::default()
        })
    }

    fn words(r: &AllreduceOverlapResult, a: &AllreduceAnalysis) -> Value {
        context! {
            verified => r.run.verification.passed,
            budgets_found => a.budgets_found(),
        }
    }
}

impl AllreduceAnalysis {
    /// The headline's row, the row of the budget sweep at its bucket size and ratio (the
    /// same compute for every budget) whose overlapped iteration is the shortest, and how
    /// many budgets ran there.
    fn budget_sweep(&self) -> Option<(&OverlapRow, &OverlapRow, usize)> {
        let h = &self.overlap[self.headline?];
        let sweep: Vec<&OverlapRow> = (self.overlap.iter())
            .filter(|row| row.bucket_mib == h.bucket_mib && row.ratio_asked == h.ratio_asked)
            .collect();
        let best = (sweep.iter().copied())
            .min_by(|a, b| a.overlapped_ms.total_cmp(&b.overlapped_ms))
            .unwrap_or(h);
        Some((h, best, sweep.len()))
    }

    /// What the budget sweep found at the headline's bucket size and ratio, as a clause;
    /// `None` where one budget ran there.
    fn budgets_found(&self) -> Option<String> {
        let (h, best, budgets) = self.budget_sweep()?;
        let found = if best.budget == h.budget {
            "none finished an iteration sooner than NCCL's default".into()
        } else {
            format!(
                "{} finished an iteration soonest: {} ms instead of {} (hiding {}), its all-reduces alone moving {} GB/s instead of {}",
                best.budget.label(),
                num(best.overlapped_ms, 3),
                num(h.overlapped_ms, 3),
                num(best.hidden, 2),
                num(best.busbw, 0),
                num(h.busbw, 0)
            )
        };
        (budgets > 1).then(|| format!("the {budgets} CTA budgets run on the same compute, {found}"))
    }
}

#[cfg(test)]
mod tests;
