//! A run's `summary.json` from its analysed results ([`summarize`]), its findings for
//! the report's first screen ([`findings`]), and its headlines as lines
//! ([`summary_text`]).
use super::SavedRun;
use crate::derived::rates::{NOISY_LINK, link_moved};
use crate::derived::summary::{Answered, Entries, Json, LinkSteady, RunStatus, RunSummary};
use crate::experiment::{self, Analysis, MeasuredRow, Question};
use crate::experiments::{self, Registered};
use crate::report::document::{FINDINGS_KEY, Findings};
use crate::report::fit::Width;
use crate::report::provenance;
use crate::report::table::{self, Table};
use crate::saved::KernelSet;
use crate::stats;

/// The registry's experiments, then those `runs` hold that it does not list.
pub(crate) fn listed<'a>(
    runs: impl IntoIterator<Item = &'a SavedRun>,
) -> Vec<&'static dyn Registered> {
    let mut out: Vec<&'static dyn Registered> = experiments::ALL.to_vec();
    for h in runs.into_iter().flat_map(SavedRun::held) {
        if !out.iter().any(|l| l.name() == h.name()) {
            out.push(h.experiment());
        }
    }
    out
}

/// The headline of everything in `run`; `None` when it holds no result.
pub fn summarize(run: &SavedRun, status: RunStatus) -> Option<RunSummary> {
    let (device, mut provenance) = run.header()?;
    // The run's duration is the summary's own, not its first experiment's.
    provenance.duration_s = None;
    let [mut experiments, mut cuda, mut ratios, mut facts, mut moved] =
        std::array::from_fn(|_| Entries::default());
    for l in listed([run]) {
        let rust = run.analysis(l.name(), KernelSet::Rust);
        if let Some(probe) = rust.and_then(|a| a.provenance.link.as_ref()) {
            moved.insert(l.name().to_owned(), experiment::json(&link_moved(probe).2));
        }
        let headline = |a: Option<&Analysis>| a.and_then(|a| a.summary.headline.clone());
        if l.uses_kernel_sets() {
            let twin = run.analysis(l.name(), KernelSet::Cuda);
            experiments.insert(l.name().to_owned(), headline(rust).unwrap_or(Json::Null));
            cuda.insert(l.name().to_owned(), headline(twin).unwrap_or(Json::Null));
            let ratio = rust
                .zip(twin)
                .and_then(|(r, c)| rust_over_cuda(&r.rows, &c.rows));
            ratios.insert(l.name().to_owned(), experiment::json(&ratio));
        } else if let Some(h) = headline(rust) {
            experiments.insert(l.name().to_owned(), h);
        }
        for (i, key) in l.facts().iter().enumerate() {
            let value = rust.and_then(|a| a.summary.facts.get(i).cloned());
            facts.insert((*key).to_owned(), value.unwrap_or(Json::Null));
        }
    }
    let any_cuda = cuda.values().any(|v| !v.is_null());
    let moves: Vec<f64> = moved.values().filter_map(Json::as_f64).collect();
    let link_steady = (!moves.is_empty()).then(|| LinkSteady {
        experiments: moves.len(),
        steady: moves.iter().filter(|m| **m <= NOISY_LINK).count(),
    });
    Some(RunSummary {
        device,
        provenance,
        complete: status.steps_not_run.is_empty() && status.interrupted_by.is_none(),
        interrupted_by: status.interrupted_by,
        steps_not_run: status.steps_not_run,
        experiments,
        facts,
        cuda_experiments: any_cuda.then_some(cuda),
        experiment_rust_over_cuda: any_cuda.then_some(ratios),
        link_moved: link_steady.map(|_| moved),
        link_steady,
        duration_s: status.duration_s,
        answers: (answers(run).into_iter())
            .map(|(question, experiment, answer)| Answered {
                question: question.words().to_owned(),
                experiment,
                answer,
            })
            .collect(),
    })
}

/// Every time both kernel sets measured, summed, Rust over CUDA C++, and how many rows.
fn rust_over_cuda(rust: &[MeasuredRow], cuda: &[MeasuredRow]) -> Option<(f64, String)> {
    let (r, c, n) = (rust.iter())
        .filter_map(|t| {
            (cuda.iter())
                .find(|u| u.key == t.key && u.unit == t.unit)
                .map(|u| (t.value, u.value))
        })
        .fold((0.0, 0.0, 0), |(a, b, n), (t, u)| (a + t, b + u, n + 1));
    (c > 0.0).then(|| (r / c, format!("{n} rows summed")))
}

/// The questions `run` answers, in order: (question, experiment, sentence).
fn answers(run: &SavedRun) -> Vec<(Question, String, String)> {
    let mut out: Vec<_> = (run.held())
        .filter_map(|h| {
            let analyses = h.analyses();
            let rust = analyses.iter().find(|a| a.set == KernelSet::Rust)?;
            let (question, sentence) = rust.summary.answer.clone()?;
            Some((question, h.name().to_owned(), sentence))
        })
        .collect();
    out.sort_by_key(|(question, _, _)| *question);
    out
}

/// What `run` found ([`Findings`]).
pub fn findings(run: &SavedRun) -> Findings {
    let mut table = Table::new(
        None,
        &[
            "experiment",
            "result",
            "against its bound",
            "Rust / C++",
            "noisy rows",
            "verified",
        ],
    );
    let mut words = Vec::new();
    let (mut results, mut verified) = (0, 0);
    let mut held_back = Vec::new();
    let mut clocks_unknown = 0;
    for h in run.held() {
        let analyses = h.analyses();
        results += analyses.len();
        verified += analyses.iter().filter(|a| a.verification.passed).count();
        for a in &analyses {
            clocks_unknown += usize::from(!a.provenance.clocks_read());
            if let Some(why) = a.provenance.held_back() {
                held_back.push((crate::saved::files::stem(a.name, a.set), why));
            }
        }
        let Some(rust) = analyses.iter().find(|a| a.set == KernelSet::Rust) else {
            continue;
        };
        let twin = analyses.iter().find(|a| a.set == KernelSet::Cuda);
        let o = &rust.summary.overview;
        if !o.finding.is_empty() {
            words.push((h.name().to_owned(), o.finding.clone()));
        }
        let dash = |cell: Option<String>| cell.unwrap_or_else(|| "–".into());
        let result = dash(Some(o.result.clone()).filter(|r| !r.is_empty()));
        let over_bound = (o.over_bound.as_ref()).map(|(x, of)| format!("{x:.2}× ({of})"));
        let rust_over_cpp = (o.rust_over_cpp.clone())
            .or_else(|| twin.and_then(|c| rust_over_cuda(&rust.rows, &c.rows)))
            .map(|(x, of)| format!("{} ({of})", table::num(x, 3)));
        let noises: Vec<f64> = (analyses.iter().flat_map(|a| &a.rows))
            .filter_map(|r| r.noise)
            .collect();
        let noisy = noises.iter().filter(|n| stats::above_target(**n)).count();
        let noisy = (!noises.is_empty()).then(|| format!("{noisy} of {}", noises.len()));
        let all_passed = analyses.iter().all(|a| a.verification.passed);
        let checked = match (all_passed, analyses.len()) {
            (false, _) => "FAILED",
            (true, 1) => "yes",
            (true, _) => "yes, both kernel sets",
        };
        table.rows.push(vec![
            h.name().to_owned(),
            result,
            dash(over_bound),
            dash(rust_over_cpp),
            dash(noisy),
            checked.to_owned(),
        ]);
    }
    Findings {
        answers: answers(run),
        words,
        table,
        results,
        verified,
        held_back,
        clocks_unknown,
    }
}

/// The compact summary `run-all` prints last, `width` wide.
pub fn summary_text(run: &SavedRun, s: &RunSummary, width: Width) -> String {
    let mut out = width.lines(&provenance::device(&s.device));
    if let Some(said) = s.incomplete() {
        out += &width.lines(&said.replacen("incomplete run", "INCOMPLETE", 1));
    }
    let f = findings(run);
    for (question, _, sentence) in &f.answers {
        out += &width.lines(&format!("{}: {sentence}", question.words()));
    }
    for (stem, why) in &f.held_back {
        out += &width.lines(&format!("GPU HELD BACK during {stem}: {why}"));
    }
    if let Some(line) = f.clocks_unknown_line() {
        out += &width.lines(&line);
    }
    for (name, finding) in &f.words {
        out += &width.lines(&format!("- {name}: {finding}"));
    }
    out.push('\n');
    out += &width.table(&f.table);
    out += &width.lines(FINDINGS_KEY);
    out
}
