//! What `streamlab compare` prints: the rows called changed, the rows that moved with
//! the machine, the totals and the rule's measured false-call rate.
use super::render::{moved_with_machine, notes};
use super::{Comparison, change_text, changed};
use crate::report::fit::Width;
use crate::report::table::Table;

/// At most this many changed rows are listed; the report has them all.
const LISTED: usize = 40;

pub fn text(c: &Comparison) -> String {
    let width = Width::TERMINAL;
    let [identity, machine, code, in_all] = notes(c).map(|(_, text)| width.lines(&text));
    let mut out = identity + &machine + &code;
    let changed = changed(c.rows());
    let mut t = Table::new(None, &["row called changed", "B/A raw", "B/A controlled"]);
    for r in changed.iter().take(LISTED) {
        let controlled = (r.verdicts.controlled).map_or("no control".into(), |j| {
            change_text(j.b_over_a, Some(j.verdict))
        });
        t.rows.push(vec![
            format!("{}: {}", r.row.experiment, r.row.label),
            change_text(r.verdicts.raw.b_over_a, r.raw_called()),
            controlled,
        ]);
    }
    out += &match changed.len() {
        0 => "no row changed\n".to_owned(),
        n if n > LISTED => {
            width.table(&t) + &format!("… and {} more (the report lists them all)\n", n - LISTED)
        }
        _ => width.table(&t),
    };
    if let Some((label, moved)) = moved_with_machine(c) {
        out += &width.lines(&format!("{label}: {moved}."));
    }
    out + &in_all
}
