//! What an experiment's modules name, in one line: `use crate::experiments::prelude::*;`.
pub use serde::{Deserialize, Serialize};
pub use serde_json::json;

pub use crate::derived::pipeline::{self, Bound, Stages, Under};
pub use crate::derived::rates::{best_rates, chunks_noise, gbps, pipeline_stages};
pub use crate::derived::trace::{BreakKind, TraceChecks};
pub use crate::experiment::{
    self, Analyzed, Csv, Experiment, MS, MeasuredRow, Overview, Question, RowControl, RowName,
    Saved, Serde, Summary, US, Value, With, context, own_link, verdict,
};
pub use crate::report::ReportError;
pub use crate::report::chart::{BOUND_COLOR, Level, PALETTE, SEQUENTIAL_COLOR, XAxis, YScale};
pub use crate::report::figures::{FigureModel, bars, blank, line, points};
pub use crate::report::section::Section;
pub use crate::report::table::{Columns, Table, faster, noise, num, times, yes_no};
pub use crate::saved::timeline::{CopyRates, Timeline};
pub use crate::saved::{
    IssueOrder, KernelForm, KernelSet, LinkRates, MAX_STREAMS, RunRecord, StageTimes, UsageError,
};
pub use crate::stats::{self, Series};
pub use crate::verdict::{Rule, Verdict};
