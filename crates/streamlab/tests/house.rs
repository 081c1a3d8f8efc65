//! The house's rules that the compiler does not keep: the runtime (the only crate that
//! calls CUDA) knows no experiment, every registered experiment has its command and its
//! defaults in one place, no source file of a crate passes 600 lines, every experiment
//! that runs sincos checks it bit for bit, and
//! `docs/architecture.md` says what the code does (the paths and items it names exist, the
//! crates depend as its table says).
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use streamlab::cli;
use streamlab_results::experiments;

/// The checkout `STREAMLAB_ROOT` names (set by `run-tests.sh` on a GPU machine), else
/// this one.
fn root() -> PathBuf {
    std::env::var_os("STREAMLAB_ROOT").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
        PathBuf::from,
    )
}

#[test]
fn the_runtime_imports_no_experiment() {
    let runtime = root().join("crates/streamlab-runtime/src");
    let named: Vec<String> = (sources().into_iter())
        .filter(|(path, text)| {
            path.starts_with(&runtime) && text.contains("streamlab_results::experiments")
        })
        .map(|(path, _)| path.display().to_string())
        .collect();
    assert!(
        named.is_empty(),
        "the runtime names experiments in {named:?}"
    );
}

#[test]
fn every_registered_experiment_has_its_command() {
    let missing: Vec<&str> = (experiments::ALL.iter())
        .map(|e| e.name())
        .filter(|name| {
            !matches!(cli::parse(["streamlab", name, "--help"]),
                Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp)
        })
        .collect();
    assert!(missing.is_empty(), "no command for {missing:?}");
}

#[test]
fn each_experiments_defaults_are_its_command_lines() {
    use clap::FromArgMatches;
    use streamlab::cli::Parsed;
    use streamlab::experiments::Run;
    use streamlab::options::Options;
    use streamlab_results::saved::Params;

    /// Whether `E`'s parameters parsed from its bare command are its `Default`, and its
    /// run-all options parse; `None` for an experiment of the user's input (its PTX
    /// file), which has no default for it.
    fn same<E: Run>() -> Option<Result<bool, String>> {
        match cli::parse(["streamlab", E::NAME]) {
            Ok(Parsed::Experiment { matches, .. }) => {
                let _ = E::Params::run_all();
                let options = Options::<E>::from_arg_matches(&matches).map_err(|e| e.to_string());
                Some(options.map(|o| o.params == E::Params::default()))
            }
            Ok(Parsed::Other(_)) => {
                Some(Err(format!("{} is not an experiment's command", E::NAME)))
            }
            Err(e) if e.kind() == clap::error::ErrorKind::MissingRequiredArgument => None,
            Err(e) => Some(Err(e.to_string())),
        }
    }
    macro_rules! each {
        ($($module:ident :: $experiment:ident),* $(,)?) => {
            vec![$((
                stringify!($module),
                same::<streamlab_results::experiments::$module::$experiment>(),
            )),*]
        };
    }
    let checked = streamlab_results::registered!(each);
    let differ: Vec<String> = (checked.iter())
        .filter(|(_, same)| !matches!(same, None | Some(Ok(true))))
        .map(|(name, same)| format!("{name}: {same:?}"))
        .collect();
    assert!(differ.is_empty(), "defaults differ: {differ:?}");
    assert!(checked.iter().filter(|c| c.1.is_some()).count() >= 13);
}

/// Every registered experiment's module stem (`concurrency_breaks`).
fn registered_stems() -> Vec<String> {
    (experiments::ALL.iter())
        .map(|e| e.name().replace('-', "_"))
        .collect()
}

/// The architecture page's text outside its code blocks, and its `code spans`.
fn architecture() -> (String, Vec<String>) {
    let text = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let prose: String = (text.split("```").step_by(2))
        .collect::<Vec<_>>()
        .join("\n");
    let spans = (prose.split('`').skip(1).step_by(2))
        .map(str::to_owned)
        .collect();
    (prose, spans)
}

/// Every Rust source of the workspace's crates, by path.
fn sources() -> BTreeMap<PathBuf, String> {
    let root = root();
    let mut out = BTreeMap::new();
    let mut dirs: Vec<PathBuf> = ["crates", "kernels-rs", "xtask"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.insert(path.clone(), std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}

/// Whether `text` defines `name` as an item of one of `kinds` (`fn`, `struct`, …).
fn defines(text: &str, kinds: &[&str], name: &str) -> bool {
    kinds.iter().any(|kind| {
        text.match_indices(&format!("{kind} {name}"))
            .any(|(at, m)| {
                let after = text[at + m.len()..].chars().next();
                !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
    })
}

const TYPES: [&str; 4] = ["struct", "trait", "enum", "type"];
const MEMBERS: [&str; 4] = ["fn", "const", "type", "static"];

#[test]
fn the_architecture_page_names_only_what_exists() {
    let root = root();
    let sources = sources();
    let stems = registered_stems();
    let (_, spans) = architecture();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for span in &spans {
        let is_path = span.contains('/')
            || [".rs", ".md", ".cu", ".toml"]
                .iter()
                .any(|e| span.ends_with(e));
        if span.contains(' ') {
            continue;
        } else if is_path && span.contains("<name>") {
            // A path of every experiment: each registered one has it (a module of one
            // file, or a folder module whose `mod.rs` stands for it).
            for stem in &stems {
                let path = span.replace("<name>", stem);
                let folder = path
                    .strip_suffix(".rs")
                    .map(|m| root.join(m).join("mod.rs"));
                if !root.join(&path).exists() && !folder.is_some_and(|f| f.exists()) {
                    wrong.push(format!("{span}: no {path}"));
                }
            }
        } else if is_path {
            // A path from the checkout's root, or below the streamlab crates' `src/`.
            let places = [
                root.clone(),
                root.join("crates/streamlab/src"),
                root.join("crates/streamlab-results/src"),
                root.join("crates/streamlab-runtime/src"),
            ];
            if !places.iter().any(|p| p.join(span).exists()) {
                wrong.push(format!("{span}: no such path"));
            }
        } else if let Some(name) = span.strip_suffix('!') {
            if !sources
                .values()
                .any(|t| defines(t, &["macro_rules!"], name))
            {
                wrong.push(format!("{span}: no such macro"));
            }
        } else if let Some((krate, path)) = span
            .split_once("::")
            .filter(|(k, _)| k.starts_with(|c: char| c.is_ascii_lowercase()))
        {
            // `crate_name::module::…`: a module of a workspace crate.
            let krate = krate.replace('_', "-");
            let src = [format!("crates/{krate}/src"), format!("{krate}/src")]
                .into_iter()
                .map(|d| root.join(d))
                .find(|d| d.exists());
            let module = src.map(|s| s.join(path.replace("::", "/")));
            let found = module.is_some_and(|m| m.is_dir() || m.with_extension("rs").exists());
            if !found {
                wrong.push(format!("{span}: no such module"));
            }
        } else if let Some((ty, member)) = span.split_once("::") {
            // `Type::member`: the member is in the file that defines the type.
            let found = sources
                .values()
                .any(|t| defines(t, &TYPES, ty) && defines(t, &MEMBERS, member));
            if !found {
                wrong.push(format!("{span}: no such item"));
            }
        } else if span.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && span.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            if !sources
                .values()
                .any(|t| defines(t, &TYPES, span) || defines(t, &MEMBERS, span))
            {
                wrong.push(format!("{span}: no such item"));
            }
        } else {
            continue;
        }
        checked += 1;
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md names what is not there: {wrong:#?}"
    );
    assert!(checked >= 30, "only {checked} names checked");
}

/// The workspace crates each workspace crate depends on for its build (normal
/// dependencies, any target), by name, as `cargo metadata` says; `None` where cargo is
/// not there to ask (a GPU machine running the shipped tests).
fn workspace_dependencies() -> Option<BTreeMap<String, BTreeSet<String>>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let names: BTreeSet<&str> = (packages.iter())
        .filter_map(|p| p["name"].as_str())
        .collect();
    let mut out = BTreeMap::new();
    for p in packages {
        let name = p["name"].as_str().unwrap();
        let manifest = p["manifest_path"].as_str().unwrap_or("");
        if manifest.contains("/examples/") {
            continue;
        }
        let deps: BTreeSet<String> = (p["dependencies"].as_array().unwrap().iter())
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|d| names.contains(d))
            .map(str::to_owned)
            .collect();
        out.insert(name.to_owned(), deps);
    }
    Some(out)
}

#[test]
fn the_crates_depend_as_the_architecture_page_says() {
    let (prose, _) = architecture();
    let table = (prose.split("## The crates").nth(1))
        .and_then(|rest| {
            rest.split("\n\n")
                .find(|part| part.trim_start().starts_with('|'))
        })
        .expect("the crates' table");
    let mut said = BTreeMap::new();
    for row in table.lines().skip(2) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`').to_owned();
        let deps: BTreeSet<String> = (cells[2].split(','))
            .map(|d| d.trim().trim_matches('`').to_owned())
            .filter(|d| d != "none")
            .collect();
        said.insert(name, deps);
    }
    let Some(found) = workspace_dependencies() else {
        println!("skipped: no cargo here to read the workspace's dependencies from");
        return;
    };
    assert_eq!(said, found);
}

/// The most lines a crate's source file holds: past it, the file is split into a folder of
/// modules (as the larger experiments are).
const MAX_SOURCE_LINES: usize = 600;

#[test]
fn no_source_file_of_a_crate_passes_the_line_limit() {
    let root = root();
    let long: Vec<String> = (sources().iter())
        .filter(|(path, _)| {
            let in_src = path.components().any(|c| c.as_os_str() == "src");
            path.starts_with(root.join("crates")) && in_src
        })
        .filter(|(_, text)| text.lines().count() > MAX_SOURCE_LINES)
        .map(|(path, text)| format!("{}: {} lines", path.display(), text.lines().count()))
        .collect();
    assert!(
        long.is_empty(),
        "split these into a folder of modules: {long:#?}"
    );
}

#[test]
fn only_an_experiments_own_modules_and_the_registry_name_it_in_code() {
    let root = root();
    let registry = root.join("crates/streamlab-results/src/experiments/mod.rs");
    let stems = registered_stems();
    let mut wrong = Vec::new();
    for (path, text) in sources() {
        let shared = path.starts_with(root.join("crates"))
            && !path.starts_with(root.join("crates/streamlab-results/src/experiments"))
            && !path.starts_with(root.join("crates/streamlab/src/experiments"))
            && !path.components().any(|c| c.as_os_str() == "tests");
        if !shared || path == registry {
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for line in code.lines() {
            let line = line.split("//").next().unwrap_or("");
            for stem in &stems {
                let kebab = stem.replace('_', "-");
                if line.contains(&format!("{stem}::")) || line.contains(&format!("\"{kebab}\"")) {
                    wrong.push(format!("{}: {}", path.display(), line.trim()));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "shared code names an experiment: {wrong:#?}"
    );
}

#[test]
fn every_experiment_that_runs_sincos_checks_it_bit_for_bit() {
    // `sqrt(sin² + cos²)` is 1 within rounding: a tolerance passes a kernel that writes
    // `a + 1`. Every GPU-side file that launches a sincos kernel checks its output through
    // `sincos::Expected` (or builds `sincos::Buffers`, which holds one).
    let root = root();
    let experiments = root.join("crates/streamlab/src/experiments");
    let mut launching = Vec::new();
    let mut unchecked = Vec::new();
    for (path, text) in sources() {
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        if path.starts_with(&experiments) && code.contains("sincos_in(") {
            launching.push(path.clone());
            let checked = code.contains("Expected") || code.contains("Buffers::new(");
            if !checked || code.contains("1e-6") {
                unchecked.push(path.display().to_string());
            }
        }
    }
    assert!(launching.len() >= 6, "{launching:?}");
    assert!(
        unchecked.is_empty(),
        "sincos checked otherwise in: {unchecked:?}"
    );
}

/// Each module of the crate whose sources are in `src` (`report::section`, `run`, …)
/// with the modules it names through `crate::` and `super::` paths in code (not comments
/// or tests), braces included: `use crate::report::{self, table::Table}` names `report`
/// and `report::table`.
fn module_imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files: Vec<PathBuf> = (sources().into_keys())
        .filter(|p| p.starts_with(src))
        .collect();
    let module = |path: &Path| -> Vec<String> {
        let relative = path.strip_prefix(src).unwrap().with_extension("");
        let parts: Vec<String> = (relative.components())
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .filter(|p| p != "mod")
            .collect();
        if parts == ["lib"] || parts == ["main"] {
            Vec::new()
        } else {
            parts
        }
    };
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module(f)).collect();
    // The module a path names: the longest module that prefixes it.
    let owner = |path: &[String]| -> Option<Vec<String>> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| modules.contains(m))
    };
    let mut out = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let me = module(file);
        let mut names = BTreeSet::new();
        for line in code.lines().map(|l| l.split("//").next().unwrap_or("")) {
            for (at, _) in line
                .match_indices("crate::")
                .chain(line.match_indices("super::"))
            {
                let before = line[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let path: String = line[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let mut parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
                let mut base: Vec<String> = if parts[0] == "crate" {
                    Vec::new()
                } else {
                    me.clone()
                };
                parts.remove(0);
                if line[at..].starts_with("super::") {
                    base.pop();
                }
                while parts.first() == Some(&"super") {
                    parts.remove(0);
                    base.pop();
                }
                let named: Vec<String> = base
                    .iter()
                    .cloned()
                    .chain(parts.iter().map(|p| (*p).to_owned()))
                    .collect();
                let mut candidates = vec![named.clone()];
                let after = &line[at + path.len()..];
                if let Some(inner) = after
                    .strip_prefix("{")
                    .or_else(|| after.strip_prefix("::{"))
                {
                    for item in inner.split('}').next().unwrap_or("").split(',') {
                        let head = item.trim().split("::").next().unwrap_or("");
                        if !head.is_empty() && head != "self" {
                            let mut c = named.clone();
                            c.push(head.to_owned());
                            candidates.push(c);
                        }
                    }
                }
                for c in candidates {
                    if let Some(m) = owner(&c).filter(|m| *m != me && !m.is_empty()) {
                        names.insert(m.join("::"));
                    }
                }
            }
        }
        out.insert(me.join("::"), names);
    }
    out
}

/// The circles of `graph`: each a path of modules back to where it started.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut found = Vec::new();
    for start in graph.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((here, path)) = stack.pop() {
            for next in graph.get(&here).into_iter().flatten() {
                if next == start {
                    found.push(format!("{} → {start}", path.join(" → ")));
                } else if seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    found
}

#[test]
fn no_module_imports_a_module_that_imports_it() {
    let root = root();
    for krate in ["streamlab", "streamlab-runtime", "streamlab-results"] {
        let graph = module_imports(&root.join("crates").join(krate).join("src"));
        assert!(graph.len() > 15, "{krate}: only {} modules", graph.len());
        let found = circles(&graph);
        assert!(found.is_empty(), "{krate}'s circles:\n{}", found.join("\n"));
    }
}

#[test]
fn the_import_check_reads_crate_and_super_paths_through_braces() {
    let root = root();
    let results = module_imports(&root.join("crates/streamlab-results/src"));
    for m in ["folder", "experiment", "experiments", "held"] {
        assert!(
            results["run"].contains(m),
            "run does not import {m}: {:?}",
            results["run"]
        );
    }
    assert!(results["run::report"].contains("report::document"));
    assert!(!results["stats"].contains("run"));
    // `use super::table::Table` in report/fit.rs names report::table.
    assert!(results["report::fit"].contains("report::table"));
    // A circle through `super::` is one.
    let graph = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["a::b".to_owned()])),
        ("a::b".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    assert_eq!(circles(&graph).len(), 2);
}

/// The most lines a function spans, from its `fn` line to its closing brace.
const MAX_FUNCTION_LINES: usize = 100;

/// Each function of `text` longer than [`MAX_FUNCTION_LINES`]: its name and lines, read
/// by counting braces outside strings and comments.
fn long_functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let fn_at = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "unsafe fn ",
            "pub unsafe fn ",
            "const fn ",
            "pub const fn ",
        ]
        .iter()
        .find(|p| code.starts_with(**p));
        let (Some(prefix), false) = (fn_at, code.trim_end().ends_with(';')) else {
            continue;
        };
        let name: String = code[prefix.len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut started) = (0i32, false);
        for (k, l) in lines.iter().enumerate().skip(i) {
            let mut in_string = false;
            let mut prev = ' ';
            for c in l.split("//").next().unwrap_or("").chars() {
                match c {
                    '"' if prev != '\\' => in_string = !in_string,
                    '{' if !in_string => {
                        depth += 1;
                        started = true;
                    }
                    '}' if !in_string => depth -= 1,
                    _ => {}
                }
                prev = c;
            }
            if started && depth == 0 {
                if k - i + 1 > MAX_FUNCTION_LINES {
                    long.push((name.clone(), k - i + 1));
                }
                break;
            }
        }
    }
    long
}

#[test]
fn no_function_passes_the_line_limit() {
    let root = root();
    let mut long = Vec::new();
    for (path, text) in sources() {
        for (name, lines) in long_functions(&text) {
            let path = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string();
            long.push(format!("{path}: {name}, {lines} lines"));
        }
    }
    assert!(long.is_empty(), "split these: {long:#?}");
    // The count sees a long function.
    let body = "    let x = 1;\n".repeat(MAX_FUNCTION_LINES);
    let text = format!("pub fn f() {{\n{body}}}\n");
    assert_eq!(
        long_functions(&text),
        [("f".to_owned(), MAX_FUNCTION_LINES + 2)]
    );
}

/// NVLink multicast can put a shared host's GPUs out of service: `main` turns it off in
/// NCCL before anything else runs, the runtime checks it before every communicator, and
/// no source of the project creates a multicast object.
#[test]
fn nvlink_multicast_stays_off_everywhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let main = std::fs::read_to_string(root.join("crates/streamlab/src/main.rs")).unwrap();
    let set = main.find("set_var(streamlab::runtime::nccl::MULTICAST_VARIABLE, \"0\")");
    let first_call = main.find("args_os").expect("main reads its arguments");
    assert!(
        set.is_some_and(|at| at < first_call),
        "main must set NCCL_NVLS_ENABLE=0 first"
    );
    let nccl = std::fs::read_to_string(root.join("crates/streamlab-runtime/src/nccl.rs")).unwrap();
    let made = nccl
        .find("fn communicators")
        .expect("the runtime makes communicators");
    let checked = nccl[made..]
        .find("multicast_off()?")
        .expect("it checks multicast is off");
    let first_nccl_call = nccl[made..].find("(self.api.").expect("it calls NCCL");
    assert!(
        checked < first_nccl_call,
        "the check comes before NCCL is called"
    );
    let forbidden = ["cuMulticast", "Create"].concat();
    let mut sources = Vec::new();
    for dir in ["crates", "kernels-rs", "xtask", "examples"] {
        collect_sources(&root.join(dir), &mut sources);
    }
    for file in sources {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            !text.contains(&forbidden),
            "{} names {forbidden}",
            file.display()
        );
    }
}

/// Every Rust, C++ and CUDA source under `dir`, outside build folders.
fn collect_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && !path.ends_with("target") {
            collect_sources(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "rs" || e == "cu" || e == "cpp" || e == "h")
        {
            out.push(path);
        }
    }
}

/// The README a newcomer reads in a few minutes: what the project found first, the two
/// commands, and at most 1,200 words in all (its rendering note aside).
#[test]
fn the_readme_leads_with_what_was_found_and_stays_short() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let prose: String = (readme.lines())
        .filter(|l| !l.starts_with("<!--"))
        .collect::<Vec<_>>()
        .join("\n");
    let words = prose.split_whitespace().count();
    assert!(words <= 1200, "README.md has {words} words");
    let found = prose.find("## What it found").expect("what it found");
    let commands = prose.find("## Two commands").expect("the two commands");
    assert!(found < commands, "what it found comes first");
    for command in ["cargo xtask run-all", "cargo xtask test"] {
        assert!(prose.contains(command), "{command}");
    }
}
