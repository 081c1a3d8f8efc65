//! Progress for long runs: a bar on stderr when it is a terminal, plain log lines
//! otherwise (CI logs, pipes), so output stays readable either way; notes wrapped to the
//! terminal's width.
use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use streamlab_results::report::fit::Width;

/// One step-counted piece of work (an experiment, a sweep).
pub struct Task {
    bar: Option<ProgressBar>,
    label: String,
    total: u64,
    done: u64,
    started: Instant,
    last_log: Instant,
}

impl Task {
    /// Start a task of `total` steps, labelled `label`.
    pub fn start(label: &str, total: u64) -> Task {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix:>16} [{bar:30}] {pos}/{len} {msg} ({elapsed})",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_prefix(label.to_owned());
            bar
        });
        if bar.is_none() {
            eprintln!("{label}: started ({total} steps)");
        }
        let now = Instant::now();
        Task {
            bar,
            label: label.to_owned(),
            total,
            done: 0,
            started: now,
            last_log: now,
        }
    }

    /// One step done; `what` names the configuration just measured.
    pub fn step(&mut self, what: &str) {
        self.done += 1;
        match &self.bar {
            Some(bar) => {
                bar.set_message(what.to_owned());
                bar.inc(1);
            }
            None if self.last_log.elapsed().as_secs() >= 5 || self.done == self.total => {
                eprintln!("{}: {}/{} {what}", self.label, self.done, self.total);
                self.last_log = Instant::now();
            }
            None => {}
        }
    }

    /// The task has ended.
    pub fn finish(self) {
        let seconds = self.started.elapsed().as_secs_f64();
        match self.bar {
            Some(bar) => bar.finish_with_message(format!("done in {seconds:.1} s")),
            None => eprintln!("{}: done in {seconds:.1} s", self.label),
        }
    }
}

/// A line of news on stderr (a note, a seed, a step skipped), wrapped to the terminal's
/// 100 columns like every other printed line.
pub fn note(text: &str) {
    eprint!("{}", Width::TERMINAL.lines(text));
}
