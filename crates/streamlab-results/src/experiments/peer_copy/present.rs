//! How peer-copy shows: the matrix and the sweep as tables, each method's rates as a
//! heat map.
use super::Method;
use super::analysis::{PairRow, PeerCopyAnalysis, PeerRow, method_index};
use crate::report::chart::HeatMap;
use crate::report::figures::{Drawing, FigureModel};
use crate::report::table::{Columns, num};

/// A size in bytes, e.g. "4 KiB", "1 GiB".
pub(super) fn size(bytes: u64) -> String {
    match bytes.ilog2() {
        e @ 30.. => format!("{} GiB", 1u64 << (e - 30)),
        e @ 20.. => format!("{} MiB", 1u64 << (e - 20)),
        e @ 10.. => format!("{} KiB", 1u64 << (e - 10)),
        _ => format!("{bytes} B"),
    }
}

/// "0 → 1".
pub(super) fn pair_label(src: usize, dst: usize) -> String {
    format!("{src} → {dst}")
}

/// The one declaration of the matrix table: a row per pair.
pub(super) fn matrix_columns<'a>() -> Columns<'a, PairRow> {
    let mut columns = Columns::new()
        .show("pair", |x: &PairRow| pair_label(x.src, x.dst))
        .show("peer access", |x| {
            if x.peer_access { "yes" } else { "no" }.to_owned()
        });
    for method in Method::ALL {
        columns = columns.show(method.label(), move |x| num(x.rate(method), 1));
    }
    columns
        .show("latency off (µs)", |x| num(x.latency_staged_us, 1))
        .show("latency on (µs)", |x| num(x.latency_peer_us, 1))
}

/// The one declaration of the sweep table and the CSV: a row per pair and size.
pub(super) fn sweep_columns<'a>() -> Columns<'a, PeerRow> {
    let mut columns = Columns::new()
        .both(
            "pair",
            |x: &PeerRow| pair_label(x.src, x.dst),
            "src",
            |x| x.src.to_string(),
        )
        .raw("dst", |x| x.dst.to_string())
        .both("size", |x| size(x.bytes), "bytes", |x| x.bytes.to_string());
    for method in Method::ALL {
        columns = columns
            .number(method.label(), method.key(), (1, 3), move |x| {
                x.rate(method)
            })
            .raw(noise_key(method), move |x| {
                format!("{:.4}", x.noise[method_index(method)])
            });
    }
    columns
}

/// The CSV column of `method`'s noise.
fn noise_key(method: Method) -> &'static str {
    match method {
        Method::Staged => "staged_noise",
        Method::StagedBoth => "staged_both_noise",
        Method::Peer => "peer_noise",
        Method::PeerBoth => "peer_both_noise",
        Method::KernelPull => "kernel_pull_noise",
        Method::KernelPush => "kernel_push_noise",
    }
}

/// The heat map of `method`'s GB/s at the largest size, source GPU by row, destination
/// by column; cells at or above `threshold` in the "pays off" colours.
fn heat_map(a: &PeerCopyAnalysis, method: Method, threshold: f64) -> HeatMap {
    HeatMap {
        title: format!(
            "peer-copy: GB/s, {} (largest size; ≥ {threshold:.1} GB/s: the fastest copy with peer access off)",
            method.label()
        ),
        x_label: "destination GPU".into(),
        y_label: "source GPU".into(),
        columns: a.devices.iter().map(|d| d.to_string()).collect(),
        rows: a.devices.iter().map(|d| d.to_string()).collect(),
        values: (a.devices.iter())
            .map(|&src| {
                (a.devices.iter())
                    .map(|&dst| {
                        a.pair(src, dst)
                            .map(|p| p.rate(method))
                            .filter(|r| r.is_finite())
                    })
                    .collect()
            })
            .collect(),
        threshold,
        contour: None,
        unit: "{:.1}",
        marked: Vec::new(),
    }
}

/// The matrix as heat maps: peer access on and off, one way.
pub(super) fn figures(a: &PeerCopyAnalysis) -> Vec<FigureModel> {
    let threshold = a.range(Method::Staged).map_or(0.0, |(_, fastest)| fastest);
    [
        (Method::Peer, "peer-copy-peer.svg"),
        (Method::Staged, "peer-copy-staged.svg"),
    ]
    .into_iter()
    .map(|(method, file)| FigureModel {
        file: file.into(),
        drawing: Drawing::HeatMap(heat_map(a, method, threshold)),
    })
    .collect()
}
