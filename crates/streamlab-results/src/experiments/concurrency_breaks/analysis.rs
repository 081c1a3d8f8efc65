//! What concurrency-breaks derives: each case against its clean pipeline (its cost, the
//! overlap its trace lost, its host calls, what the break detector found), each break
//! beside its remedies.

use super::{Case, ConcurrencyBreaks, ConcurrencyBreaksResult};
use crate::experiments::prelude::*;
use crate::saved::timeline::OpKind;
use crate::verdict;

/// One case against its clean pipeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakRow {
    pub case: Case,
    /// Its milliseconds per iteration (the saved series).
    #[serde(skip)]
    pub time: Series,
    pub noise: f64,
    /// Its median over its clean pipeline's, and the difference per iteration.
    pub over_clean: f64,
    pub cost_ms: f64,
    /// The case against its clean pipeline by the one rule of [`crate::verdict`]: slower
    /// (a cost), faster, the same, or too noisy to say.
    pub verdict: Verdict,
    /// Its median is within the two rows' noise of the clean pipeline's (|over_clean − 1|
    /// at most the larger relative noise): what "the same" alone does not say, since it
    /// allows a difference under the minimum effect two machines show.
    pub within_noise: bool,
    /// Per traced iteration, how much less copies ran beside kernels than in the clean
    /// pipeline's trace: the copy–kernel overlap it destroyed.
    pub overlap_lost_ms: Option<f64>,
    /// Per traced iteration, how much less the two copy directions ran at once: this costs
    /// less than its length, as a copy alone runs at its faster one-way rate.
    pub both_ways_lost_ms: Option<f64>,
    /// Per traced iteration, how long the host spent in the calls its timeline records
    /// (a wait, an allocation, a copy into staging): host work on the issue path.
    pub host_ms: Option<f64>,
    /// What the break detector found in its timeline.
    pub detected: Vec<BreakKind>,
    /// Everything [`Case::expected`] was found, and nothing where nothing was expected.
    pub detected_as_expected: bool,
}

/// A break beside one of its remedies (each one's cost is in its own [`BreakRow`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemedyRow {
    pub remedy: Case,
    pub breaks: Case,
    /// The remedy's time per iteration over the break's.
    pub over_break: f64,
}

impl BreakRow {
    /// Whether the case is as fast as clean by the rule: faster, or the same (under the
    /// minimum effect, its noise small enough to see one).
    pub fn as_clean(&self) -> bool {
        matches!(self.verdict, Verdict::Same | Verdict::Faster)
    }
}

/// Everything derived from a concurrency-breaks result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreaksAnalysis {
    pub rows: Vec<BreakRow>,
    /// Each break beside each of its remedies measured in the same run.
    pub remedies: Vec<RemedyRow>,
}

impl BreaksAnalysis {
    pub fn row(&self, case: Case) -> Option<&BreakRow> {
        self.rows.iter().find(|x| x.case == case)
    }

    /// The row of `remedy` beside the break it remedies.
    pub fn remedy(&self, remedy: Case) -> Option<&RemedyRow> {
        self.remedies.iter().find(|x| x.remedy == remedy)
    }

    /// The median time per iteration of the clean pipeline `case` is held to.
    pub fn baseline_ms(&self, case: Case) -> Option<f64> {
        self.row(case.baseline()).map(|x| x.time.median())
    }
}

/// A traced case: its timeline and the trace checks of it.
type Traced<'a> = (&'a Timeline, &'a TraceChecks);

/// Copy–kernel overlap and both copy directions at once, per traced iteration.
fn overlap_per_iteration((t, checks): Traced) -> Option<(f64, f64)> {
    let o = checks.occupancy.as_ref()?;
    let per = t.iterations.max(1) as f64;
    Some((o.flow.copy_kernel_overlap_ms / per, o.both_copying_ms / per))
}

/// How long the host spent in the calls `t` records, per traced iteration (none where it
/// records none).
fn host_per_iteration(t: &Timeline) -> Option<f64> {
    let host: Vec<f64> = (t.ops.iter())
        .filter(|op| op.kind == OpKind::Host)
        .map(|op| op.end_ms - op.start_ms)
        .collect();
    (!host.is_empty()).then(|| host.iter().sum::<f64>() / t.iterations.max(1) as f64)
}

/// The kinds of break the detector found in a traced case, in [`BreakKind`]'s order.
fn detected((_, checks): Traced) -> Vec<BreakKind> {
    let found = checks.breaks.iter();
    let mut kinds: Vec<BreakKind> = found.flat_map(|b| b.kinds.clone()).collect();
    kinds.sort_by_key(|k| *k as usize);
    kinds.dedup();
    kinds
}

/// Everything derived from `r`, whose timelines' trace checks are `checks` (in
/// [`crate::experiment::Saved::timelines`]' order: the traced cases').
pub(super) fn analyze(r: &ConcurrencyBreaksResult, checks: &[TraceChecks]) -> BreaksAnalysis {
    let traced: Vec<(Case, Traced)> = (r.cases.iter())
        .filter_map(|c| Some((c.case, c.timeline.as_ref()?)))
        .zip(checks)
        .map(|((case, t), checks)| (case, (t, checks)))
        .collect();
    let traced = |case: Case| traced.iter().find(|x| x.0 == case).map(|x| x.1);
    let rule = Rule::within(ConcurrencyBreaks::NAME);
    let rows = (r.cases.iter())
        .filter_map(|c| {
            let base = r.cases.iter().find(|b| b.case == c.case.baseline())?;
            let (m, b) = (c.time.median(), base.time.median());
            let detected = traced(c.case).map(detected).unwrap_or_default();
            let expected = c.case.expected();
            let lost = (traced(c.case).and_then(overlap_per_iteration))
                .zip(traced(base.case).and_then(overlap_per_iteration))
                .map(|((kernel, both), (base_kernel, base_both))| {
                    (base_kernel - kernel, base_both - both)
                });
            Some(BreakRow {
                case: c.case,
                time: c.time.clone(),
                noise: c.time.noise(),
                over_clean: m / b,
                cost_ms: m - b,
                verdict: verdict::judge(&rule, (&base.time).into(), (&c.time).into()).verdict,
                within_noise: (m / b - 1.0).abs() <= c.time.noise().max(base.time.noise()),
                overlap_lost_ms: lost.map(|l| l.0),
                both_ways_lost_ms: lost.map(|l| l.1),
                host_ms: c.timeline.as_ref().and_then(host_per_iteration),
                detected_as_expected: traced(c.case).is_some()
                    && expected.iter().all(|k| detected.contains(k))
                    && (!expected.is_empty() || detected.is_empty()),
                detected,
            })
        })
        .collect::<Vec<BreakRow>>();
    let remedies = (rows.iter())
        .filter_map(|remedy| {
            let cause = (rows.iter()).find(|b| Some(b.case) == remedy.case.remedies())?;
            Some(RemedyRow {
                remedy: remedy.case,
                breaks: cause.case,
                over_break: remedy.time.median() / cause.time.median(),
            })
        })
        .collect();
    BreaksAnalysis { rows, remedies }
}
