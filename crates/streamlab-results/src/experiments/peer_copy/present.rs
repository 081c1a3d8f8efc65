//! How peer-copy shows: how each pair is joined beside its fastest copy, the matrix, the
//! sweep and the copies within each GPU as tables, each method's rates as a heat map.
use super::analysis::{Best, LinkRow, LocalRow, PairRow, PeerCopyAnalysis, PeerRow};
use super::{Method, PeerCopyResult};
use crate::experiments::prelude::*;
use crate::report::chart::HeatMap;
use crate::report::figures::Drawing;
use crate::saved::links::Joined;

/// A size in bytes, e.g. "4 KiB", "1 GiB".
pub(super) fn size(bytes: u64) -> String {
    let scale = (bytes.checked_ilog2().unwrap_or(0) / 10).min(3);
    let unit = ["B", "KiB", "MiB", "GiB"][scale as usize];
    format!("{} {unit}", bytes >> (10 * scale))
}

/// `(lo, hi)` as "377.0–384.5" with `decimals` decimals, each end times `scale` (100: a
/// percentage), one number where both ends read the same.
pub(super) fn span((lo, hi): (f64, f64), decimals: usize, scale: f64) -> String {
    let [lo, hi] = [lo, hi].map(|x| format!("{:.decimals$}", scale * x));
    if lo == hi { lo } else { format!("{lo}–{hi}") }
}

/// "0 → 1".
pub(super) fn pair_label(src: usize, dst: usize) -> String {
    format!("{src} → {dst}")
}

/// GB/s, with its share of the link's rate in brackets where known: "395.2 (83%)".
fn rate_cell(rate: f64, share: f64) -> String {
    match rate.is_finite() && share.is_finite() {
        true => format!("{rate:.1} ({:.0}%)", 100.0 * share),
        false => num(rate, 1),
    }
}

/// The columns of rows with rates (`row`): each method's GB/s (with its share of the link
/// in the tables, its noise in the CSV) and each direction's own beside a both-ways one;
/// in the CSV then each link method's efficiency and each direction's own rate; in both
/// the methods above the link.
fn rate_columns<'a, R: 'a>(mut columns: Columns<'a, R>, row: fn(&R) -> &PeerRow) -> Columns<'a, R> {
    for method in Method::ALL {
        columns = columns
            .both(
                method.label(),
                move |x| rate_cell(row(x)[method].gbps, row(x)[method].efficiency),
                method.key(),
                move |x| format!("{:.3}", row(x)[method].gbps),
            )
            .raw(format!("{}_noise", method.key()), move |x| {
                format!("{:.4}", row(x)[method].noise)
            });
        // Each direction's own GB/s in a both-ways copy: "387.0 / 386.9".
        if method.directions() == 2 {
            let on = ["off", "on"][usize::from(method.needs_peer_access())];
            let heading = format!("each way, peer access {on} (→ / ←)");
            columns = columns.show(heading, move |x| match row(x)[method].each_way {
                [a, b] if a.is_finite() && b.is_finite() => format!("{a:.1} / {b:.1}"),
                _ => "–".into(),
            });
        }
    }
    for method in Method::ALL.into_iter().filter(|m| m.needs_peer_access()) {
        columns = columns.raw(format!("{}_efficiency", method.key()), move |x| {
            format!("{:.4}", row(x)[method].efficiency)
        });
    }
    for method in Method::ALL.into_iter().filter(|m| m.directions() == 2) {
        for (way, name) in ["forward", "back"].into_iter().enumerate() {
            columns = columns.raw(format!("{}_{name}", method.key()), move |x| {
                format!("{:.3}", row(x)[method].each_way[way])
            });
        }
    }
    let flagged = move |x: &R, name: fn(Method) -> &'static str, separator: &str| {
        let names: Vec<&str> = row(x).flagged().into_iter().map(name).collect();
        names.join(separator)
    };
    columns.both(
        "above the link",
        move |x| flagged(x, Method::label, "; "),
        "above_link",
        move |x| flagged(x, Method::key, ";"),
    )
}

/// The one declaration of the link table: a row per pair.
pub(super) fn link_columns<'a>() -> Columns<'a, LinkRow> {
    let mut columns = Columns::new()
        .show("pair", |x: &LinkRow| pair_label(x.link.src, x.link.dst))
        .show("joined by", |x| x.link.describe())
        .show("per link (GB/s)", |x| match &x.link.joined {
            Joined::NvLink { per_link_gbps, .. } => {
                (per_link_gbps.read()).map_or("not read".into(), |rate| num(*rate, 2))
            }
            Joined::Pcie { .. } | Joined::Unread(_) => "–".into(),
        })
        .show("link one way (GB/s)", |x| num(x.one_way_gbps, 1))
        .show("link both ways (GB/s)", |x| num(x.both_ways_gbps, 1));
    // Each fastest copy: its GB/s with its share of the link, and which copy it is.
    for (way, ways) in ["one way", "both ways"].into_iter().enumerate() {
        let (rate, copy) = (format!("fastest {ways} (GB/s)"), format!("{ways}: copy"));
        let cell = move |x: &LinkRow, say: fn(&Best) -> String| {
            x.fastest[way].as_ref().map_or("–".into(), say)
        };
        columns = columns
            .show(rate, move |x| cell(x, |b| rate_cell(b.gbps, b.efficiency)))
            .show(copy, move |x| {
                cell(x, |b| format!("{}, {}", b.method.label(), size(b.bytes)))
            });
    }
    columns.show("rows above the link", |x| x.above_link.to_string())
}

/// The one declaration of the matrix table: a row per pair.
pub(super) fn matrix_columns<'a>() -> Columns<'a, PairRow> {
    let columns = Columns::new()
        .show("pair", |x: &PairRow| {
            pair_label(x.largest.src, x.largest.dst)
        })
        .show("peer access", |x| yes_no(x.peer_access).into());
    rate_columns(columns, |x| &x.largest)
        .show("latency off (µs)", |x| num(x.latency_staged_us, 1))
        .show("latency on (µs)", |x| num(x.latency_peer_us, 1))
}

/// The one declaration of the sweep table and the CSV: a row per pair and size.
pub(super) fn sweep_columns<'a>() -> Columns<'a, PeerRow> {
    let columns = Columns::new()
        .both(
            "pair",
            |x: &PeerRow| pair_label(x.src, x.dst),
            "src",
            |x| x.src.to_string(),
        )
        .raw("dst", |x| x.dst.to_string())
        .both("size", |x| size(x.bytes), "bytes", |x| x.bytes.to_string());
    rate_columns(columns, |x| x)
}

/// The one declaration of the table and CSV of each GPU's copies to itself.
pub(super) fn local_columns<'a>() -> Columns<'a, LocalRow> {
    Columns::new()
        .text("GPU", "gpu", |x: &LocalRow| x.gpu.to_string())
        .both("size", |x| size(x.bytes), "bytes", |x| x.bytes.to_string())
        .number("GB/s", "gbps", (1, 3), |x| x.gbps)
        .noise("noise", "noise", |x| x.noise)
}

/// The matrix as heat maps of each method's GB/s at the largest size, peer access on and
/// off, source GPU by row, destination by column; cells at or above the fastest staged copy
/// in one colour scale, those below in the other (no line between them: the diagonal's
/// empty cells break any).
pub(super) fn figures(r: &PeerCopyResult, a: &PeerCopyAnalysis) -> Vec<FigureModel> {
    let threshold = (a.range(Method::Staged, |r| r.gbps)).map_or(0.0, |(_, fastest)| fastest);
    let devices: Vec<usize> = r.devices.iter().map(|d| d.ordinal).collect();
    let ordinals: Vec<String> = devices.iter().map(|d| d.to_string()).collect();
    let rate = |method, src, dst| {
        (a.pair(src, dst))
            .map(|p: &PairRow| p.largest[method].gbps)
            .filter(|r: &f64| r.is_finite())
    };
    [
        (Method::Peer, "peer-copy-peer.svg"),
        (Method::Staged, "peer-copy-staged.svg"),
    ]
    .map(|(method, file)| FigureModel {
        file: file.into(),
        drawing: Drawing::HeatMap(HeatMap {
            title: format!(
                "peer-copy: GB/s, {} (largest size; ≥ {threshold:.1} GB/s: the fastest copy with peer access off)",
                method.label()
            ),
            x_label: "destination GPU".into(),
            y_label: "source GPU".into(),
            columns: ordinals.clone(),
            rows: ordinals.clone(),
            values: (devices.iter())
                .map(|&src| devices.iter().map(|&dst| rate(method, src, dst)).collect())
                .collect(),
            threshold,
            contour: None,
            unit: "{:.1}",
            marked: Vec::new(),
        }),
    })
    .into()
}
