//! The report's glossary: every term a newcomer meets, explained once on the report's
//! main page, and each linked there where a page's prose first uses it.
use super::page::Link;

/// A term: how the report spells it, its anchor, and what it means.
pub struct Term {
    pub spelling: &'static str,
    pub anchor: &'static str,
    pub meaning: &'static str,
}

const fn term(spelling: &'static str, anchor: &'static str, meaning: &'static str) -> Term {
    Term {
        spelling,
        anchor,
        meaning,
    }
}

/// The terms, in the order the glossary lists them.
pub const TERMS: &[Term] = &[
    term(
        "HtoD",
        "glossary-htod",
        "Host to device: a copy from the CPU's memory over the PCIe link into the GPU's memory, run by a copy engine.",
    ),
    term(
        "DtoH",
        "glossary-dtoh",
        "Device to host: a copy from the GPU's memory back over the link into the CPU's memory.",
    ),
    term(
        "DtoD",
        "glossary-dtod",
        "Device to device: a copy within the GPU's memory; it reads and writes every byte, so it shows the memory's bandwidth.",
    ),
    term(
        "copy engine",
        "glossary-copy-engine",
        "The GPU's units that move data over the link while the SMs compute: an HtoD and a DtoH copy run at once on two of them, but copies of one direction take turns.",
    ),
    term(
        "stream",
        "glossary-stream",
        "A queue of GPU work: what is issued on one stream runs in order; work on different streams may run at once. Overlap comes from spreading work over streams.",
    ),
    term(
        "NULL stream",
        "glossary-null-stream",
        "The legacy default stream: work issued on it waits for all earlier work on every blocking stream, and their later work waits for it, so it breaks concurrency.",
    ),
    term(
        "pinned",
        "glossary-pinned",
        "Page-locked host memory: the copy engines read and write it directly, so copies to and from it are asynchronous and run at the link's full rate.",
    ),
    term(
        "pageable",
        "glossary-pageable",
        "Ordinary host memory: the driver first copies it into a pinned buffer of its own, so a copy from it is slower and holds the host until it is staged.",
    ),
    term(
        "zero-copy",
        "glossary-zero-copy",
        "Mapped pinned memory that kernels read and write directly over the link, with no copy issued.",
    ),
    term(
        "CUDA graph",
        "glossary-cuda-graph",
        "Streams' work captured once and replayed with one call, which saves the host issuing each operation again.",
    ),
    term(
        "write-ups",
        "glossary-write-ups",
        "The articles and book chapters whose experiments streamlab reproduces; the write-ups' shapes and defaults are the sizes and settings they used.",
    ),
    term(
        "spelling",
        "glossary-spelling",
        "One way of writing a kernel's algorithm (its loop shape, batching, tail and index width) that computes the same products or sums in the same order; a ratio takes each side's fastest spelling.",
    ),
    term(
        "programmatic dependent launch",
        "glossary-programmatic-dependent-launch",
        "Launching a kernel while the one ahead of it on its stream still runs: its blocks wait at griddepcontrol.wait until the one ahead lets them go, which takes the launch itself out of the gap between the two.",
    ),
    term(
        "L2",
        "glossary-l2",
        "The GPU's last-level cache, which every SM shares. A case timed warm is launched back to back with its inputs left in L2; one timed cold has L2 flushed before each launch.",
    ),
    term(
        "ulps",
        "glossary-ulps",
        "Units in the last place: how many representable floats apart a result is from the exact value.",
    ),
    term(
        "p99",
        "glossary-p99",
        "The 99th percentile: 99% of the samples are at or under it. p50, the 50th, is the median.",
    ),
    term(
        "A/A",
        "glossary-a-a",
        "Two runs of the same kernels on two machines of one kind: what they differ by is the machines' own spread, on which the comparison fits its margins.",
    ),
    term(
        "CUPTI",
        "glossary-cupti",
        "NVIDIA's profiling interface: its activity records say when each copy and kernel really started and ended on the GPU; the timelines are drawn from them.",
    ),
    term(
        "NVRTC",
        "glossary-nvrtc",
        "NVIDIA's run-time compiler for CUDA C++: it builds the CUDA C++ twins of the Rust kernels when the run starts, so both are timed on the same buffers.",
    ),
    term(
        "breakeven",
        "glossary-breakeven",
        "Where something starts to hold: in memcpy-kernel, the least work per element (AddKernel's cycles) at which the kernel outlasts each copy, so that the copies can hide behind the kernels; in launch-overhead, the least work per kernel from which the launch's share of a kernel's time falls under its threshold.",
    ),
    term(
        "bound",
        "glossary-bound",
        "The fastest a schedule can run, built from what the same run measured of its parts (each copy alone and both ways at once, each kernel alone); a row faster than its bound beyond noise is flagged.",
    ),
    term(
        "noise",
        "glossary-noise",
        "A row's spread: 1.4826 × the median absolute deviation of its samples over their median. Two figures closer than their noise are not called different, and a comparison of two runs also asks a difference to pass the spread two machines of one kind show.",
    ),
    term(
        "noise target",
        "glossary-noise-target",
        "The noise a row should get under: rows above it are sampled again, and any still above it are named.",
    ),
    term(
        "busiest engine",
        "glossary-busiest-engine",
        "In a traced timeline, the engine (HtoD, DtoH or the SMs) or stream busy longest per iteration: no schedule runs faster than it.",
    ),
    term(
        "disturbed",
        "glossary-disturbed",
        "A traced timeline whose checks still failed after its retraces: the machine's other traffic on the shared link got in the way. Only a wrong answer fails a run.",
    ),
];

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
    /// A linker for a page whose terms link to the glossary on page `page` (its file
    /// stem, `""` for this page).
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
            .filter(|t| !self.linked.contains(&t.anchor))
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
                anchor: Some(t.anchor.to_owned()),
            };
            out += &link(&text[at..at + t.spelling.len()], &target);
            from = at + t.spelling.len();
            self.linked.push(t.anchor);
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
    fn each_term_is_linked_once_where_it_is_first_used_as_a_word() {
        let mut linker = Linker::default();
        assert_eq!(
            markdown(
                &mut linker,
                "HtoD then DtoH, HtoD again; HtoDs and `DtoD` not"
            ),
            "[HtoD](#glossary-htod) then [DtoH](#glossary-dtoh), HtoD again; HtoDs and `DtoD` not"
        );
        assert_eq!(
            markdown(&mut linker, "HtoD and the NULL stream"),
            "HtoD and the [NULL stream](#glossary-null-stream)"
        );
    }

    #[test]
    fn every_anchor_is_unique_and_every_meaning_a_sentence() {
        for (i, t) in TERMS.iter().enumerate() {
            assert!(t.anchor.starts_with("glossary-"));
            assert!(
                TERMS[..i].iter().all(|u| u.anchor != t.anchor),
                "{}",
                t.anchor
            );
            assert!(t.meaning.ends_with('.'), "{}", t.spelling);
        }
    }
}
