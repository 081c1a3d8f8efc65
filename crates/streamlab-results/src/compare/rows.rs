//! The rows two runs both measured, each with its change: raw (B/A of the row: what the
//! machine and the code did together) and, where the row has a control measured in the
//! same run, controlled (B/A of the row over its control: what the code did, the machine
//! held still). The controls, in the order they are looked for ([`ControlKind`]): its
//! C++ twin, the row it names, its model, the link's probes, the launch probe.
//!
//! Each change carries how far the two runs' own noise alone could move it, and each row
//! how far the GPU's clocks moved between its results, which [`super::judge`] weighs
//! beside the spread between machines.
use crate::derived::rates::gbps;
use crate::experiment::{Analysis, MeasuredRow, RowControl};
use crate::saved::clocks::ClockProbe;
use crate::saved::{KernelSet, StageTimes};
use crate::stats::Series;

/// What a row was held against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ControlKind {
    /// The CUDA C++ twin's row.
    Twin,
    /// Another row of the same result.
    Row,
    /// The row's time as its result's model predicts it from the run's probes.
    Model,
    /// The host link's both-ways rate.
    Link,
    /// An empty kernel's launch.
    Launch,
}

impl ControlKind {
    pub fn text(self) -> &'static str {
        match self {
            ControlKind::Twin | ControlKind::Row => "its C++ twin",
            ControlKind::Model => "its model from the run's probes",
            ControlKind::Link => "the link's probes",
            ControlKind::Launch => "the launch probe",
        }
    }
}

/// B over A, and one standard error of its logarithm from the two runs' own noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub b_over_a: f64,
    pub within: f64,
}

impl Change {
    /// The change's log ratio.
    pub fn log(&self) -> f64 {
        self.b_over_a.ln()
    }
}

/// One side's figure: its median, its noise, and its sample count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    pub value: f64,
    pub noise: Option<f64>,
    pub samples: usize,
}

impl Figure {
    fn of_row(row: &MeasuredRow) -> Figure {
        Figure {
            value: row.value,
            noise: row.noise,
            samples: row.samples.len(),
        }
    }

    fn of_series(s: &Series) -> Figure {
        Figure {
            value: s.median(),
            noise: s.measured_noise(),
            samples: s.samples_ms.len(),
        }
    }

    /// The standard error of the log of its median (of normal samples), infinite without
    /// a noise.
    fn log_error(&self) -> f64 {
        match self.noise {
            Some(noise) if self.samples > 0 => 1.2533 * noise / (self.samples as f64).sqrt(),
            _ => f64::INFINITY,
        }
    }
}

/// A row both runs measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedRow {
    pub experiment: &'static str,
    pub set: KernelSet,
    pub key: String,
    pub label: String,
    pub unit: &'static str,
    pub a: Figure,
    pub b: Figure,
    pub over_link: bool,
    /// For a row whose work crosses the link: how far the link's both-ways rate moved
    /// over its results' probes, ln(fastest / slowest).
    pub link_moved: Option<f64>,
    /// How far the GPU's SM or memory clock moved between the row's results.
    pub clocks_moved: Option<f64>,
    /// `None` where a value is missing, zero or not finite.
    pub raw: Option<Change>,
    pub control: Option<ControlKind>,
    pub controlled: Option<Change>,
}

/// The change from `a` to `b` (none where either is not a positive finite value).
fn change(a: Figure, b: Figure) -> Option<Change> {
    let ok = |f: &Figure| f.value.is_finite() && f.value > 0.0;
    (ok(&a) && ok(&b)).then(|| Change {
        b_over_a: b.value / a.value,
        within: a.log_error().hypot(b.log_error()),
    })
}

/// The change of `row / control` (or `row × control`) from A to B.
fn controlled(row: [Figure; 2], control: [Figure; 2], divide: bool) -> Option<Change> {
    let (raw, by) = (change(row[0], row[1])?, change(control[0], control[1])?);
    Some(Change {
        b_over_a: if divide {
            raw.b_over_a / by.b_over_a
        } else {
            raw.b_over_a * by.b_over_a
        },
        within: raw.within.hypot(by.within),
    })
}

/// The both-ways rates (GB/s) of the samples of `times`, link probes, as a figure.
fn both_ways<const N: usize>(times: [&StageTimes; N]) -> Figure {
    let rates = (times.into_iter())
        .flat_map(|t| t.both.samples_ms.iter().map(|&ms| gbps(2 * t.bytes, ms)))
        .collect();
    let none = Figure {
        value: f64::NAN,
        noise: None,
        samples: 0,
    };
    Series::new(rates).map_or(none, |s| Figure::of_series(&s))
}

/// How far a rate moved over `values`: ln(fastest / slowest) of those positive and finite.
fn moved(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let rates: Vec<f64> = (values.into_iter())
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let fastest = rates.iter().copied().reduce(f64::max)?;
    let slowest = rates.iter().copied().reduce(f64::min)?;
    Some((fastest / slowest).ln())
}

/// How far the session GPU's clocks moved over `probes`: the larger of the SM and the
/// memory clock's [`moved`] right after each result's work; none where fewer than two
/// read them.
fn clocks_moved<'a>(probes: impl IntoIterator<Item = &'a ClockProbe>) -> Option<f64> {
    let working: Vec<(u32, u32)> = (probes.into_iter())
        .filter_map(ClockProbe::working)
        .collect();
    if working.len() < 2 {
        return None;
    }
    let sm = moved(working.iter().map(|w| f64::from(w.0)))?;
    let memory = moved(working.iter().map(|w| f64::from(w.1)))?;
    Some(sm.max(memory))
}

/// Each run's launch probe: the first a result of the Rust kernels measured.
pub fn launch_probes<'a>(
    a: &'a crate::run::SavedRun,
    b: &'a crate::run::SavedRun,
) -> [Option<&'a Series>; 2] {
    [a, b].map(|run| {
        (run.analyses())
            .filter(|x| x.set == KernelSet::Rust)
            .find_map(|x| x.launch_probe.as_ref())
    })
}

/// The rows both of A's and B's `results` (of one experiment and kernel set) measured, in
/// A's order, with their changes; and the labels only one side has: (A's, B's). `twins`:
/// the CUDA C++ twins' results, when the set is Rust and both runs have them; `launch`:
/// each run's launch probe ([`launch_probes`]).
pub fn paired(
    results: (&Analysis, &Analysis),
    twins: Option<(&Analysis, &Analysis)>,
    launch: [Option<&Series>; 2],
) -> (Vec<PairedRow>, [Vec<String>; 2]) {
    let (ra, rb) = results;
    let (a_rows, b_rows) = (&ra.rows, &rb.rows);
    let twin_rows = twins.map(|(x, y)| (&x.rows, &y.rows));
    // The link's both-ways rate over each result's probes before and after it.
    let links =
        [ra, rb].map(|r| (r.provenance.link.as_ref()).map(|p| both_ways([&p.before, &p.after])));
    // The results the rows come from, and their twins: how far the link and the clocks
    // moved over all of them.
    let results: Vec<&Analysis> = [Some(results), twins]
        .into_iter()
        .flatten()
        .flat_map(|(x, y)| [x, y])
        .collect();
    let link_moved = moved(
        (results.iter())
            .filter_map(|r| r.provenance.link.as_ref())
            .flat_map(|p| [&p.before, &p.after].map(|t| both_ways([t]).value)),
    );
    let clocks_moved = clocks_moved(results.iter().filter_map(|r| r.provenance.clocks.as_ref()));
    let figure =
        |rows: &[MeasuredRow], key: &str| rows.iter().find(|r| r.key == key).map(Figure::of_row);
    let mut out = Vec::new();
    let mut only_a = Vec::new();
    for x in a_rows {
        let Some(y) = b_rows.iter().find(|y| y.key == x.key) else {
            only_a.push(x.label.clone());
            continue;
        };
        let row = [Figure::of_row(x), Figure::of_row(y)];
        let twin = twin_rows.and_then(|(ta, tb)| Some([figure(ta, &x.key)?, figure(tb, &x.key)?]));
        let named = match &x.control {
            Some(RowControl::Row(key)) => figure(a_rows, key).zip(figure(b_rows, key)),
            _ => None,
        };
        // A model is exact given its probes: their noise is in the row's own.
        let exact = |value: f64| Figure {
            value,
            noise: Some(0.0),
            samples: 1,
        };
        let model = match (&x.control, &y.control) {
            (Some(RowControl::Model(p)), Some(RowControl::Model(q))) => {
                Some([exact(*p), exact(*q)])
            }
            _ => None,
        };
        let link = match links {
            [Some(p), Some(q)] if x.over_link => Some([p, q]),
            _ => None,
        };
        let launch = match (&x.control, launch) {
            (Some(RowControl::Launch), [Some(p), Some(q)]) => {
                Some([Figure::of_series(p), Figure::of_series(q)])
            }
            _ => None,
        };
        // time / twin, time / row, time / model, time × rate, time / launch
        let (control, controlled) = [
            (ControlKind::Twin, twin, true),
            (ControlKind::Row, named.map(|(p, q)| [p, q]), true),
            (ControlKind::Model, model, true),
            (ControlKind::Link, link, false),
            (ControlKind::Launch, launch, true),
        ]
        .into_iter()
        .find_map(|(kind, by, divide)| Some((Some(kind), controlled(row, by?, divide))))
        .unwrap_or((None, None));
        out.push(PairedRow {
            experiment: ra.name,
            set: ra.set,
            key: x.key.clone(),
            label: x.label.clone(),
            unit: x.unit,
            a: row[0],
            b: row[1],
            over_link: x.over_link,
            link_moved: link_moved.filter(|_| x.over_link),
            clocks_moved,
            raw: change(row[0], row[1]),
            control: control.filter(|_| controlled.is_some()),
            controlled,
        });
    }
    let only_b = (b_rows.iter())
        .filter(|y| figure(a_rows, &y.key).is_none())
        .map(|y| y.label.clone())
        .collect();
    (out, [only_a, only_b])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(value: f64, noise: f64) -> Figure {
        Figure {
            value,
            noise: Some(noise),
            samples: 25,
        }
    }

    #[test]
    fn a_row_and_its_control_moving_together_leave_the_controlled_change_at_one() {
        let row = [figure(10.0, 0.01), figure(10.5, 0.01)];
        let twin = [figure(5.0, 0.01), figure(5.25, 0.01)];
        let c = controlled(row, twin, true).unwrap();
        assert!((c.b_over_a - 1.0).abs() < 1e-12);
        // Its noise is both figures' noise.
        let raw = change(row[0], row[1]).unwrap();
        assert!(c.within > raw.within && (c.within - raw.within * 2f64.sqrt()).abs() < 1e-12);
        // A rate control multiplies: 5% longer at a 5% slower link is no change.
        let rate = [figure(100.0, 0.01), figure(100.0 / 1.05, 0.01)];
        assert!((controlled(row, rate, false).unwrap().b_over_a - 1.0).abs() < 1e-12);
        // A side without noise cannot bound its change.
        let quiet = Figure {
            noise: None,
            ..figure(10.0, 0.0)
        };
        assert!(change(quiet, row[1]).unwrap().within.is_infinite());
        assert!(change(figure(0.0, 0.1), row[1]).is_none());
    }

    #[test]
    fn the_clocks_moved_by_the_larger_of_the_sm_and_memory_clocks_after_the_work() {
        use crate::saved::clocks::{GpuClocks, Reading};
        let probe = |before_sm: u32, sm: u32, memory: u32| {
            let at = |sm_mhz: u32| GpuClocks {
                sm_mhz,
                sm_max_mhz: 1980,
                memory_mhz: memory,
                memory_max_mhz: 3201,
                reasons: Reading::Read(Vec::new()),
                temperature_c: None,
                power_w: None,
            };
            ClockProbe::Read {
                before: at(before_sm),
                after: at(sm),
            }
        };
        // An idle clock before the work does not count; the clocks after it agree.
        let same = [probe(345, 1980, 3201), probe(1980, 1980, 3201)];
        assert_eq!(clocks_moved(&same), Some(0.0));
        let slower_sm = [probe(1980, 1980, 3201), probe(1980, 1800, 3201)];
        let moved = clocks_moved(&slower_sm).unwrap();
        assert!((moved - (1980.0f64 / 1800.0).ln()).abs() < 1e-12);
        let slower_memory = [probe(1980, 1980, 3201), probe(1980, 1960, 2619)];
        let moved = clocks_moved(&slower_memory).unwrap();
        assert!((moved - (3201.0f64 / 2619.0).ln()).abs() < 1e-12);
        // One read and one unread is no comparison.
        let unread = ClockProbe::Unread("no NVML".into());
        assert_eq!(clocks_moved(&[probe(1980, 1980, 3201), unread]), None);
    }
}
