//! The GPU side's rules that the compiler does not keep: the runtime (the only module that
//! calls CUDA) knows no experiment, and every registered experiment has its command.
use std::path::Path;

use streamlab::cli;
use streamlab_results::experiment::Experiment;
use streamlab_results::experiments::{self, Visit};

#[test]
fn the_runtime_imports_no_experiment() {
    // The checkout `STREAMLAB_ROOT` names (set by `run-tests.sh` on a GPU machine), else
    // this one.
    let root = std::env::var_os("STREAMLAB_ROOT").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
        std::path::PathBuf::from,
    );
    let runtime = root.join("crates/streamlab/src/runtime");
    let mut named = Vec::new();
    for entry in std::fs::read_dir(&runtime).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains("streamlab_results::experiments") || text.contains("crate::experiments") {
            named.push(path.display().to_string());
        }
    }
    assert!(
        named.is_empty(),
        "the runtime names experiments in {named:?}"
    );
}

#[test]
fn every_registered_experiment_has_its_command() {
    struct Commands(Vec<String>);
    impl Visit for Commands {
        fn visit<E: Experiment>(&mut self) {
            let args = ["streamlab", E::NAME, "--help"];
            match cli::parse(args) {
                Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {}
                _ => self.0.push(E::NAME.to_owned()),
            }
        }
    }
    let mut missing = Commands(Vec::new());
    experiments::each(&mut missing);
    assert!(missing.0.is_empty(), "no command for {:?}", missing.0);
}

#[test]
fn each_experiments_defaults_are_its_command_lines() {
    use streamlab::cli::{KernelOptions, RunOptions, Start};
    use streamlab::experiments::Run;
    use streamlab_results::saved::Params;

    /// Whether the parsed parameters are the experiment's `Default`, and its run-all
    /// options parse.
    struct Same;
    impl Start for Same {
        type Output = bool;
        fn start<E: Run>(
            self,
            params: &E::Params,
            _run: &RunOptions,
            _kernels: Option<&KernelOptions>,
        ) -> bool {
            let _ = E::Params::run_all();
            *params == E::Params::default()
        }
    }
    struct Each(Vec<String>, usize);
    impl Visit for Each {
        fn visit<E: Experiment>(&mut self) {
            match cli::parse(["streamlab", E::NAME]) {
                Ok(parsed) => {
                    self.1 += 1;
                    if parsed.cli.command.experiment(Same) != Some(true) {
                        self.0.push(E::NAME.to_owned());
                    }
                }
                // An experiment of the user's input (its PTX file) has no default for it.
                Err(e) if e.kind() == clap::error::ErrorKind::MissingRequiredArgument => {}
                Err(e) => self.0.push(format!("{}: {e}", E::NAME)),
            }
        }
    }
    let mut each = Each(Vec::new(), 0);
    experiments::each(&mut each);
    assert!(each.0.is_empty(), "defaults differ: {:?}", each.0);
    assert!(each.1 >= 13, "only {} checked", each.1);
}
