//! How concurrency-breaks shows: its tables' columns (a row per case, a row per remedy)
//! and its chart.
use super::analysis::{BreakRow, BreaksAnalysis, RemedyRow};
use super::{Case, ConcurrencyBreaksResult};
use crate::experiments::prelude::*;

/// A cost and its verdict where that is not a change: "(the same as clean)" or "(too
/// noisy to say)" after it.
pub(super) fn cost_cell(cost_ms: f64, v: Verdict) -> String {
    let unchanged = match v {
        Verdict::Same => " (the same as clean)",
        Verdict::TooNoisy | Verdict::NotComparable => " (too noisy to say)",
        Verdict::Faster | Verdict::Slower => "",
    };
    format!("{}{unchanged}", num(cost_ms, 4))
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
