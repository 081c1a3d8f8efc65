//! A result's measured numbers as `compare` sets them side by side: each a row
//! ([`MeasuredRow`]) with its samples, its noise and what it is held against.
use crate::stats::Series;

/// One measured number of a result.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredRow {
    /// Names the configuration and quantity, the same in every run that measured it,
    /// e.g. "async2/4": short enough for a chart's axis.
    pub key: String,
    /// The same in words, e.g. "asynchronous 2 with 4 streams".
    pub label: String,
    pub value: f64,
    /// The unit of `value`: [`MS`] or [`US`].
    pub unit: &'static str,
    /// The relative noise of the samples behind `value` ([`Series::measured_noise`]);
    /// `None` where they cannot show one.
    pub noise: Option<f64>,
    /// The samples `value` is the median of, in `unit`: what `compare` ranks.
    pub samples: Vec<f64>,
    /// Whether its work moves data over the host link, whose rate a shared machine's
    /// other traffic moves: without a twin, `compare` holds it against the link's probes
    /// of the same run (`crate::compare::rows`).
    pub over_link: bool,
    /// What else of its own run it is held against, to tell the machine from the code
    /// (besides a twin and the link, which `compare` finds by itself).
    pub control: Option<RowControl>,
}

/// A measured row's name: its key and its label, built together.
/// `RowName::new("4096", "4096 floats").then("seq", "sequential")` is keyed "4096/seq"
/// and labelled "4096 floats: sequential".
#[derive(Debug, Clone, PartialEq)]
pub struct RowName {
    pub key: String,
    pub label: String,
}

impl RowName {
    pub fn new(key: impl std::fmt::Display, label: impl std::fmt::Display) -> RowName {
        RowName {
            key: key.to_string(),
            label: label.to_string(),
        }
    }

    /// A row under this one: keyed `key/item`, labelled "label: what".
    pub fn then(&self, item: impl std::fmt::Display, what: impl std::fmt::Display) -> RowName {
        RowName::new(
            format_args!("{}/{item}", self.key),
            format_args!("{}: {what}", self.label),
        )
    }

    /// The median of `series` (in `unit`) with its noise, under this name.
    pub fn median(self, series: &Series, unit: &'static str) -> MeasuredRow {
        MeasuredRow::median(self.key, self.label, series, unit)
    }

    /// The rows of one configuration's series in `unit`, each `(item, what, series)`
    /// named [`RowName::then`].
    pub fn group<'s>(
        &self,
        unit: &'static str,
        items: impl IntoIterator<Item = (&'s str, &'s str, &'s Series)>,
    ) -> impl Iterator<Item = MeasuredRow> {
        let name = self.clone();
        (items.into_iter())
            .map(move |(item, what, series)| name.then(item, what).median(series, unit))
    }
}

/// A control a row names for itself (see [`MeasuredRow::control`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RowControl {
    /// Another row of the same result, by key: compare-kernels' Rust row against its
    /// C++ twin's.
    Row(String),
    /// An empty kernel's launch, as the run's `bounds` probe measured it: a row the host's
    /// launching bounds.
    Launch,
    /// The row's time as its own result's model predicts it from the probes that bound it
    /// (in the row's unit): a small copy's launch and latency, a large one's link rate,
    /// the model's mix of the two between, or a host's copy that a pipeline hides only
    /// while it is shorter than an iteration.
    Model(f64),
}

/// Milliseconds.
pub const MS: &str = "ms";
/// Microseconds.
pub const US: &str = "µs";

impl MeasuredRow {
    /// The median of `series` (in `unit`) with its noise.
    pub fn median(
        key: impl Into<String>,
        label: impl Into<String>,
        series: &Series,
        unit: &'static str,
    ) -> MeasuredRow {
        MeasuredRow {
            key: key.into(),
            label: label.into(),
            value: series.median(),
            unit,
            noise: series.measured_noise(),
            samples: series.samples_ms.clone(),
            over_link: false,
            control: None,
        }
    }

    /// The same row, marked as moving data over the host link.
    pub fn over_link(self) -> MeasuredRow {
        MeasuredRow {
            over_link: true,
            ..self
        }
    }

    /// The same row, held against `control` of its own run.
    pub fn controlled_by(self, control: RowControl) -> MeasuredRow {
        MeasuredRow {
            control: Some(control),
            ..self
        }
    }

    /// The same row, held against its model's time `ms` where there is one: a model
    /// that is not a positive, finite time (a rate the run could not measure) controls
    /// nothing, and the row keeps the control it had.
    pub fn modelled(self, ms: Option<f64>) -> MeasuredRow {
        match ms.filter(|ms| ms.is_finite() && *ms > 0.0) {
            Some(ms) => self.controlled_by(RowControl::Model(ms)),
            None => self,
        }
    }
}
