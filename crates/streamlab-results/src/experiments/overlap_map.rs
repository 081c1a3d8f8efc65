//! overlap-map: the sincos workload over array sizes × stream counts, measured, beside a
//! model that predicts from measured costs when streams start to pay off.
//! How it measures, its bounds and its model are told in its words, `overlap_map.md`.

use crate::derived::pipeline::PAYOFF;
use crate::derived::rates::ms_at;
use crate::experiments::prelude::*;
use crate::report::chart::HeatMap;
use crate::report::figures::Drawing;
use crate::saved::SizeSweep;

pub struct OverlapMap;

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    #[command(flatten)]
    #[serde(flatten)]
    pub sweep: SizeSweep,
    /// Stream counts, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32",
          value_parser = crate::saved::count(MAX_STREAMS as u64))]
    pub stream_counts: Vec<usize>,
    /// Target GPU time per timed sample, in milliseconds: small arrays get more
    /// iterations, large ones fewer (at least 2).
    #[arg(long, default_value_t = 20.0)]
    pub sample_ms: f64,
    #[command(flatten)]
    #[serde(flatten)]
    pub sampling: crate::saved::Repeats<5>,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--max-exponent 22 --stream-counts 1,4,16 --sample-ms 5 --repeats \
        2";

    fn validate(&self) -> Result<(), UsageError> {
        self.sweep.validate()?;
        crate::saved::check_sample_ms(self.sample_ms)?;
        let counts = &self.stream_counts;
        let twice = (counts.iter().enumerate()).find(|&(i, s)| counts[..i].contains(s));
        if let Some((_, s)) = twice {
            return Err(UsageError::new(format!(
                "--stream-counts lists {s} twice: give each stream count once"
            )));
        }
        let smallest = 1usize << self.sweep.min_exponent;
        if let Some(&s) = self.stream_counts.iter().find(|&&s| s > smallest) {
            return Err(UsageError::new(format!(
                "{s} streams for 2^{} floats leaves streams without work: raise --min-exponent",
                self.sweep.min_exponent
            )));
        }
        Ok(())
    }
}

/// One size at one stream count (milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapCell {
    pub elements: usize,
    pub streams: usize,
    /// Iterations per timed sample.
    pub iterations: usize,
    pub async1: Series,
    pub async2: Series,
}

/// The fixed costs the model is built from, measured in the same run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overheads {
    /// One empty kernel, back to back: GPU time per launch (ms).
    pub launch: Series,
    /// One 4-byte copy each way, back to back: time per copy (ms).
    pub htod_latency: Series,
    pub dtoh_latency: Series,
}

/// One array size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapSize {
    pub elements: usize,
    /// Iterations per timed sample at this size.
    pub iterations: usize,
    /// Copy in, kernel, copy out on one stream.
    pub sequential: Series,
    /// The kernel alone over the whole array.
    pub kernel_alone: Series,
    pub cells: Vec<MapCell>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapMapResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    pub overheads: Overheads,
    /// The largest array copied in alone, out alone and both ways at once: the rates.
    pub copies: StageTimes,
    pub sizes: Vec<MapSize>,
}

/// One (size, stream count) cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapCellAnalysis {
    pub elements: usize,
    pub streams: usize,
    /// One stream's median over the better asynchronous order's.
    pub speedup: f64,
    /// The model's time per iteration and speedup.
    pub model_ms: f64,
    pub model_speedup: f64,
    /// Measured and model on different sides of [`PAYOFF`].
    pub disagrees: bool,
    /// Its samples.
    #[serde(skip)]
    pub cell: MapCell,
}

impl MapCell {
    /// The samples of the better asynchronous order.
    fn best(&self) -> &Series {
        self.async1.faster(&self.async2)
    }
}

/// The smallest size at which a stream count pays off, measured and modelled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Crossover {
    pub streams: usize,
    pub measured: Option<usize>,
    pub model: Option<usize>,
    /// How many size steps apart the two are (`None` if either is missing).
    pub steps_apart: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapAnalysis {
    pub sizes: Vec<usize>,
    pub stream_counts: Vec<usize>,
    pub cells: Vec<MapCellAnalysis>,
    pub crossovers: Vec<Crossover>,
    /// The model's kernel time per element (milliseconds); its fixed costs are the
    /// medians of the run's overheads.
    pub kernel_ms_per_element: f64,
    /// The model's time per iteration on one stream, per size in `sizes`' order: what
    /// `compare` holds the sequential rows against.
    pub one_stream_model_ms: Vec<f64>,
}

/// The one declaration of the cells' table and the CSV: a row per (size, stream count).
fn columns<'a>() -> Columns<'a, MapCellAnalysis> {
    Columns::new()
        .both(
            "floats",
            |x: &MapCellAnalysis| format!("2^{}", x.elements.ilog2()),
            "floats",
            |x| x.elements.to_string(),
        )
        .text("streams", "streams", |x| x.streams.to_string())
        .named(
            |x| {
                let plural = if x.streams == 1 { "" } else { "s" };
                let streams = format!("{} stream{plural}", x.streams);
                RowName::new(x.elements, format_args!("{} floats", x.elements))
                    .then(x.streams, streams)
            },
            |x, _, row| row.over_link().modelled(Some(x.model_ms)),
        )
        .measured((Some(("async1", "asynchronous 1")), MS), |x| {
            Some(&x.cell.async1)
        })
        .measured((Some(("async2", "asynchronous 2")), MS), |x| {
            Some(&x.cell.async2)
        })
        .show("iterations per sample", |x| x.cell.iterations.to_string())
        .number("best", "best_ms", (4, 5), |x| x.cell.best().median())
        .noise("noise", "noise", |x| x.cell.best().noise())
        .times("speedup", "speedup", 3, |x| x.speedup)
        .number("model", "model_ms", (4, 5), |x| x.model_ms)
        .times("model speedup", "model_speedup", 3, |x| x.model_speedup)
        .show("disagree", |x| {
            (if x.disagrees { "yes" } else { "" }).into()
        })
}

impl Saved for OverlapMapResult {
    experiment::saved_fields!(Params);

    fn stage_times(&self) -> Vec<&StageTimes> {
        vec![&self.copies]
    }
}

impl Experiment for OverlapMap {
    const NAME: &'static str = "overlap-map";
    const WORDS: &'static str = include_str!("overlap_map.md");
    const QUESTION: Option<Question> = Some(Question::StreamsPayOff);
    type Params = Params;
    type Result = OverlapMapResult;
    type Derived = MapAnalysis;

    /// The fixed costs are held against the run's launch probe (a 4-byte copy moves no
    /// data to speak of: what bounds it is issuing it); every time of the sweep against
    /// the model's time for it, from the same run's costs and rates.
    fn rows(r: &OverlapMapResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        let o = &r.overheads;
        let fixed = [
            ("launch", "kernel launch", &o.launch),
            ("htod-latency", "HtoD latency", &o.htod_latency),
            ("dtoh-latency", "DtoH latency", &o.dtoh_latency),
        ];
        let mut rows: Vec<MeasuredRow> = (fixed.into_iter())
            .map(|(key, label, s)| {
                MeasuredRow::median(key, label, s, MS).controlled_by(RowControl::Launch)
            })
            .collect();
        for (k, size) in r.sizes.iter().enumerate() {
            let n = size.elements;
            let at = RowName::new(n, format_args!("{n} floats"));
            let sequential = at.then("seq", "sequential").median(&size.sequential, MS);
            let one_stream = derived.one_stream_model_ms.get(k).copied();
            rows.push(sequential.over_link().modelled(one_stream));
            let kernel = at.then("kernel", "kernel alone");
            rows.push(kernel.median(&size.kernel_alone, MS));
            let cells = (derived.cells.iter()).filter(|c| c.elements == n);
            rows.extend(columns().measured_rows(cells));
        }
        rows
    }

    fn derive(r: &OverlapMapResult, _checks: &[TraceChecks]) -> MapAnalysis {
        let rates = best_rates(&r.copies);
        let htod_latency_ms = r.overheads.htod_latency.median();
        let dtoh_latency_ms = r.overheads.dtoh_latency.median();
        let launch_ms = r.overheads.launch.median();
        let largest = r.sizes.iter().max_by_key(|s| s.elements);
        let kernel_ms_per_element =
            largest.map_or(0.0, |s| s.kernel_alone.median() / s.elements as f64);
        let model_ms = |elements: usize, streams: usize, runs: usize| {
            let bytes = (elements * size_of::<f32>()) as u64;
            let s = streams as f64;
            let chunk_kernel = (kernel_ms_per_element * elements as f64 / s).max(launch_ms);
            let stages = Stages {
                htod_ms: s * htod_latency_ms + ms_at(bytes, rates.htod_gbps),
                kernel_ms: s * chunk_kernel,
                dtoh_ms: s * dtoh_latency_ms + ms_at(bytes, rates.dtoh_gbps),
                both_ms: ms_at(2 * bytes, rates.both_gbps),
            };
            let front_end = s * (htod_latency_ms + launch_ms + dtoh_latency_ms);
            let bound = pipeline::bound(stages, streams, runs, r.run.device.copy_engines);
            bound.ms.max(front_end)
        };
        let mut cells = Vec::new();
        let mut one_stream_model_ms = Vec::new();
        for size in &r.sizes {
            // One stream runs everything in order; its one-stream cells time the same work.
            let sequential = (size.cells.iter())
                .filter(|c| c.streams == 1)
                .map(|c| c.best().median())
                .fold(size.sequential.median(), f64::min);
            let one_stream_model = model_ms(size.elements, 1, size.iterations);
            one_stream_model_ms.push(one_stream_model);
            for cell in &size.cells {
                let model = model_ms(size.elements, cell.streams, cell.iterations);
                let speedup = sequential / cell.best().median();
                let model_speedup = one_stream_model / model;
                cells.push(MapCellAnalysis {
                    elements: size.elements,
                    streams: cell.streams,
                    speedup,
                    model_ms: model,
                    model_speedup,
                    disagrees: (speedup >= PAYOFF) != (model_speedup >= PAYOFF),
                    cell: cell.clone(),
                });
            }
        }
        let sizes: Vec<usize> = r.sizes.iter().map(|s| s.elements).collect();
        let mut stream_counts: Vec<usize> = cells.iter().map(|c| c.streams).collect();
        stream_counts.sort_unstable();
        stream_counts.dedup();
        let crossovers = (stream_counts.iter())
            .filter(|&&s| s > 1)
            .map(|&streams| {
                // The smallest size whose speedup (by `speedup`) reaches the pay-off.
                let pick = |speedup: fn(&MapCellAnalysis) -> f64| {
                    (cells.iter())
                        .find(|c| c.streams == streams && speedup(c) >= PAYOFF)
                        .map(|c| c.elements)
                };
                let (measured, model) = (pick(|c| c.speedup), pick(|c| c.model_speedup));
                let index = |n: usize| sizes.iter().position(|&x| x == n);
                Crossover {
                    streams,
                    steps_apart: measured
                        .zip(model)
                        .and_then(|(a, b)| Some(index(a)?.abs_diff(index(b)?))),
                    measured,
                    model,
                }
            })
            .collect();
        MapAnalysis {
            sizes,
            stream_counts,
            cells,
            crossovers,
            kernel_ms_per_element,
            one_stream_model_ms,
        }
    }

    fn tables(_r: &Self::Result, a: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        let at = |n: Option<usize>| n.map_or("never".to_owned(), |n| format!("2^{}", n.ilog2()));
        let caption = format!("where streams start to pay off (speedup ≥ {PAYOFF:.2}×)");
        let crossovers = Columns::new()
            .show("streams", |x: &Crossover| x.streams.to_string())
            .show("measured", move |x| at(x.measured))
            .show("model", move |x| at(x.model))
            .show("size steps apart", |x| {
                x.steps_apart.map_or("–".into(), |d| d.to_string())
            })
            .table(Some(caption), &a.crossovers);
        // Each stream count's crossovers, measured and modelled, and every cell where
        // the two disagree.
        let at_crossover = |x: &MapCellAnalysis| {
            (a.crossovers.iter()).any(|c| {
                c.streams == x.streams
                    && (c.measured == Some(x.elements) || c.model == Some(x.elements))
            })
        };
        let cells = columns().keyed(
            Some("every cell: medians, ms per iteration".into()),
            &a.cells,
            |x| x.disagrees || at_crossover(x),
        );
        vec![crossovers, cells]
    }

    fn csv(_r: &OverlapMapResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns().csv(&derived.cells))]
    }

    fn words(r: &OverlapMapResult, _a: &Self::Derived) -> Value {
        context! { payoff => PAYOFF, overheads => Serde(&r.overheads) }
    }

    /// overlap-map: the measured speedup map and the model's, each with the pay-off contour;
    /// cells where the two fall on different sides of it are outlined on both.
    fn figures(_r: &OverlapMapResult, a: &Self::Derived) -> Vec<FigureModel> {
        let marked: Vec<(usize, usize)> = (a.cells.iter())
            .filter(|c| c.disagrees)
            .filter_map(|c| {
                let row = a.sizes.iter().position(|&n| n == c.elements)?;
                let column = a.stream_counts.iter().position(|&s| s == c.streams)?;
                Some((row, column))
            })
            .collect();
        let at = |n, s| (a.cells.iter()).find(|c| c.elements == n && c.streams == s);
        let map = |name: &str, value: fn(&MapCellAnalysis) -> f64| FigureModel {
            file: format!("overlap-map-{name}.svg"),
            drawing: Drawing::HeatMap(HeatMap {
                title: format!(
                    "overlap-map, {name}: speedup over one stream (pays off from {PAYOFF:.2}×)"
                ),
                x_label: "streams".into(),
                y_label: "floats".into(),
                columns: a.stream_counts.iter().map(|s| s.to_string()).collect(),
                rows: a.sizes.iter().map(|n| format!("2^{}", n.ilog2())).collect(),
                values: (a.sizes.iter())
                    .map(|&n| {
                        (a.stream_counts.iter())
                            .map(|&s| at(n, s).map(value))
                            .collect()
                    })
                    .collect(),
                threshold: PAYOFF,
                contour: Some("pay-off line"),
                unit: "×",
                marked: marked.clone(),
            }),
        };
        vec![
            map("measured", |c| c.speedup),
            map("model", |c| c.model_speedup),
        ]
    }

    fn summary(r: &OverlapMapResult, a: &Self::Derived) -> Summary {
        Summary::of(&json!({
            "verified": r.run.verification.passed,
            "crossovers": a.crossovers,
            "model_within_one_step": (a.crossovers.iter()).all(|c| {
                c.steps_apart.is_some_and(|s| s <= 1) || (c.measured.is_none() && c.model.is_none())
            }),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saved::Params as _;

    #[test]
    fn a_stream_count_given_twice_is_refused() {
        assert_eq!(Params::default().validate(), Ok(()));
        let twice = Params {
            stream_counts: vec![4, 2, 4],
            ..Params::default()
        };
        let e = twice.validate().unwrap_err().to_string();
        assert!(e.contains("lists 4 twice"), "{e}");
    }
}
