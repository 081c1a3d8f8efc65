//! `cargo xtask docs [--check]`: the documents whose figures come from results, rendered
//! from templates by the report's template engine
//! (`streamlab_results::report::words::engine`, minijinja), with its number formats. A
//! template names each results folder it reads once, then writes every figure as an
//! expression on it:
//!
//! ```text
//! {% set h100 = folder("docs/results/h100") %}
//! best async {{ h100.summary.experiments["sincos-overlap"].best_async_ms | fixed(3) }} ms
//! ```
//!
//! `folder(PATH)` is the folder at PATH (relative to the repository) whose JSON files are
//! its fields by stem (`h100.summary` is `summary.json`, `h100["compare-kernels"]` is
//! `compare-kernels.json`). Besides the report's filters (`fixed(n)`, `times(n)`,
//! `percent(n)`, …), a document's figures take:
//!
//! * `find(key=value, …)`: the first element of an array whose fields have those values;
//! * `yes`: a boolean as "yes" or "no"; `length`: how many elements an array has;
//! * `minutes`: seconds as whole minutes (as seconds under a minute and a half);
//! * `commit`: a commit's first 12 characters; `utc`: an RFC 3339 time as "YYYY-MM-DD
//!   HH:MM UTC";
//! * `pow2`: a power of two as "2^N"; `mi`: a multiple of 2^20 as "N Mi";
//! * `verdict`: a verdict of `comparison.json` in words ("too-noisy" as "too noisy to
//!   say"); `order`: an issue order in words ("async2" as "asynchronous 2").
//!
//! A name or a field that is not there fails the render (`x if x is defined else "…"`
//! where one may be missing). `--check` renders every template and fails, naming the
//! document and the first line that differs, when a committed document is not its
//! rendering.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Kwargs, Object, Serde, Value};
use minijinja::{Environment, Error, ErrorKind};
use streamlab_results::report::words;

/// Each template and the document rendered from it, relative to the repository.
pub const DOCS: [(&str, &str); 2] = [
    ("docs/templates/README.md", "README.md"),
    ("docs/templates/performance.md", "docs/performance.md"),
];

/// The first line of every rendered document.
fn banner(template: &str) -> String {
    format!(
        "<!-- Rendered by `cargo xtask docs` from {template}, every figure from the results it names: edit the template, not this file. -->\n"
    )
}

/// A rendered document and how many figures it has.
#[derive(Debug)]
pub struct Rendered {
    pub text: String,
    pub figures: usize,
}

/// A results folder as a template reads it: each JSON file a field, read when first
/// used. A file that cannot be read is a field that is not there, and is named in
/// `unread`, for the error of the render that used it.
#[derive(Debug)]
struct Folder {
    path: PathBuf,
    files: Mutex<BTreeMap<String, Option<Value>>>,
    unread: Unread,
}

/// The files a rendering could not read, and why.
type Unread = Arc<Mutex<Vec<String>>>;

impl Object for Folder {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let stem = key.as_str()?;
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        let file = (files.entry(stem.to_owned())).or_insert_with(|| {
            let path = self.path.join(format!("{stem}.json"));
            let read = std::fs::read_to_string(&path)
                .map_err(|e| format!("{} cannot be read: {e}", path.display()))
                .and_then(|text| {
                    serde_json::from_str::<serde_json::Value>(&text)
                        .map_err(|e| format!("{} is not JSON: {e}", path.display()))
                });
            match read {
                Ok(json) => Some(Value::from(Serde(json))),
                Err(why) => {
                    self.unread
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(why);
                    None
                }
            }
        });
        file.clone()
    }
}

/// The error of a filter given `v`, which is not `what` it takes.
fn not(v: &Value, what: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("{v} is not {what}"))
}

/// `v` as `T` where it is one and `keep` holds, else the error naming `what` it is not.
fn as_a<T: TryFrom<Value>>(v: &Value, what: &str, keep: fn(&T) -> bool) -> Result<T, Error> {
    (T::try_from(words::defined(v)?.clone()).ok())
        .filter(keep)
        .ok_or_else(|| not(v, what))
}

/// `v` as a string, else the error naming `what` it is not.
fn text(v: &Value, what: &str) -> Result<String, Error> {
    as_a::<String>(v, what, |_| true)
}

/// The first element of `items` whose fields have the values `wanted` names.
fn find(items: Value, wanted: Kwargs) -> Result<Value, Error> {
    let pairs: Vec<(&str, Value)> = (wanted.args())
        .map(|k| Ok((k, wanted.get::<Value>(k)?)))
        .collect::<Result<_, Error>>()?;
    for item in items.try_iter()? {
        if (pairs.iter()).all(|(k, v)| item.get_attr(k).is_ok_and(|x| &x == v)) {
            return Ok(item);
        }
    }
    let named: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Err(Error::new(
        ErrorKind::InvalidOperation,
        format!("no element has {}", named.join(", ")),
    ))
}

/// The documents' engine: the report's, with the documents' own filters and `folder`
/// reading under `root` (noting in `unread` what it could not read); a line holding only a
/// `{% … %}` tag leaves no line behind.
fn environment(root: &Path, unread: &Unread) -> Environment<'static> {
    let mut env = words::engine();
    let syntax = SyntaxConfig::builder()
        .trim_blocks(true)
        .keep_trailing_newline(true)
        .build()
        .expect("the default delimiters");
    env.set_syntax(syntax);
    let (root, unread) = (root.to_owned(), unread.clone());
    env.add_function("folder", move |path: String| {
        Value::from_object(Folder {
            path: root.join(path),
            files: Mutex::default(),
            unread: unread.clone(),
        })
    });
    env.add_filter("find", find);
    env.add_filter("yes", |v: Value| {
        as_a(&v, "true or false", |_| true).map(|b: bool| if b { "yes" } else { "no" })
    });
    env.add_filter("pow2", |v: Value| {
        as_a(&v, "a power of two", |n: &u64| n.is_power_of_two())
            .map(|n| format!("2^{}", n.ilog2()))
    });
    env.add_filter("mi", |v: Value| {
        as_a(&v, "a multiple of 2^20", |n: &u64| {
            n.is_multiple_of(1 << 20)
        })
        .map(|n| format!("{} Mi", n >> 20))
    });
    env.add_filter("verdict", |v: Value| {
        match text(&v, "a verdict")?.as_str() {
            "same" => Ok("the same".to_owned()),
            "too-noisy" => Ok("too noisy to say".to_owned()),
            "not-comparable" => Ok("no ratio".to_owned()),
            other @ ("faster" | "slower") => Ok(other.to_owned()),
            _ => Err(not(&v, "a verdict")),
        }
    });
    env.add_filter("order", |v: Value| {
        match text(&v, "an issue order")?.as_str() {
            "sequential" => Ok("sequential"),
            "async1" => Ok("asynchronous 1"),
            "async2" => Ok("asynchronous 2"),
            _ => Err(not(&v, "an issue order")),
        }
    });
    env.add_filter("minutes", |v: Value| {
        let seconds = words::number(&v)?;
        Ok::<_, Error>(match seconds / 60.0 {
            m if m < 1.5 => format!("{seconds:.0} seconds"),
            m => format!("{m:.0} minutes"),
        })
    });
    env.add_filter("commit", |v: Value| {
        let c = text(&v, "a commit")?;
        Ok::<_, Error>(c.get(..12).unwrap_or(&c).to_owned())
    });
    env.add_filter("utc", |v: Value| {
        let t = text(&v, "an RFC 3339 time")?;
        (t.get(..10).zip(t.get(11..16)))
            .map(|(day, time)| format!("{day} {time} UTC"))
            .ok_or_else(|| not(&v, "an RFC 3339 time"))
    });
    env
}

/// Render `template` (the text of the template at `name`), reading results under `root`.
pub fn render(name: &str, template: &str, root: &Path) -> Result<Rendered, String> {
    let unread = Unread::default();
    let env = environment(root, &unread);
    let body = (env.render_named_str(name, template, minijinja::context! {})).map_err(|e| {
        let unread = unread.lock().unwrap_or_else(|e| e.into_inner()).join("; ");
        match unread.is_empty() {
            true => format!("{name}: {e:#}"),
            false => format!("{name}: {unread}: {e:#}"),
        }
    })?;
    Ok(Rendered {
        text: banner(name) + &body,
        figures: template.matches("{{").count(),
    })
}

/// Render every document into place, or with `check`, fail where a committed one is not
/// its rendering. Returns each document's name and how many figures it has.
pub fn run(root: &Path, check: bool) -> Result<Vec<(String, usize)>, String> {
    let mut done = Vec::new();
    for (template, document) in DOCS {
        let text = std::fs::read_to_string(root.join(template))
            .map_err(|e| format!("{template} cannot be read: {e}"))?;
        let rendered = render(template, &text, root)?;
        let path = root.join(document);
        if check {
            let committed = std::fs::read_to_string(&path)
                .map_err(|e| format!("{document} cannot be read: {e}"))?;
            compare(document, &committed, &rendered.text)?;
        } else {
            std::fs::write(&path, &rendered.text)
                .map_err(|e| format!("could not write {document}: {e}"))?;
        }
        done.push((document.to_owned(), rendered.figures));
    }
    Ok(done)
}

/// Fail, naming `document`'s first line that differs, where `committed` is not
/// `rendered`.
pub fn compare(document: &str, committed: &str, rendered: &str) -> Result<(), String> {
    if committed == rendered {
        return Ok(());
    }
    let line = (committed.lines().zip(rendered.lines()))
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| committed.lines().count().min(rendered.lines().count()));
    let show = |text: &str| text.lines().nth(line).unwrap_or("(end of file)").to_owned();
    Err(format!(
        "{document} is not what its template renders, from line {}: it reads `{}`, the results give `{}`; run `cargo xtask docs`",
        line + 1,
        show(committed),
        show(rendered)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-docs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("run")).unwrap();
        std::fs::write(
            dir.join("run/summary.json"),
            r#"{"a": {"x/y": 0.02136, "rows": [{"k": "p", "v": 1}, {"k": "q", "v": 2.5}]},
                "when": "2026-11-25T12:50:00Z", "commit": "0123456789abcdef", "size": 33554432}"#,
        )
        .unwrap();
        dir
    }

    #[test]
    fn figures_are_rendered_from_their_sources() {
        let root = scratch("render");
        let template = "{% set r = folder(\"run\") %}\nnoise {{ r.summary.a[\"x/y\"] | percent(1) }}, \
            rows {{ r.summary.a.rows | length }}, q {{ (r.summary.a.rows | find(k=\"q\")).v | fixed(2) }}, \
            at {{ r.summary.when | utc }}, build {{ r.summary.commit | commit }}, \
            dirty {{ r.summary.dirty if r.summary.dirty is defined else \"not recorded\" }}, \
            {{ r.summary.size | pow2 }}, {{ r.summary.size | mi }}, {{ 0.5 | times(1) }}\n";
        let out = render("t.md", template, &root).unwrap();
        assert!(
            out.text
                .starts_with("<!-- Rendered by `cargo xtask docs` from t.md")
        );
        assert!(
            out.text.ends_with(
                "-->\nnoise 2.1%, rows 2, q 2.50, at 2026-11-25 12:50 UTC, build 0123456789ab, dirty not recorded, 2^25, 32 Mi, 0.5×\n"
            ),
            "{}",
            out.text
        );
        assert_eq!(out.figures, 9);
        for (bad, says) in [
            ("{{ r.summary.a.none | fixed(1) }}", "undefined"),
            (
                "{{ r.missing.a | fixed(1) }}",
                "missing.json cannot be read",
            ),
            ("{{ s.summary.a | fixed(1) }}", "undefined"),
            ("{{ r.summary.when | fixed(1) }}", "is not a number"),
            (
                "{{ (r.summary.a.rows | find(k=\"z\")).v }}",
                "no element has k=z",
            ),
            ("{{ r.summary.size | yes }}", "is not true or false"),
            ("{{ r.summary.a", "unexpected end of input"),
        ] {
            let err = render(
                "t.md",
                &format!("{{% set r = folder(\"run\") %}}\n{bad}\n"),
                &root,
            )
            .unwrap_err();
            assert!(
                err.starts_with("t.md: ") && err.contains(says) && err.contains("t.md:2"),
                "{bad}: {err}"
            );
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_committed_documents_are_their_renderings() {
        let root = crate::root();
        run(&root, true).unwrap();
    }

    #[test]
    fn a_figure_changed_by_hand_fails_the_check() {
        let root = crate::root();
        let (template, document) = DOCS[1];
        let text = std::fs::read_to_string(root.join(template)).unwrap();
        let rendered = render(template, &text, &root).unwrap();
        let committed = std::fs::read_to_string(root.join(document)).unwrap();
        assert!(compare(document, &committed, &rendered.text).is_ok());
        // Change the first digit of the first line the template's text does not hold as
        // it is: a line of figures.
        let line = (rendered.text.lines().skip(1))
            .find(|l| !text.lines().any(|t| t == *l) && l.contains(|c: char| c.is_ascii_digit()))
            .expect("a line with a figure");
        let at = line.as_ptr() as usize - rendered.text.as_ptr() as usize
            + line.find(|c: char| c.is_ascii_digit()).unwrap();
        let digit = rendered.text.as_bytes()[at];
        let changed_digit = if digit == b'9' {
            '1'
        } else {
            (digit + 1) as char
        };
        let mut edited = rendered.text.clone();
        edited.replace_range(at..at + 1, &changed_digit.to_string());
        let err = compare(document, &edited, &rendered.text).unwrap_err();
        let line = rendered.text[..at].matches('\n').count() + 1;
        assert!(
            err.contains(&format!("from line {line}")) && err.contains("run `cargo xtask docs`"),
            "{err}"
        );
    }
}
