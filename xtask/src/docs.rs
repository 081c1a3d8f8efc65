//! `cargo xtask docs [--check]`: the documents whose figures come from results, rendered
//! from templates. A template is the document with every figure written as a
//! placeholder naming its source:
//!
//! ```text
//! <!-- source h100 = docs/results/h100 -->
//! best async {{h100:summary.json#/experiments/sincos-overlap/best_async_ms|.3}} ms
//! ```
//!
//! `{{NAME:FILE#POINTER|FORMAT}}` reads `FILE` in the folder the template's `source` line
//! names `NAME` (or, without `NAME:`, a file relative to the repository), takes the value
//! at `POINTER` (a JSON pointer, `~1` standing for `/` in a key; a segment `[key=value,…]`
//! picks the first element of an array whose fields have those values; a pointer ending in
//! `?` may be missing, and is then "not recorded"), and writes it in `FORMAT`:
//!
//! * `.N`: a number with N decimals; `%.N`: a fraction as a percentage with N decimals;
//!   `×.N`: a number with N decimals and "×"; `min`: seconds as whole minutes (as
//!   seconds under a minute and a half);
//! * `int`: a whole number; `str`: a string (or any value) as it is; `len`: how many
//!   elements an array has; `yes`: a boolean as "yes" or "no";
//! * `commit`: a commit's first 12 characters; `utc`: an RFC 3339 time as "YYYY-MM-DD
//!   HH:MM UTC";
//! * `pow2`: a power of two as "2^N"; `mi`: a multiple of 2^20 as "N Mi";
//! * `verdict`: a verdict of `comparison.json` in words ("too-noisy" as "too noisy to
//!   say"); `order`: an issue order in words ("async2" as "asynchronous 2").
//!
//! `--check` renders every template and fails, naming the document and the first line
//! that differs, when a committed document is not its rendering; a source that is missing
//! or has no value at a pointer fails both.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

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

/// A placeholder's place in the rendered text, and what it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Byte offsets in the rendered document.
    pub span: std::ops::Range<usize>,
    pub source: String,
}

/// A rendered document and where its figures are.
#[derive(Debug)]
pub struct Rendered {
    pub text: String,
    pub figures: Vec<Figure>,
}

/// Reads and caches the JSON sources of a rendering.
struct Sources<'a> {
    root: &'a Path,
    files: BTreeMap<PathBuf, Value>,
}

impl Sources<'_> {
    fn get(&mut self, file: &Path) -> Result<&Value, String> {
        if !self.files.contains_key(file) {
            let path = self.root.join(file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("{} cannot be read: {e}", file.display()))?;
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| format!("{} is not JSON: {e}", file.display()))?;
            self.files.insert(file.to_owned(), value);
        }
        Ok(&self.files[file])
    }
}

/// Render `template` (the text of the template at `name`), reading sources under `root`.
pub fn render(name: &str, template: &str, root: &Path) -> Result<Rendered, String> {
    let mut aliases: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut sources = Sources {
        root,
        files: BTreeMap::new(),
    };
    let mut text = banner(name);
    let mut figures = Vec::new();
    for (number, line) in template.lines().enumerate() {
        let at = |message: String| format!("{name}:{}: {message}", number + 1);
        if let Some(rest) = line
            .trim()
            .strip_prefix("<!-- source ")
            .and_then(|r| r.strip_suffix("-->"))
        {
            let (alias, folder) = rest
                .split_once('=')
                .ok_or_else(|| at("a source line reads `<!-- source NAME = FOLDER -->`".into()))?;
            aliases.insert(alias.trim().to_owned(), PathBuf::from(folder.trim()));
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find("{{") {
            text.push_str(&rest[..open]);
            let close = rest[open..]
                .find("}}")
                .ok_or_else(|| at("a `{{` without its `}}`".into()))?;
            let spec = &rest[open + 2..open + close];
            let value = figure(spec, &aliases, &mut sources).map_err(at)?;
            figures.push(Figure {
                span: text.len()..text.len() + value.len(),
                source: spec.to_owned(),
            });
            text.push_str(&value);
            rest = &rest[open + close + 2..];
        }
        text.push_str(rest);
        text.push('\n');
    }
    Ok(Rendered { text, figures })
}

/// The text of one placeholder's `spec` (`NAME:FILE#POINTER|FORMAT`).
fn figure(
    spec: &str,
    aliases: &BTreeMap<String, PathBuf>,
    sources: &mut Sources,
) -> Result<String, String> {
    let (place, format) = spec
        .split_once('|')
        .ok_or_else(|| format!("`{spec}` has no `|FORMAT`"))?;
    let (file, pointer) = place
        .split_once('#')
        .ok_or_else(|| format!("`{spec}` has no `#POINTER`"))?;
    let file = match file.split_once(':') {
        Some((alias, file)) => aliases
            .get(alias)
            .ok_or_else(|| format!("`{spec}`: no `<!-- source {alias} = … -->` line above"))?
            .join(file),
        None => PathBuf::from(file),
    };
    let (pointer, optional) = match pointer.strip_suffix('?') {
        Some(p) => (p, true),
        None => (pointer, false),
    };
    let document = sources.get(&file)?;
    match lookup(document, pointer)? {
        Some(value) => {
            format_value(value, format).map_err(|e| format!("{}#{pointer}: {e}", file.display()))
        }
        None if optional => Ok("not recorded".to_owned()),
        None => Err(format!("{} has no value at {pointer}", file.display())),
    }
}

/// The value at `pointer` in `document`, `None` where there is none.
fn lookup<'v>(document: &'v Value, pointer: &str) -> Result<Option<&'v Value>, String> {
    let mut here = document;
    let Some(path) = pointer.strip_prefix('/') else {
        return Err(format!("the pointer `{pointer}` does not start with `/`"));
    };
    for segment in path.split('/') {
        let next = if let Some(filter) = segment.strip_prefix('[').and_then(|s| s.strip_suffix(']'))
        {
            let wanted: Vec<(&str, &str)> = filter
                .split(',')
                .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
                .collect();
            here.as_array().and_then(|items| {
                items.iter().find(|item| {
                    wanted.iter().all(|(k, v)| match &item[*k] {
                        Value::String(s) => s == v,
                        Value::Null => *v == "null",
                        Value::Number(n) => v.parse::<f64>().ok() == n.as_f64(),
                        Value::Bool(b) => v.parse::<bool>().ok() == Some(*b),
                        _ => false,
                    })
                })
            })
        } else {
            let key = segment.replace("~1", "/").replace("~0", "~");
            match here {
                Value::Object(map) => map.get(&key),
                Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            }
        };
        match next {
            Some(v) => here = v,
            None => return Ok(None),
        }
    }
    Ok(Some(here))
}

/// `value` written in `format`.
fn format_value(value: &Value, format: &str) -> Result<String, String> {
    let number = || {
        value
            .as_f64()
            .ok_or_else(|| format!("{value} is not a number (format `{format}`)"))
    };
    let decimals = |digits: &str| {
        digits
            .parse::<usize>()
            .map_err(|_| format!("`{format}` is not a format"))
    };
    if let Some(d) = format.strip_prefix("%.") {
        let d = decimals(d)?;
        return Ok(format!("{:.d$}%", 100.0 * number()?));
    }
    if let Some(d) = format.strip_prefix("×.") {
        let d = decimals(d)?;
        return Ok(format!("{:.d$}×", number()?));
    }
    if let Some(d) = format.strip_prefix('.') {
        let d = decimals(d)?;
        return Ok(format!("{:.d$}", number()?));
    }
    match format {
        "int" => value
            .as_u64()
            .map(|n| n.to_string())
            .or_else(|| value.as_i64().map(|n| n.to_string()))
            .ok_or_else(|| format!("{value} is not a whole number")),
        "len" => value
            .as_array()
            .map(|a| a.len().to_string())
            .ok_or_else(|| format!("{value} is not an array")),
        "yes" => value
            .as_bool()
            .map(|b| if b { "yes" } else { "no" }.to_owned())
            .ok_or_else(|| format!("{value} is not true or false")),
        "str" => Ok(match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
        "pow2" => value
            .as_u64()
            .filter(|n| n.is_power_of_two())
            .map(|n| format!("2^{}", n.ilog2()))
            .ok_or_else(|| format!("{value} is not a power of two")),
        "mi" => value
            .as_u64()
            .filter(|n| n % (1 << 20) == 0)
            .map(|n| format!("{} Mi", n >> 20))
            .ok_or_else(|| format!("{value} is not a multiple of 2^20")),
        "verdict" => match value.as_str() {
            Some("faster") => Ok("faster".into()),
            Some("slower") => Ok("slower".into()),
            Some("same") => Ok("the same".into()),
            Some("too-noisy") => Ok("too noisy to say".into()),
            Some("not-comparable") => Ok("no ratio".into()),
            _ => Err(format!("{value} is not a verdict")),
        },
        "order" => match value.as_str() {
            Some("sequential") => Ok("sequential".into()),
            Some("async1") => Ok("asynchronous 1".into()),
            Some("async2") => Ok("asynchronous 2".into()),
            _ => Err(format!("{value} is not an issue order")),
        },
        "min" => {
            let seconds = number()?;
            Ok(match seconds / 60.0 {
                m if m < 1.5 => format!("{seconds:.0} seconds"),
                m => format!("{m:.0} minutes"),
            })
        }
        "commit" => value
            .as_str()
            .map(|c| c.get(..12).unwrap_or(c).to_owned())
            .ok_or_else(|| format!("{value} is not a commit")),
        "utc" => value
            .as_str()
            .and_then(|t| Some(format!("{} {} UTC", t.get(..10)?, t.get(11..16)?)))
            .ok_or_else(|| format!("{value} is not an RFC 3339 time")),
        other => Err(format!("`{other}` is not a format")),
    }
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
        done.push((document.to_owned(), rendered.figures.len()));
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
    fn placeholders_are_rendered_from_their_sources() {
        let root = scratch("render");
        let template = "<!-- source r = run -->\nnoise {{r:summary.json#/a/x~1y|%.1}}, rows {{r:summary.json#/a/rows|len}}, \
            q {{r:summary.json#/a/rows/[k=q]/v|.2}}, \
            at {{r:summary.json#/when|utc}}, build {{r:summary.json#/commit|commit}}, \
            dirty {{r:summary.json#/dirty?|str}}, {{r:summary.json#/size|pow2}}, \
            {{r:summary.json#/size|mi}}\n";
        let out = render("t.md", template, &root).unwrap();
        assert!(
            out.text
                .starts_with("<!-- Rendered by `cargo xtask docs` from t.md")
        );
        assert!(
            out.text.ends_with(
                "noise 2.1%, rows 2, q 2.50, at 2026-11-25 12:50 UTC, build 0123456789ab, dirty not recorded, 2^25, 32 Mi\n"
            ),
            "{}",
            out.text
        );
        assert_eq!(out.figures.len(), 8);
        assert_eq!(&out.text[out.figures[0].span.clone()], "2.1%");
        for (bad, says) in [
            ("{{r:summary.json#/a/none|.1}}", "has no value at /a/none"),
            ("{{r:missing.json#/a|.1}}", "missing.json cannot be read"),
            (
                "{{s:summary.json#/a|.1}}",
                "no `<!-- source s = … -->` line",
            ),
            ("{{r:summary.json#/when|.1}}", "is not a number"),
            ("{{r:summary.json#/a/x~1y|.z}}", "is not a format"),
            ("{{r:summary.json#/a", "without its `}}`"),
        ] {
            let err =
                render("t.md", &format!("<!-- source r = run -->\n{bad}\n"), &root).unwrap_err();
            assert!(
                err.starts_with("t.md:2: ") && err.contains(says),
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
        // Change one figure's first digit.
        let figure = (rendered.figures.iter())
            .find(|f| rendered.text[f.span.clone()].starts_with(|c: char| c.is_ascii_digit()))
            .expect("a numeric figure");
        let at = figure.span.start;
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
