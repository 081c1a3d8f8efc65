//! The house's rules that the compiler does not keep: no module of this crate imports,
//! directly or through others, a module that imports it (its modules depend one way), read
//! from the sources' `use crate::…` paths and `crate::…` paths in code (not comments or
//! tests).
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module of the crate (`report::section`, `run`, …) with the modules it names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let module = |path: &Path| -> String {
        let relative = path.strip_prefix(&src).unwrap().with_extension("");
        let parts: Vec<String> = (relative.components())
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .filter(|p| p != "mod")
            .collect();
        if parts == ["lib"] {
            "crate".to_owned()
        } else {
            parts.join("::")
        }
    };
    let modules: BTreeSet<String> = files.iter().map(|f| module(f)).collect();
    // The module a path names: the longest module that prefixes it.
    let owner = |path: &str| -> Option<String> {
        let parts: Vec<&str> = path.split("::").collect();
        (1..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|m| modules.contains(m))
    };
    let mut out = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let me = module(file);
        let mut names = BTreeSet::new();
        for line in code.lines() {
            let line = line.split("//").next().unwrap_or("");
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                let after = &rest[at + "crate::".len()..];
                let path: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let path = path.trim_end_matches(':');
                if let Some(m) = owner(path).filter(|m| *m != me) {
                    names.insert(m);
                }
                // `use crate::report::{self, table::Table}`: the braces' modules too.
                if let Some(inner) = after.strip_prefix(path).and_then(|a| a.strip_prefix("::{")) {
                    let inner = inner.split('}').next().unwrap_or("");
                    for item in inner.split(',').map(str::trim) {
                        let head = item.split("::").next().unwrap_or("");
                        let full = format!("{path}::{head}");
                        if let Some(m) = owner(&full).filter(|m| *m != me) {
                            names.insert(m);
                        }
                    }
                }
                rest = &after[path.len()..];
            }
        }
        out.insert(me, names);
    }
    out
}

#[test]
fn no_module_imports_a_module_that_imports_it() {
    let graph = imports();
    assert!(graph.len() > 30, "only {} modules", graph.len());
    let mut circles = Vec::new();
    for start in graph.keys() {
        // Depth-first from `start`, keeping the path, until it comes back.
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((here, path)) = stack.pop() {
            for next in &graph[&here] {
                if next == start {
                    circles.push(format!("{} → {start}", path.join(" → ")));
                } else if seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    assert!(circles.is_empty(), "circles:\n{}", circles.join("\n"));
}

#[test]
fn the_check_sees_imports_through_braces_and_paths() {
    let graph = imports();
    let run = &graph["run"];
    for m in ["folder", "experiment", "experiments", "held"] {
        assert!(run.contains(m), "run does not import {m}: {run:?}");
    }
    assert!(graph["run::report"].contains("report::document"));
    assert!(!graph["stats"].contains("run"));
}
