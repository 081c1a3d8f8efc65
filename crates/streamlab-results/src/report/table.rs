//! Tables, declared once ([`Columns`]): the printed, Markdown and HTML tables, the CSV
//! and the measured rows `compare` sets side by side all come from one declaration of
//! an experiment's columns. Also the cell formats every table shares.
use std::borrow::Cow;
use std::fmt::Write;
use std::rc::Rc;

use crate::derived::pipeline::Under;
use crate::measured::{MeasuredRow, RowName};
use crate::saved::KernelSet;
use crate::stats::Series;

/// A rectangular table of text, with an optional caption; `report::fit` prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub caption: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// How many leading columns name a row: every part of a split table repeats them.
    pub label_columns: usize,
    /// The rows that carry the table's finding: a long table shows them first.
    pub key_rows: Vec<usize>,
}

impl Table {
    pub fn new(caption: Option<String>, header: &[&str]) -> Table {
        Table {
            caption,
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
            label_columns: 1,
            key_rows: Vec::new(),
        }
    }

    /// The index of the first column whose header starts with `prefix`.
    pub fn column(&self, prefix: &str) -> Option<usize> {
        self.header.iter().position(|h| h.starts_with(prefix))
    }
}

type Cell<'a, R> = Rc<dyn Fn(&R) -> String + 'a>;
type Name<'a, R> = Box<dyn Fn(&R) -> RowName + 'a>;
type Hold<'a, R> = Box<dyn Fn(&R, Option<&str>, MeasuredRow) -> MeasuredRow + 'a>;
type Samples<'a, R> = Rc<dyn for<'r> Fn(&'r R) -> Option<&'r Series> + 'a>;

/// A measured column: each table row's samples in `unit`, named as the row or `item`.
struct Measured<'a, R> {
    item: Option<(&'static str, &'static str)>,
    unit: &'static str,
    samples: Samples<'a, R>,
}

/// A column's heading or name: mostly a literal, built for columns declared in a loop.
type Text = Cow<'static, str>;

/// A column's heading or name, and its cells.
type Named<'a, R> = Option<(Text, Cell<'a, R>)>;

/// One column: in the tables, in the CSV, or in both.
struct Column<'a, R> {
    /// Whether it names a row (declared with [`Columns::text`]).
    label: bool,
    shown: Named<'a, R>,
    csv: Named<'a, R>,
}

pub struct Columns<'a, R> {
    columns: Vec<Column<'a, R>>,
    name: Option<(Name<'a, R>, Hold<'a, R>)>,
    measured: Vec<Measured<'a, R>>,
}

impl<'a, R> Default for Columns<'a, R> {
    fn default() -> Self {
        Columns {
            columns: Vec::new(),
            name: None,
            measured: Vec::new(),
        }
    }
}

impl<'a, R: 'a> Columns<'a, R> {
    pub fn new() -> Self {
        Self::default()
    }

    fn push(mut self, label: bool, shown: Named<'a, R>, csv: Named<'a, R>) -> Self {
        self.columns.push(Column { label, shown, csv });
        self
    }

    /// A column of the tables only.
    pub fn show(self, heading: impl Into<Text>, cell: impl Fn(&R) -> String + 'a) -> Self {
        self.push(false, Some((heading.into(), Rc::new(cell))), None)
    }

    /// A column of the tables that the CSV has too, under `name`, written by `raw`.
    pub fn both(
        self,
        heading: impl Into<Text>,
        cell: impl Fn(&R) -> String + 'a,
        name: impl Into<Text>,
        raw: impl Fn(&R) -> String + 'a,
    ) -> Self {
        let csv: Named<'a, R> = Some((name.into(), Rc::new(raw)));
        self.push(false, Some((heading.into(), Rc::new(cell))), csv)
    }

    /// A column of text, the same in the tables and the CSV; leading ones name a row.
    pub fn text(
        self,
        heading: impl Into<Text>,
        name: impl Into<Text>,
        cell: impl Fn(&R) -> String + 'a,
    ) -> Self {
        let cell: Cell<'a, R> = Rc::new(cell);
        let csv = Some((name.into(), cell.clone()));
        self.push(true, Some((heading.into(), cell)), csv)
    }

    /// A number: `shown` decimals in the tables, `saved` in the CSV (under `name`).
    pub fn number(
        self,
        heading: impl Into<Text>,
        name: impl Into<Text>,
        (shown, saved): (usize, usize),
        value: impl Fn(&R) -> f64 + 'a,
    ) -> Self {
        let save = move |v: f64| format!("{v:.saved$}");
        self.valued(heading, name, value, move |v| num(v, shown), save)
    }

    /// A value a row may lack, as `value` gives it (its number and its text): the text in
    /// the tables, the number to four decimals in the CSV; "–" and empty without one.
    pub fn optional(
        self,
        (heading, name): (impl Into<Text>, impl Into<Text>),
        value: impl Fn(&R) -> Option<(f64, String)> + 'a,
    ) -> Self {
        let value = Rc::new(value);
        let raw = value.clone();
        self.both(
            heading,
            move |x| value(x).map_or("–".into(), |(_, shown)| shown),
            name,
            move |x| raw(x).map_or(String::new(), |(v, _)| format!("{v:.4}")),
        )
    }

    /// A value a row, shown by `show` in the tables and by `save` in the CSV.
    fn valued(
        self,
        heading: impl Into<Text>,
        name: impl Into<Text>,
        value: impl Fn(&R) -> f64 + 'a,
        show: impl Fn(f64) -> String + 'a,
        save: impl Fn(f64) -> String + 'a,
    ) -> Self {
        let value = Rc::new(value);
        let raw = value.clone();
        let (show, save) = (move |r: &R| show(value(r)), move |r: &R| save(raw(r)));
        self.both(heading, show, name, save)
    }

    /// Each row's name among the measured rows, and `hold` making each of its measured
    /// rows (by its column's item) what it is held against.
    pub fn named(
        mut self,
        name: impl Fn(&R) -> RowName + 'a,
        hold: impl Fn(&R, Option<&str>, MeasuredRow) -> MeasuredRow + 'a,
    ) -> Self {
        self.name = Some((Box::new(name), Box::new(hold)));
        self
    }

    /// A measured median of the row's `samples` ([`Columns::number`]), and its measured
    /// row ([`Columns::measured`]).
    pub fn median<F>(
        self,
        (heading, name): (&'static str, &'static str),
        (shown, saved): (usize, usize),
        (item, unit): (Option<(&'static str, &'static str)>, &'static str),
        samples: F,
    ) -> Self
    where
        F: for<'r> Fn(&'r R) -> Option<&'r Series> + 'a,
    {
        let samples: Samples<'a, R> = Rc::new(samples);
        let median = samples.clone();
        let median = move |r: &R| median(r).map_or(f64::NAN, Series::median);
        let measured = self.measured((item, unit), move |r| samples(r));
        measured.number(heading, name, (shown, saved), median)
    }

    /// A measured row of each row's `samples` (in `unit`), named as the table's row or
    /// under it as `item`, that the tables and the CSV do not show.
    pub fn measured<F>(
        mut self,
        (item, unit): (Option<(&'static str, &'static str)>, &'static str),
        samples: F,
    ) -> Self
    where
        F: for<'r> Fn(&'r R) -> Option<&'r Series> + 'a,
    {
        self.measured.push(Measured {
            item,
            unit,
            samples: Rc::new(samples),
        });
        self
    }

    /// The measured rows of `rows`: for each row, each measured column's, in order.
    pub fn measured_rows<'r>(&self, rows: impl IntoIterator<Item = &'r R>) -> Vec<MeasuredRow>
    where
        R: 'r,
    {
        let Some((name, hold)) = &self.name else {
            debug_assert!(
                self.measured.is_empty(),
                "measured columns need Columns::named"
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for r in rows {
            for m in &self.measured {
                let Some(samples) = (m.samples)(r) else {
                    continue;
                };
                let named = match m.item {
                    Some((key, words)) => name(r).then(key, words),
                    None => name(r),
                };
                let row = named.median(samples, m.unit);
                out.push(hold(r, m.item.map(|(key, _)| key), row));
            }
        }
        out
    }

    /// A relative noise: a percentage in the tables, a fraction with 4 decimals in the CSV.
    pub fn noise(
        self,
        heading: impl Into<Text>,
        name: impl Into<Text>,
        value: impl Fn(&R) -> f64 + 'a,
    ) -> Self {
        self.valued(heading, name, value, noise, |v| format!("{v:.4}"))
    }

    /// The relative noise ([`Columns::noise`]) of the samples of the measured column
    /// declared last (with [`Columns::median`]).
    pub fn noise_of(self, heading: impl Into<Text>, name: impl Into<Text>) -> Self {
        let last = (self.measured.last()).expect("noise_of follows a measured column");
        let samples = last.samples.clone();
        let noise = move |r: &R| samples(r).map_or(f64::NAN, Series::noise);
        self.noise(heading, name, noise)
    }

    /// A factor: "1.23×" in the tables, `saved` decimals in the CSV.
    pub fn times(
        self,
        heading: impl Into<Text>,
        name: impl Into<Text>,
        saved: usize,
        value: impl Fn(&R) -> f64 + 'a,
    ) -> Self {
        self.valued(heading, name, value, times, move |v| format!("{v:.saved$}"))
    }

    /// `add` applied to these columns where `when` holds: columns only some results have.
    pub fn then(self, when: bool, add: impl FnOnce(Self) -> Self) -> Self {
        if when { add(self) } else { self }
    }

    /// The columns declared so far name a row: every part of a split table repeats them.
    pub fn row_names(mut self) -> Self {
        for c in &mut self.columns {
            c.label = true;
        }
        self
    }

    /// A column of the CSV only.
    pub fn raw(self, name: impl Into<Text>, raw: impl Fn(&R) -> String + 'a) -> Self {
        self.push(false, None, Some((name.into(), Rc::new(raw))))
    }

    /// The table of `rows`.
    pub fn table(&self, caption: Option<String>, rows: &[R]) -> Table {
        let shown: Vec<_> = (self.columns.iter())
            .filter_map(|c| Some((c.shown.as_ref()?, c.label)))
            .collect();
        Table {
            caption,
            header: shown.iter().map(|((h, _), _)| h.to_string()).collect(),
            rows: (rows.iter())
                .map(|r| shown.iter().map(|((_, cell), _)| cell(r)).collect())
                .collect(),
            label_columns: (shown.iter().take_while(|(_, l)| *l).count()).max(1),
            key_rows: Vec::new(),
        }
    }

    /// The table of `rows`, those where `key` holds carrying its finding.
    pub fn keyed(&self, caption: Option<String>, rows: &[R], key: impl Fn(&R) -> bool) -> Table {
        let keys = (rows.iter().enumerate()).filter(|(_, r)| key(r));
        Table {
            key_rows: keys.map(|(i, _)| i).collect(),
            ..self.table(caption, rows)
        }
    }

    /// The CSV of `rows`: a header line of names, then a line per row.
    pub fn csv(&self, rows: &[R]) -> String {
        let raw: Vec<_> = self.columns.iter().filter_map(|c| c.csv.as_ref()).collect();
        let names: Vec<&str> = raw.iter().map(|(name, _)| name.as_ref()).collect();
        let mut out = names.join(",") + "\n";
        for r in rows {
            let cells: Vec<String> = raw.iter().map(|(_, cell)| cell(r)).collect();
            let _ = writeln!(out, "{}", cells.join(","));
        }
        out
    }
}

/// `x` as `show` writes it, "–" when not finite.
fn finite(x: f64, show: impl Fn(f64) -> String) -> String {
    if x.is_finite() { show(x) } else { "–".into() }
}

/// A number with `decimals` decimals, "–" when not finite.
pub fn num(x: f64, decimals: usize) -> String {
    finite(x, |x| format!("{x:.decimals$}"))
}

/// `x` as "1.23×", "–" when not finite.
pub fn times(x: f64) -> String {
    finite(x, |x| format!("{x:.2}×"))
}

/// How much faster `after` took than `before`: "1.85× faster" or "1.10× slower".
pub fn faster(before: f64, after: f64) -> String {
    let x = before / after;
    match x {
        x if !x.is_finite() => "–".into(),
        x if x >= 1.0 => format!("{x:.2}× faster"),
        x => format!("{:.2}× slower", 1.0 / x),
    }
}

/// A relative noise as a percentage, e.g. "0.4%".
pub fn noise(x: f64) -> String {
    finite(x, |x| format!("{:.1}%", 100.0 * x))
}

/// "yes" or "no".
pub fn yes_no(yes: bool) -> &'static str {
    if yes { "yes" } else { "no" }
}

/// The flag of a row that beat the bound built from the measured rates, as a cell.
pub fn flag(beyond: bool) -> String {
    let flag = "beat its bound as built: bound lowered to the row";
    if beyond { flag.into() } else { String::new() }
}

/// Where a row sits under its bound: empty, `within-noise` or `beyond-noise`.
pub fn under_csv(under: Option<Under>) -> String {
    match under {
        None => String::new(),
        Some(Under::WithinNoise) => "within-noise".into(),
        Some(Under::BeyondNoise) => "beyond-noise".into(),
    }
}

/// Rust over CUDA C++, or "–" without a C++ figure.
pub fn ratio(rust: f64, cuda: Option<f64>) -> String {
    cuda.map_or("–".into(), |c| num(rust / c, 3))
}

/// The heading of experiment `name`'s table, naming the CUDA C++ kernels.
pub fn heading(name: &str, set: KernelSet) -> String {
    match set {
        KernelSet::Rust => name.to_owned(),
        KernelSet::Cuda => format!("{name} (CUDA C++ kernels)"),
    }
}

/// The line of a result the run stopped before every configuration was measured.
pub fn incomplete(complete: bool) -> &'static str {
    let line = "INCOMPLETE: the run was stopped before every configuration was measured\n";
    if complete { "" } else { line }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Row {
        name: &'static str,
        ms: f64,
    }

    fn columns<'a>() -> Columns<'a, Row> {
        Columns::new()
            .text("case", "case", |r: &Row| r.name.to_owned())
            .number("ms", "median_ms", (2, 5), |r| r.ms)
            .show("flag", |r| {
                (if r.ms > 2.0 { "slow" } else { "" }).to_owned()
            })
            .optional(("over 2", "over_2_ms"), |r| {
                (r.ms > 2.0).then(|| (r.ms - 2.0, format!("{} ms", r.ms - 2.0)))
            })
    }

    #[test]
    fn one_declaration_gives_the_table_and_the_csv() {
        let rows = [("a", 1.0), ("long", 12.5)].map(|(name, ms)| Row { name, ms });
        let t = columns().table(Some("cap".into()), &rows);
        assert_eq!(t.header, ["case", "ms", "flag", "over 2"]);
        assert_eq!(t.rows[0][3], "–");
        assert_eq!(t.rows[1], ["long", "12.50", "slow", "10.5 ms"]);
        let csv = "case,median_ms,over_2_ms\na,1.00000,\nlong,12.50000,10.5000\n";
        assert_eq!(columns().csv(&rows), csv);
        let text = "cap\ncase     ms  flag   over 2\na      1.00              –\nlong  12.50  slow  10.5 ms\n";
        assert_eq!(t.text(), text);
    }
}
