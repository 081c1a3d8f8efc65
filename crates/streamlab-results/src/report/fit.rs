//! Fitting a table to a width, the same way for the terminal and the page: each noise
//! under its value, the columns split into parts that each repeat the columns naming a
//! row, long cells wrapped, and a long table's rows that carry its finding first.
use super::table::Table;
use super::text;

/// The widest a line of terminal output is, unless `--wide`.
pub const TERMINAL_COLUMNS: usize = 100;

/// A table with more rows than this shows the rows that carry its finding first.
pub const LONG_ROWS: usize = 20;

/// How wide printed text may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// At most this many columns: tables fitted, lines wrapped.
    Columns(usize),
    /// Every table whole, each of its rows on one line (`--wide`).
    Wide,
}

impl Width {
    /// The terminal's default.
    pub const TERMINAL: Width = Width::Columns(TERMINAL_COLUMNS);

    /// `t` as text of this width.
    pub fn table(self, t: &Table) -> String {
        match self {
            Width::Columns(max) => t.text_fitted(max),
            Width::Wide => t.text(),
        }
    }

    /// Each line of `text` wrapped to this width, its continuation lines indented.
    pub fn lines(self, text: &str) -> String {
        let mut out = String::new();
        for line in text.lines() {
            match self {
                Width::Columns(max) if line.chars().count() > max => {
                    let indent = line.len() - line.trim_start().len() + 2;
                    let gap = format!("\n{}", " ".repeat(indent));
                    out += &wrap_chars(line, max - indent).join(&gap);
                }
                _ => out += line,
            }
            out.push('\n');
        }
        out
    }
}

/// What separates a value from its noise in a cell of [`Table::merged`].
pub const UNDER: char = '\n';

/// The widest a column is counted when a page's table is split: longer text wraps.
const PAGE_CELL_PX: f64 = 240.0;

/// The page's font size for tables, in pixels, and a cell's padding and border.
const PAGE_FONT_PX: f64 = 13.0;
const PAGE_CELL_PADDING_PX: f64 = 18.0;

/// The width a table has on the page: the report's body less its margins.
pub const PAGE_PX: f64 = 1200.0;

impl Table {
    /// The table as aligned plain text, each row on one line (`--wide`).
    pub fn text(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|i| column_chars(self, i))
            .collect();
        aligned(self, &widths, usize::MAX)
    }

    /// Whether column `i` holds the noise of the column before it, by its heading.
    pub fn is_noise(&self, i: usize) -> bool {
        let noise = |i: usize| {
            let h = self.header[i].to_lowercase();
            h == "noise" || h.ends_with(" noise")
        };
        i > 0 && !noise(i - 1) && noise(i)
    }

    /// The table with each known noise under its value: "value", [`UNDER`], "± noise".
    pub fn merged(&self) -> Table {
        let noise = |i: usize| i + 1 < self.header.len() && self.is_noise(i + 1);
        let keep: Vec<usize> = (0..self.header.len())
            .filter(|&i| !self.is_noise(i))
            .collect();
        let cell = |row: &[String], i: usize| {
            let value = row.get(i).cloned().unwrap_or_default();
            let known = (row.get(i + 1)).filter(|n| noise(i) && !n.is_empty() && *n != "–");
            match known {
                Some(n) => format!("{value}{UNDER}± {n}"),
                None => value,
            }
        };
        self.select(&keep, cell)
    }

    /// The table of its `columns` only, each cell as `cell` writes column `i` of a row.
    fn select(&self, columns: &[usize], cell: impl Fn(&[String], usize) -> String) -> Table {
        Table {
            header: columns.iter().map(|&i| self.header[i].clone()).collect(),
            rows: (self.rows.iter())
                .map(|r| columns.iter().map(|&i| cell(r, i)).collect())
                .collect(),
            ..self.clone()
        }
    }

    /// Whether the table folds: longer than [`LONG_ROWS`], some of its rows key rows.
    pub fn folds(&self) -> bool {
        self.rows.len() > LONG_ROWS
            && !self.key_rows.is_empty()
            && self.key_rows.len() < self.rows.len()
    }

    /// The table with only its rows that carry the finding, in order.
    pub fn key_only(&self) -> Table {
        let mut rows = self.key_rows.clone();
        rows.sort_unstable();
        rows.dedup();
        Table {
            rows: (rows.iter())
                .filter_map(|&i| self.rows.get(i).cloned())
                .collect(),
            key_rows: Vec::new(),
            ..self.clone()
        }
    }

    /// The table split by columns into parts at most `max` wide, `width` measuring a
    /// column: each part has the columns naming a row, then as many others as fit (a
    /// column too wide for any part has one of its own). One part where it fits.
    pub fn parts(&self, max: f64, width: impl Fn(&Table, usize) -> f64) -> Vec<Table> {
        let n = self.header.len();
        let labels = self.label_columns.min(n);
        let label_width: f64 = (0..labels).map(|i| width(self, i)).sum();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut used = f64::INFINITY;
        for i in labels..n {
            let w = width(self, i);
            match groups.last_mut() {
                Some(g) if used + w <= max => {
                    g.push(i);
                    used += w;
                }
                _ => {
                    groups.push(vec![i]);
                    used = label_width + w;
                }
            }
        }
        if groups.len() <= 1 {
            return vec![self.clone()];
        }
        let count = groups.len();
        (groups.into_iter().enumerate())
            .map(|(k, g)| {
                let columns: Vec<usize> = (0..labels).chain(g).collect();
                let caption = match (k, &self.caption) {
                    (0, Some(c)) => format!("{c} (part 1 of {count})"),
                    (0, None) => format!("part 1 of {count}"),
                    (k, _) => format!("continued (part {} of {count})", k + 1),
                };
                Table {
                    caption: Some(caption),
                    label_columns: labels,
                    ..self.select(&columns, |r, i| r[i].clone())
                }
            })
            .collect()
    }

    /// The table as plain text at most `max` columns wide: each noise beside its value
    /// ("2.81 ± 0.4%"), split into parts that fit; a long table gives only the rows that
    /// carry its finding.
    pub fn text_fitted(&self, max: usize) -> String {
        let table = if self.folds() {
            let mut t = self.key_only();
            let (caption, key, all) = (self.caption.as_deref(), t.rows.len(), self.rows.len());
            let rows = format!(
                "({key} of {all} rows, those that carry the finding; --wide prints every row)"
            );
            t.caption = Some(format!("{} {rows}", caption.unwrap_or("")).trim().into());
            t.merged()
        } else {
            self.merged()
        };
        // A column is at most what is left beside the labels, and a label column at most
        // what the other columns leave; the rest wraps.
        let n = table.label_columns.min(table.header.len());
        let fitted = |t: &Table, i: usize, cap: usize| column_chars(t, i).min(cap) + 2;
        let labels: usize = (0..n).map(|i| fitted(&table, i, usize::MAX)).sum();
        let cap = max.saturating_sub(labels).max(12);
        let others: usize = (n..table.header.len())
            .map(|i| fitted(&table, i, cap))
            .sum();
        let label_cap = max.saturating_sub(others).max(cap);
        let cap_of = |i: usize| if i < n { label_cap } else { cap };
        let width = |t: &Table, i: usize| fitted(t, i, cap_of(i)) as f64;
        let mut out = String::new();
        for part in table.parts(max as f64 + 2.0, width) {
            let widths: Vec<usize> = (0..part.header.len())
                .map(|i| column_chars(&part, i).min(cap_of(i)))
                .collect();
            out += &aligned(&part, &widths, max);
        }
        out
    }
}

/// A cell on one line: its noise beside its value.
fn inline(cell: &str) -> String {
    cell.replace(UNDER, " ")
}

/// The widest cell of `t`'s column `i` and its heading, in characters, [`inline`].
fn column_chars(t: &Table, i: usize) -> usize {
    (t.rows.iter())
        .map(|r| r.get(i).map_or(0, |c| inline(c).chars().count()))
        .chain([t.header[i].chars().count()])
        .max()
        .unwrap_or(0)
}

/// `t` as aligned text in columns of `widths`, cells wrapped to them: numbers
/// right-aligned, words left-aligned, the caption above wrapped at `max`.
fn aligned(t: &Table, widths: &[usize], max: usize) -> String {
    let numeric = |i: usize| {
        (t.rows.iter().filter_map(|r| r.get(i)))
            .filter(|c| !c.is_empty())
            .all(|c| c.starts_with(|ch: char| ch.is_ascii_digit() || "–-".contains(ch)))
    };
    let mut out = String::new();
    if let Some(c) = &t.caption {
        for line in wrap_chars(c, max) {
            out += &line;
            out.push('\n');
        }
    }
    let mut row = |cells: &[String]| {
        let wrapped: Vec<Vec<String>> = (cells.iter().enumerate())
            .map(|(i, c)| wrap_chars(&inline(c), widths[i]))
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut line = String::new();
            for (i, cell) in wrapped.iter().enumerate() {
                let (c, w) = (cell.get(k).map_or("", String::as_str), widths[i]);
                if i > 0 {
                    line += "  ";
                }
                line += &match i > 0 && numeric(i) {
                    true => format!("{c:>w$}"),
                    false => format!("{c:<w$}"),
                };
            }
            out += line.trim_end();
            out.push('\n');
        }
    };
    row(&t.header);
    for r in &t.rows {
        row(r);
    }
    out
}

/// `text` split at spaces into lines of at most `max` characters, longer words cut.
pub fn wrap_chars(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let pieces = text.split_whitespace().flat_map(|word| {
        let chars: Vec<char> = word.chars().collect();
        let pieces: Vec<String> = chars.chunks(max).map(|p| p.iter().collect()).collect();
        pieces
    });
    text::fill(pieces, |line| line.chars().count() <= max)
}

/// The width column `i` of `t` takes on the page in pixels: its widest line, at most
/// `PAGE_CELL_PX`, and its padding.
pub fn page_width(t: &Table, i: usize) -> f64 {
    let widest = (t.rows.iter().map(|r| r[i].as_str()))
        .chain([t.header[i].as_str()])
        .flat_map(|c| c.split(UNDER))
        .map(|l| text::width(l, PAGE_FONT_PX))
        .fold(0.0, f64::max);
    widest.min(PAGE_CELL_PX) + PAGE_CELL_PADDING_PX
}

/// The parts `t` shows as on the page: noise under values, split to fit [`PAGE_PX`].
pub fn page_parts(t: &Table) -> Vec<Table> {
    t.merged().parts(PAGE_PX, page_width)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide() -> Table {
        let header = ["case", "alpha", "noise", "beta", "noise", "gamma"];
        let mut t = Table::new(Some("cap".into()), &header);
        t.label_columns = 1;
        for i in 0..25 {
            t.rows.push(vec![
                format!("case {i}"),
                "1.2345".into(),
                "0.4%".into(),
                "2.5".into(),
                "–".into(),
                "a long remark that goes on and on about this row".into(),
            ]);
        }
        t.key_rows = vec![3, 7];
        t
    }

    #[test]
    fn noise_goes_under_its_value_parts_fit_their_width_and_long_words_are_cut() {
        let m = wide().merged();
        assert_eq!(m.header, ["case", "alpha", "beta", "gamma"]);
        assert_eq!(m.rows[0][1], format!("1.2345{UNDER}± 0.4%"));
        let beta = &m.rows[0][2];
        assert_eq!(beta, "2.5", "an unknown noise leaves the value alone");
        // Fitted text keeps to its width and names each row in every part.
        let text = wide().text_fitted(30);
        for line in text.lines() {
            assert!(line.chars().count() <= 30, "too wide: {line:?}");
        }
        assert!(text.contains("part 2 of"), "{text}");
        assert!(text.contains("case 3") && text.contains("case 7"));
        assert!(!text.contains("case 4"), "a long table gives its key rows");
        assert!(text.contains("2 of 25 rows"));
        let parts = text.matches("part ").count();
        assert_eq!(text.matches("case 3").count(), parts, "labels repeat");
        // Page parts fit the page.
        let mut t = wide();
        for k in 0..12 {
            t.header.push(format!("column {k}"));
            for r in &mut t.rows {
                r.push("12345.678".into());
            }
        }
        let parts = page_parts(&t);
        assert!(parts.len() > 1);
        for p in &parts {
            let w: f64 = (0..p.header.len()).map(|i| page_width(p, i)).sum();
            assert!(w <= PAGE_PX, "{w}");
            assert_eq!(p.header[0], "case");
        }
        // A table that fits is one part; long words are cut.
        let mut t = Table::new(None, &["a", "b"]);
        t.rows.push(vec!["x".into(), "1".into()]);
        assert_eq!(t.parts(100.0, |_, _| 10.0).len(), 1);
        assert_eq!(t.text_fitted(100), t.text());
        // A label wider than half the width stays whole where the other columns leave room.
        let label = "compare-kernels: add_kernel cycles 1001, 134217689 ints plain: Rust";
        t.rows[0][0] = label.into();
        let text = t.text_fitted(100);
        assert!(text.lines().any(|l| l.starts_with(label)), "{text}");
        assert_eq!(wrap_chars("ab cd efghij", 5), ["ab cd", "efghi", "j"]);
        assert_eq!(wrap_chars("", 5), [""]);
    }
}
