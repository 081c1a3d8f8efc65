//! How concurrency-breaks shows: its tables' columns (a row per case, a row per remedy)
//! and its chart.
use super::analysis::{BreakRow, BreaksAnalysis, RemedyRow};
use super::{Case, ConcurrencyBreaksResult};
use crate::experiments::prelude::*;

/// A cost column: the milliseconds in the CSV; in the tables, its verdict after it where
/// that is not a change, "(the same as clean)" or "(too noisy to say)".
fn cost<'a, R: 'a>(
    c: Columns<'a, R>,
    (heading, name): (&'static str, &'static str),
    cost: impl Fn(&R) -> (f64, Verdict) + Copy + 'a,
) -> Columns<'a, R> {
    let cell = move |x: &R| {
        let unchanged = match cost(x).1 {
            Verdict::Same => " (the same as clean)",
            Verdict::TooNoisy | Verdict::NotComparable => " (too noisy to say)",
            Verdict::Faster | Verdict::Slower => "",
        };
        format!("{}{unchanged}", num(cost(x).0, 4))
    };
    c.both(heading, cell, name, move |x| format!("{:.4}", cost(x).0))
}

/// A time a traced row may lack: "–" in the tables, empty in the CSV without one.
fn traced_ms<'a>(
    c: Columns<'a, BreakRow>,
    (heading, name): (&'static str, &'static str),
    ms: fn(&BreakRow) -> Option<f64>,
) -> Columns<'a, BreakRow> {
    let cell = move |x: &BreakRow| ms(x).map_or("–".into(), |v| num(v, 4));
    c.both(heading, cell, name, move |x| {
        ms(x).map_or(String::new(), |v| format!("{v:.4}"))
    })
}

/// "yes" where `yes`, else `no`.
fn yes(yes: bool, no: &str) -> String {
    (if yes { "yes" } else { no }).into()
}

/// The one declaration of the table and the CSV: a row per case.
pub(super) fn columns<'a>() -> Columns<'a, BreakRow> {
    let c = Columns::new()
        .text("case", "case", |x: &BreakRow| x.case.label().into())
        .both(
            "streams",
            |x| ["non-blocking", "blocking"][usize::from(x.case.blocking_streams())].into(),
            "blocking_streams",
            |x| x.case.blocking_streams().to_string(),
        )
        .number("ms per iteration", "ms", (4, 4), |x| x.median_ms)
        .noise("noise", "noise", |x| x.noise)
        .number("over clean", "over_clean", (3, 4), |x| x.over_clean);
    let c = cost(c, ("cost ms", "cost_ms"), |x| (x.cost_ms, x.verdict));
    let lost = ("copy–kernel overlap lost ms (traced)", "overlap_lost_ms");
    let c = traced_ms(c, lost, |x| x.overlap_lost_ms);
    let both = ("both-ways lost ms (traced)", "both_ways_lost_ms");
    traced_ms(c, both, |x| x.both_ways_lost_ms)
        .text("detected", "detected", |x| match x.detected.as_slice() {
            [] => "none".into(),
            k => k.iter().map(|k| k.label()).collect::<Vec<_>>().join(", "),
        })
        .text("nsys analyze rule", "nsys_rule", |x| {
            x.case.nsys_rule().unwrap_or("").into()
        })
        .show("as expected", |x| yes(x.detected_as_expected, "NO"))
}

/// The table of each break beside its remedy, each one's cost read from its row in `a`.
pub(super) fn remedy_columns(a: &BreaksAnalysis) -> Columns<'_, RemedyRow> {
    let row = |case| a.row(case).expect("a remedy and its break have rows");
    let c = Columns::new().text("break", "break", |x: &RemedyRow| x.breaks.label().into());
    let c = cost(c, ("its cost ms", "break_cost_ms"), move |x| {
        (row(x.breaks).cost_ms, row(x.breaks).verdict)
    })
    .text("remedy", "remedy", |x| x.remedy.label().into());
    cost(c, ("its cost ms", "remedy_cost_ms"), move |x| {
        (row(x.remedy).cost_ms, row(x.remedy).verdict)
    })
    .number("remedy over break", "over_break", (3, 4), |x| x.over_break)
    .show("as clean", move |x| yes(row(x.remedy).as_clean(), "no"))
    .show("within noise", move |x| {
        yes(row(x.remedy).within_noise, "no")
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
    c.bars.push(bars(
        "median, whiskers min–max",
        PALETTE[0],
        a.rows.iter().map(|x| x.median_ms).collect(),
        Some(whiskers),
    ));
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
