//! What `streamlab compare` prints: the rows called changed, the rows that moved with
//! the machine, the totals and the rule's measured false-call rate.
use std::fmt::Write;

use super::render::Totals;
use super::{Comparison, change_text};
use crate::report::fit::wrap_chars as wrap;

pub const WIDTH: usize = 100;

/// At most this many changed rows are listed; the report has them all.
const LISTED: usize = 40;

/// `text` cut to `width` characters, an ellipsis marking the cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        format!("{text:<width$}")
    } else {
        let kept: String = text.chars().take(width.saturating_sub(1)).collect();
        format!("{kept}…")
    }
}

pub fn text(c: &Comparison) -> String {
    let mut out = String::new();
    let say = |out: &mut String, line: &str| {
        for l in wrap(line, WIDTH) {
            let _ = writeln!(out, "{l}");
        }
    };
    let totals = Totals::of(c.rows());
    let [alone, controlled] = totals.headlines();
    for line in [c.identity(), alone, controlled] {
        say(&mut out, &line);
    }
    let changed = c.changed();
    // row | raw | controlled
    let (raw_w, ctrl_w) = (18, 18);
    let row_w = WIDTH - raw_w - ctrl_w - 2;
    let columns = |row: &str, raw: &str, ctrl: &str| {
        let (row, raw, ctrl) = (fit(row, row_w), fit(raw, raw_w), fit(ctrl, ctrl_w));
        format!("{row} {raw} {}\n", ctrl.trim_end())
    };
    if changed.is_empty() {
        out.push_str("no row changed\n");
    } else {
        out += &columns("row called changed", "B/A raw", "B/A controlled");
        for r in changed.iter().take(LISTED) {
            let name = format!("{}: {}", r.row.experiment, r.label());
            let raw = change_text(r.verdicts.raw.b_over_a, r.raw_called());
            let ctrl = r.verdicts.controlled.map_or("no control".into(), |j| {
                change_text(j.b_over_a, Some(j.verdict))
            });
            out += &columns(&name, &raw, &ctrl);
        }
        if changed.len() > LISTED {
            let _ = writeln!(
                out,
                "… and {} more (the report lists them all)",
                changed.len() - LISTED
            );
        }
    }
    for s in &c.sections {
        if let Some((n, moved)) = s.machine_moved() {
            let (name, by) = (s.name, crate::verdict::percent(moved.abs()));
            let line = format!(
                "{name}: the machine moved by {by} ({n} rows moved with their controls; not counted as changes)"
            );
            say(&mut out, &line);
        }
    }
    say(&mut out, &format!("{}.", totals.line()));
    let false_calls = format!("False-call rate: {}.", c.margins.false_call_text());
    say(&mut out, &false_calls);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_and_wrapped_to_the_width() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("ab", 4), "ab  ");
        let long = "word ".repeat(60);
        assert!(
            wrap(&long, WIDTH)
                .iter()
                .all(|l| l.chars().count() <= WIDTH)
        );
    }
}
