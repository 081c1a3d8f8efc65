//! The report's glossary: every term a newcomer meets, explained once on the report's
//! main page, and each linked there where a page's prose first uses it.
use std::sync::LazyLock;

use super::page::Link;

/// A term: how the report spells it, its anchor, and what it means.
pub struct Term {
    pub spelling: &'static str,
    pub anchor: String,
    pub meaning: &'static str,
}

/// The terms: each line "- **term**: meaning" of `glossary.md`, in order.
pub static TERMS: LazyLock<Vec<Term>> = LazyLock::new(|| {
    (include_str!("glossary.md").lines())
        .filter_map(|line| line.strip_prefix("- **")?.split_once("**: "))
        .map(|(spelling, meaning)| Term {
            spelling,
            anchor: anchor(spelling),
            meaning,
        })
        .collect()
});

/// A term's anchor: "glossary" and each of its words in lower case, joined by hyphens.
fn anchor(spelling: &str) -> String {
    let lower = spelling.to_lowercase();
    let words = lower.split(|c: char| !c.is_ascii_alphanumeric());
    let words = std::iter::once("glossary").chain(words.filter(|w| !w.is_empty()));
    words.collect::<Vec<_>>().join("-")
}

/// Where in `text` the term spelled `spelling` is first used as a word outside code
/// spans and links.
fn first_use(text: &str, spelling: &str) -> Option<usize> {
    let word = |c: char| c.is_alphanumeric() || c == '-' || c == '_' || c == '/';
    let mut from = 0;
    while let Some(at) = text[from..].find(spelling).map(|i| i + from) {
        let end = at + spelling.len();
        let before = text[..at].chars().next_back();
        let after = text[end..].chars().next();
        let in_code = text[..at].matches('`').count() % 2 == 1;
        let in_link = text[..at].rfind('[') > text[..at].rfind(']');
        if !before.is_some_and(word) && !after.is_some_and(word) && !in_code && !in_link {
            return Some(at);
        }
        from = end;
    }
    None
}

/// Which terms a page has linked so far, and the page holding the glossary.
#[derive(Default)]
pub struct Linker {
    linked: Vec<&'static str>,
    /// The glossary's page, its file stem; `None`: this page.
    page: Option<String>,
}

impl Linker {
    /// A linker to the glossary on page `page` (its file stem, `""` for this page).
    pub fn to(page: &str) -> Linker {
        Linker {
            linked: Vec::new(),
            page: (!page.is_empty()).then(|| page.to_owned()),
        }
    }

    /// `text` with each term not linked before linked where it is first used: `plain`
    /// renders the text between terms, `link` a term and where it links to.
    pub fn link(
        &mut self,
        text: &str,
        plain: impl Fn(&str) -> String,
        link: impl Fn(&str, &Link) -> String,
    ) -> String {
        let mut uses: Vec<(usize, &Term)> = (TERMS.iter())
            .filter(|t| !self.linked.contains(&t.anchor.as_str()))
            .filter_map(|t| first_use(text, t.spelling).map(|at| (at, t)))
            .collect();
        uses.sort_by_key(|(at, t)| (*at, std::cmp::Reverse(t.spelling.len())));
        let (mut out, mut from) = (String::new(), 0);
        for (at, t) in uses {
            if at < from {
                continue;
            }
            out += &plain(&text[from..at]);
            let target = Link {
                page: self.page.clone(),
                anchor: Some(t.anchor.clone()),
            };
            out += &link(&text[at..at + t.spelling.len()], &target);
            from = at + t.spelling.len();
            self.linked.push(&t.anchor);
        }
        out + &plain(&text[from..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markdown(linker: &mut Linker, text: &str) -> String {
        linker.link(text, str::to_owned, |t, a| {
            format!("[{t}]({})", a.href(".md"))
        })
    }

    #[test]
    fn each_term_is_linked_once_where_first_used_and_its_anchor_is_unique() {
        let mut linker = Linker::default();
        let text = "HtoD then DtoH, HtoD again; HtoDs and `DtoD` not";
        let linked =
            "[HtoD](#glossary-htod) then [DtoH](#glossary-dtoh), HtoD again; HtoDs and `DtoD` not";
        assert_eq!(markdown(&mut linker, text), linked);
        let null = "HtoD and the [NULL stream](#glossary-null-stream)";
        assert_eq!(markdown(&mut linker, "HtoD and the NULL stream"), null);
        // Every anchor is unique, and every meaning a sentence.
        let items = (include_str!("glossary.md").lines()).filter(|l| l.starts_with("- "));
        let unread = "a term not read from glossary.md";
        assert_eq!(TERMS.len(), items.count(), "{unread}");
        assert_eq!(anchor("p99"), "glossary-p99");
        assert_eq!(anchor("A/A"), "glossary-a-a");
        for (i, t) in TERMS.iter().enumerate() {
            assert!(t.anchor.starts_with("glossary-"));
            let unique = TERMS[..i].iter().all(|u| u.anchor != t.anchor);
            assert!(unique, "{}", t.anchor);
            assert!(t.meaning.ends_with('.'), "{}", t.spelling);
        }
    }
}
