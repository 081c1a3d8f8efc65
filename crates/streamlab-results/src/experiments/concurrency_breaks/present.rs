//! How concurrency-breaks shows: its tables' columns (a row per case, a row per remedy),
//! its costs in words and its chart.
use super::analysis::{BreakRow, BreaksAnalysis, RemedyRow};
use super::{Case, ConcurrencyBreaksResult};
use crate::experiments::prelude::*;

pub(super) fn cost_words(row: Option<&BreakRow>) -> String {
    row.map_or("–".into(), |x| {
        let within = unless_changed(x.verdict);
        if x.cost_ms < 0.0 {
            format!(
                "nothing: the run was {:.4} ms per iteration faster{within}",
                -x.cost_ms
            )
        } else {
            format!("{:.4} ms per iteration{within}", x.cost_ms)
        }
    })
}

/// What a cost that is not called a change is: "the same as clean" or "too noisy to
/// say"; `None` for one that is.
pub(super) fn unchanged(v: Verdict) -> Option<&'static str> {
    match v {
        Verdict::Same => Some("the same as clean"),
        Verdict::TooNoisy | Verdict::NotComparable => Some("too noisy to say"),
        Verdict::Faster | Verdict::Slower => None,
    }
}

/// [`unchanged`] in brackets after a cost, nothing after a cost called a change.
fn unless_changed(v: Verdict) -> String {
    unchanged(v).map_or(String::new(), |u| format!(" ({u})"))
}

fn kinds(k: &[BreakKind]) -> String {
    if k.is_empty() {
        "none".into()
    } else {
        k.iter().map(|k| k.label()).collect::<Vec<_>>().join(", ")
    }
}

/// An optional time in the table (– for none) and in the CSV (empty for none).
fn optional_ms(v: Option<f64>, table: bool) -> String {
    match v {
        Some(v) if table => num(v, 4),
        Some(v) => format!("{v:.4}"),
        None if table => "–".into(),
        None => String::new(),
    }
}

/// The one declaration of the table and the CSV: a row per case.
pub(super) fn columns<'a>() -> Columns<'a, BreakRow> {
    Columns::new()
        .text("case", "case", |x: &BreakRow| x.case.label().into())
        .both(
            "streams",
            |x| {
                (if x.case.blocking_streams() {
                    "blocking"
                } else {
                    "non-blocking"
                })
                .into()
            },
            "blocking_streams",
            |x| x.case.blocking_streams().to_string(),
        )
        .number("ms per iteration", "ms", (4, 4), |x| x.median_ms)
        .noise("noise", "noise", |x| x.noise)
        .number("over clean", "over_clean", (3, 4), |x| x.over_clean)
        .both(
            "cost ms",
            |x| cost_cell(x.cost_ms, x.verdict),
            "cost_ms",
            |x| format!("{:.4}", x.cost_ms),
        )
        .both(
            "copy–kernel overlap lost ms (traced)",
            |x| optional_ms(x.overlap_lost_ms, true),
            "overlap_lost_ms",
            |x| optional_ms(x.overlap_lost_ms, false),
        )
        .both(
            "both-ways lost ms (traced)",
            |x| optional_ms(x.both_ways_lost_ms, true),
            "both_ways_lost_ms",
            |x| optional_ms(x.both_ways_lost_ms, false),
        )
        .text("detected", "detected", |x| kinds(&x.detected))
        .text("nsys analyze rule", "nsys_rule", |x| {
            x.case.nsys_rule().unwrap_or("").into()
        })
        .show("as expected", |x| {
            (if x.detected_as_expected { "yes" } else { "NO" }).into()
        })
}

/// A cost and its verdict, as the remedies' table shows them.
pub(super) fn cost_cell(cost_ms: f64, v: Verdict) -> String {
    format!("{}{}", num(cost_ms, 4), unless_changed(v))
}

/// The table of each break beside its remedy.
pub(super) fn remedy_columns<'a>() -> Columns<'a, RemedyRow> {
    Columns::new()
        .text("break", "break", |x: &RemedyRow| x.breaks.label().into())
        .both(
            "its cost ms",
            |x| cost_cell(x.break_cost_ms, x.break_verdict),
            "break_cost_ms",
            |x| format!("{:.4}", x.break_cost_ms),
        )
        .text("remedy", "remedy", |x| x.remedy.label().into())
        .both(
            "its cost ms",
            |x| cost_cell(x.remedy_cost_ms, x.remedy_verdict),
            "remedy_cost_ms",
            |x| format!("{:.4}", x.remedy_cost_ms),
        )
        .number("remedy over break", "over_break", (3, 4), |x| x.over_break)
        .show("as clean", |x| {
            (if x.as_clean() { "yes" } else { "no" }).into()
        })
        .show("within noise", |x| {
            (if x.remedy_within_noise { "yes" } else { "no" }).into()
        })
}

/// The remedies against clean in words: how many are as fast as it by the rule and how
/// many within noise of it, and what each other one still costs.
pub(super) fn remedies_result(a: &BreaksAnalysis) -> String {
    let clean = a.remedies.iter().filter(|x| x.as_clean()).count();
    let within = a.remedies.iter().filter(|x| x.remedy_within_noise).count();
    let rest: Vec<String> = (a.remedies.iter())
        .filter(|x| !x.as_clean())
        .map(|x| {
            format!(
                "{} ({} ms per iteration, {:.2}× the break's time{})",
                x.remedy.label(),
                cost_cell(x.remedy_cost_ms, x.remedy_verdict),
                x.over_break,
                x.remedy_host_ms.map_or(String::new(), |h| format!(
                    "; the host's calls, which its timeline shows, took {h:.4} ms per traced iteration{}",
                    a.baseline_ms(x.remedy).map_or(String::new(), |c| format!(
                        ", where a clean iteration takes {c:.4} ms"
                    ))
                ))
            )
        })
        .collect();
    let n = a.remedies.len();
    let counted = format!(
        "{clean} of {n} remedies run as fast as the clean pipeline by the rule (the same or faster); {within} of {n} are within noise of it"
    );
    if rest.is_empty() {
        format!("{counted}.")
    } else {
        format!("{counted}; still costing: {}.", rest.join("; "))
    }
}

/// The staged copy beside what limits it on this host: its copy of a chunk into pinned
/// memory against a clean iteration, which hides it only while it is shorter.
pub(super) fn staging_note(r: &ConcurrencyBreaksResult, a: &BreaksAnalysis) -> Option<String> {
    let probe = r.staging.as_ref()?;
    let remedy = a.remedy(Case::StagedCopy)?;
    let clean = a.row(Case::Clean)?;
    let copy_ms = remedy.host_copy_ms?;
    let tried: Vec<String> = (probe.by_threads.iter())
        .map(|(threads, ms)| format!("{threads}: {}", num(*ms, 3)))
        .collect();
    Some(format!(
        "This host copies a chunk ({:.1} MiB) into pinned memory in {} ms on {} thread{} ({:.1} GB/s; fastest ms by threads tried, {}), against {} ms for a clean iteration: the pipeline hides the copy {}. The staged copy costs {} ms per iteration over clean ({}).",
        probe.bytes as f64 / f64::from(1 << 20),
        num(copy_ms, 4),
        probe.threads,
        if probe.threads == 1 { "" } else { "s" },
        gbps(probe.bytes, copy_ms),
        tried.join(", "),
        num(clean.median_ms, 4),
        if copy_ms < clean.median_ms {
            "while it is shorter, as here"
        } else {
            "only while it is shorter, which it is not here"
        },
        num(remedy.remedy_cost_ms, 4),
        unchanged(remedy.remedy_verdict).unwrap_or(remedy.remedy_verdict.key()),
    ))
}

pub(super) fn figures(r: &ConcurrencyBreaksResult, a: &BreaksAnalysis) -> Vec<FigureModel> {
    let labels: Vec<String> = a.rows.iter().map(|x| x.case.label().to_owned()).collect();
    let mut c = blank(
        "concurrency-breaks: time per iteration, each break and each remedy against the clean pipeline".into(),
        "case",
        "ms per iteration",
        XAxis::Categories(labels),
        YScale::Linear,
    );
    let whiskers = (a.rows.iter())
        .map(|x| {
            (r.cases.iter().find(|c| c.case == x.case))
                .map_or((f64::NAN, f64::NAN), |c| (c.time.min(), c.time.summary.max))
        })
        .collect();
    c.bars.push(BarSeries {
        name: "median, whiskers min–max".into(),
        color: PALETTE[0],
        values: a.rows.iter().map(|x| x.median_ms).collect(),
        whiskers: Some(whiskers),
    });
    if let Some(clean) = a.row(Case::Clean) {
        let across = (0..a.rows.len()).map(|i| (i as f64, clean.median_ms));
        c.lines.push(line(
            "clean pipeline (median)",
            BOUND_COLOR,
            true,
            across.collect(),
        ));
    }
    vec![FigureModel::chart("concurrency-breaks.svg".into(), c)]
}

/// What the NULL-stream copy cost, and what the non-blocking and per-thread streams made
/// of it.
pub(super) fn null_stream_result(a: &BreaksAnalysis) -> Option<String> {
    let x = a.row(Case::NullStreamCopy)?;
    Some(format!(
        "One copy in per iteration moved onto the NULL stream costs {:.4} ms per iteration ({:.2}× the clean pipeline{}): the kernels issued after it wait for it, so copies ran beside kernels {} ms less per iteration{}, and the two copy directions ran at once {} ms less, which costs less than its length because each copy then runs alone at its faster one-way rate. On non-blocking streams, which the NULL stream does not join, the same copy costs {}; on the per-thread default stream, {}.",
        x.cost_ms,
        x.over_clean,
        unchanged(x.verdict).map_or(String::new(), |u| format!(", {u}")),
        x.overlap_lost_ms.map_or("–".into(), |v| format!("{v:.4}")),
        match x.costs_overlap_lost {
            Some(true) => " (the cost is at least that overlap)",
            Some(false) => " (more than the cost: a run this noisy does not show the whole loss)",
            None => "",
        },
        x.both_ways_lost_ms
            .map_or("–".into(), |v| format!("{v:.4}")),
        cost_words(a.row(Case::NullStreamCopyNonBlocking)),
        cost_words(a.row(Case::PerThreadStreamCopy)),
    ))
}
