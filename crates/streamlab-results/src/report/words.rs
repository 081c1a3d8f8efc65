//! The report's words: each experiment's title, what it measures, its notes and its
//! summary's sentences, a Markdown template beside its code (`experiments/<name>.md`)
//! rendered with its derived numbers as `a`, its parameters as `p` and its headline in
//! `summary.json` as `h`. A template renders to `# title`, what the experiment measures,
//! then a `## Label` per note and a `## @part` per sentence of its summary (`@line`,
//! `@finding`, `@result`, `@answer`; an experiment may read others of its own, as
//! multi-gpu-overlap's section verdict `@verdict`); each part's lines join into one
//! paragraph, and a part that renders empty is left out.
//!
//! The engine is minijinja rather than tinytemplate (which criterion's report uses): its
//! conditionals take `else`, its filters take arguments (a number's decimals), and an
//! undefined name fails the render instead of printing nothing, so a misspelt field
//! cannot leave a blank in a report.
use std::sync::OnceLock;

use minijinja::value::Value;
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior, escape_formatter};

use super::table::{faster, noise, num, times};
use crate::verdict::percent;

/// One experiment's words, rendered.
#[derive(Debug, Clone, PartialEq)]
pub struct Words {
    pub title: String,
    pub about: String,
    pub notes: Vec<(String, String)>,
    /// The summary's sentences, by part name (`line` for `## @line`).
    pub summary: Vec<(String, String)>,
}

impl Words {
    /// The summary's sentence `part`, where the template gives one.
    pub fn part(&self, part: &str) -> Option<String> {
        (self.summary.iter())
            .find(|(name, _)| name == part)
            .map(|(_, text)| text.clone())
    }
}

/// "verified" or "FAILED", as the headlines end.
pub fn verdict(verified: bool) -> &'static str {
    if verified { "verified" } else { "FAILED" }
}

/// `v`, or the undefined error where it is a name or field that is not there: strict mode
/// fails printing one, but lets a filter see it.
pub fn defined(v: &Value) -> Result<&Value, Error> {
    match v.is_undefined() {
        true => Err(Error::from(ErrorKind::UndefinedError)),
        false => Ok(v),
    }
}

/// An error of a filter or of printing a value: `why`.
fn invalid(why: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, why)
}

/// A number as a filter takes it: an integer or a float.
pub fn number(v: &Value) -> Result<f64, Error> {
    let not_a_number = |_| invalid(format!("{v} is not a number: give the filter a number"));
    f64::try_from(defined(v)?.clone()).map_err(not_a_number)
}

/// The template engine of the report's words and `cargo xtask docs`, the report's number
/// formats as filters: `fixed(n)` (n decimals), `num(n)` (as the tables write it),
/// `times` ("1.23×", or `times(n)` with n decimals), `noise` ("0.4%"), `percent` (a
/// fraction as a percentage, or `percent(n)` with n decimals), `mib` (bytes as
/// mebibytes), `log2` (a count's whole base-2 logarithm), `faster(after)` (a time before
/// over one after: "1.85× faster" or "1.10× slower") and `verdict` ("verified" or
/// "FAILED" for whether a run verified). Printing a value that is undefined, none or holds
/// a line break fails the render.
pub fn engine() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // A value that is not there is not printed as "none": guard it with `{% if %}`.
    env.set_formatter(|out, state, value| {
        if value.is_none() {
            let guard = "guard it with {% if … is not none %}";
            return Err(invalid(format!("printed a value that is none: {guard}")));
        }
        if value.as_str().is_some_and(|s| s.contains('\n')) {
            let why = "which would split its note";
            return Err(invalid(format!("printed a value with a line break, {why}")));
        }
        escape_formatter(out, state, value)
    });
    env.add_filter("fixed", |v: Value, n: usize| {
        number(&v).map(|x| format!("{x:.n$}"))
    });
    env.add_filter("num", |v: Value, n: usize| number(&v).map(|x| num(x, n)));
    env.add_filter("times", |v: Value, n: Option<usize>| {
        number(&v).map(|x| n.map_or_else(|| times(x), |n| format!("{x:.n$}×")))
    });
    env.add_filter("noise", |v: Value| number(&v).map(noise));
    env.add_filter("percent", |v: Value, n: Option<usize>| {
        number(&v).map(|x| n.map_or_else(|| percent(x), |n| format!("{:.n$}%", 100.0 * x)))
    });
    env.add_filter("mib", |v: Value| {
        number(&v).map(|x| x / f64::from(1u32 << 20))
    });
    env.add_filter("log2", |v: Value| {
        let x = number(&v)?;
        let why = || invalid(format!("log2 of {x}: give it a count of at least 1"));
        (x >= 1.0).then(|| (x as u64).ilog2()).ok_or_else(why)
    });
    env.add_filter("faster", |v: Value, after: Value| {
        Ok::<_, Error>(faster(number(&v)?, number(&after)?))
    });
    env.add_filter("verdict", |v: Value| {
        defined(&v).map(|v| verdict(v.is_true()))
    });
    env
}

/// `template` (experiment `name`'s words) rendered with `context`; the error says what
/// failed, and where.
pub fn render(name: &str, template: &str, context: Value) -> Result<Words, String> {
    // The engine, made once.
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    let text = (ENV.get_or_init(engine))
        .render_str(template, context)
        .map_err(|e| format!("the words of {name}: {e:#}"))?;
    parse(&text).ok_or_else(|| {
        format!("the words of {name} render to no `# title` line: start its template with one")
    })
}

/// A rendered template's title, about and notes.
fn parse(text: &str) -> Option<Words> {
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    let title = lines.next()?.strip_prefix("# ")?.trim().to_owned();
    let mut parts: Vec<(String, Vec<&str>)> = vec![(String::new(), Vec::new())];
    for line in lines {
        match line.strip_prefix("## ") {
            Some(label) => parts.push((label.trim().to_owned(), Vec::new())),
            None if line.trim().is_empty() => {}
            None => parts.last_mut()?.1.push(line.trim()),
        }
    }
    let mut parts = parts
        .into_iter()
        .map(|(label, lines)| (label, lines.join(" ")))
        .filter(|(label, text)| label.is_empty() || !text.is_empty());
    let about = parts.next()?.1;
    let (summary, notes): (Vec<_>, Vec<_>) = parts.partition(|(label, _)| label.starts_with('@'));
    Some(Words {
        title,
        about,
        notes,
        summary: (summary.into_iter())
            .map(|(label, text)| (label[1..].to_owned(), text))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use minijinja::context;

    use super::*;

    #[test]
    fn a_template_renders_to_its_parts_and_a_misspelt_name_fails_it() {
        let template = "# t: {{ a.x | fixed(1) }}\n\nWhat it\nmeasures.\n\n## Bound\n\
            {% if a.y %}\nAt {{ a.y | times }}.\n{% endif %}\n## Empty\n{% if false %}never{% endif %}\n\
            ## @line\n{{ 4 | faster(2) }}, {{ 2 | faster(4) }}; {{ true | verdict }}; 2^{{ 1024 | log2 }}\n";
        let a = context! { x => 2.25, y => 1.5 };
        let words = render("t", template, context! { a => a }).unwrap();
        assert_eq!(words.title, "t: 2.2");
        assert_eq!(words.about, "What it measures.");
        assert_eq!(words.notes, [("Bound".to_owned(), "At 1.50×.".to_owned())]);
        let line = "2.00× faster, 2.00× slower; verified; 2^10";
        assert_eq!(words.part("line").as_deref(), Some(line));
        assert_eq!(words.part("finding"), None);
        // A misspelt name or a missing title fails the render.
        let empty = context! { a => context! {} };
        let e = render("t", "# t {{ a.missing }}", empty.clone()).unwrap_err();
        assert!(e.to_string().contains("the words of t"), "{e}");
        let e = render("t", "no title", context! {}).unwrap_err();
        assert!(e.to_string().contains("`# title`"), "{e}");
        let e = render("t", "# t {{ x }}", context! { x => None::<f64> }).unwrap_err();
        assert!(e.to_string().contains("is none"), "{e}");
        let e = render("t", "# t {{ 'x' | fixed(1) }}", context! {}).unwrap_err();
        assert!(e.to_string().contains("not a number"), "{e}");
        let e = render("t", "# t {{ a.y | fixed(1) }}", empty).unwrap_err();
        assert!(e.to_string().contains("undefined value"));
    }
}
