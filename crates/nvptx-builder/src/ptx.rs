//! Reading and checking a PTX module: its `.target`, its kernel entries with their
//! parameter types, and any unresolved `.extern .func` (a call the driver cannot link);
//! [`check`] holds a module to the kernels' declarations. And what one entry's code holds
//! ([`counts`]): its global loads and stores, fused multiply-adds, `trap`s left by
//! bounds checks and the instructions of its hottest loop, over it and every function it
//! calls.
use nvptx_kernel::{KernelSignature, PtxPart, PtxType};

/// One `.entry` of a PTX module: its name and each parameter's type as written
/// (`.u64`, `.u32`, `.f32`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub params: Vec<String>,
}

/// What a PTX module declares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PtxSummary {
    pub version: Option<String>,
    pub target: Option<String>,
    pub entries: Vec<Entry>,
    pub externs: Vec<String>,
}

impl PtxSummary {
    /// The entry called `name`, if the module has one.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.name == name)
    }
}

/// A way in which a PTX module does not match what was asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PtxError {
    #[error("`.target` is {found:?}, expected {expected}")]
    Target {
        expected: String,
        found: Option<String>,
    },
    #[error(
        "kernel `{0}` is declared but the PTX has no `.entry {0}`: mark it #[kernel] (a `pub unsafe fn`)"
    )]
    MissingEntry(String),
    #[error(
        "kernel `{name}`: the declaration {declared} makes {expected} PTX parameters, the PTX entry has {found}"
    )]
    ParamCount {
        name: String,
        declared: String,
        expected: usize,
        found: usize,
    },
    #[error(
        "kernel `{name}`, parameter `{param}`{part}: the PTX passes `{found}` where the declaration needs {expected}"
    )]
    ParamType {
        name: String,
        param: String,
        part: &'static str,
        found: String,
        expected: &'static str,
    },
    #[error("unresolved external function `{0}` (a call no PTX linker will supply)")]
    Extern(String),
}

/// Read the declarations of a PTX module.
pub fn parse(text: &str) -> PtxSummary {
    let mut summary = PtxSummary::default();
    let mut open_entry: Option<Entry> = None;
    for line in text.lines().map(str::trim) {
        if let Some(entry) = open_entry.as_mut() {
            entry.params.extend(param_types(line));
            if line.contains(')') {
                summary.entries.extend(open_entry.take());
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix(".version") {
            summary.version = Some(rest.trim().to_owned());
        } else if let Some(rest) = line.strip_prefix(".target") {
            summary.target = rest.split(',').next().map(|t| t.trim().to_owned());
        } else if let Some(rest) = line.strip_prefix(".extern .func") {
            summary.externs.push(extern_name(rest));
        } else if let (Some(pos), Some(name)) = (line.find(".entry "), declared_name(line)) {
            let rest = &line[pos + ".entry ".len()..];
            let mut entry = Entry {
                name: name.to_owned(),
                params: Vec::new(),
            };
            let after_open = rest.split_once('(').map_or("", |(_, tail)| tail);
            entry.params.extend(param_types(after_open));
            if after_open.contains(')') {
                summary.entries.push(entry);
            } else {
                open_entry = Some(entry);
            }
        }
    }
    summary
}

/// The type of each `.param` declared in `text` (the token after `.param`).
fn param_types(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(".param").skip(1).filter_map(|rest| {
        rest.split_whitespace()
            .next()
            .map(|ty| ty.trim_end_matches(',').to_owned())
    })
}

/// The function name in what follows `.extern .func`: skip a `(return value)` group,
/// then read up to the parameter list.
fn extern_name(rest: &str) -> String {
    let rest = rest.trim();
    let rest = match rest.strip_prefix('(') {
        Some(inner) => inner.split_once(')').map_or("", |(_, tail)| tail),
        None => rest,
    };
    rest.trim()
        .split(['(', ';', ' '])
        .next()
        .unwrap_or_default()
        .to_owned()
}

fn part_name(part: PtxPart) -> &'static str {
    match part {
        PtxPart::Value => "",
        PtxPart::Pointer => " (its pointer)",
        PtxPart::Length => " (its length)",
    }
}

/// Hold one kernel's entry to its declaration: the same number of PTX parameters, each
/// of the type the declaration makes.
pub fn check_entry(summary: &PtxSummary, kernel: &KernelSignature) -> Result<(), PtxError> {
    let entry = summary
        .entry(kernel.name)
        .ok_or_else(|| PtxError::MissingEntry(kernel.name.to_owned()))?;
    let expected: Vec<_> = kernel.ptx_params().collect();
    if expected.len() != entry.params.len() {
        return Err(PtxError::ParamCount {
            name: kernel.name.to_owned(),
            declared: kernel.to_string(),
            expected: expected.len(),
            found: entry.params.len(),
        });
    }
    for ((param, part, ty), found) in expected.into_iter().zip(&entry.params) {
        if PtxType::parse(found) != Some(ty) {
            return Err(PtxError::ParamType {
                name: kernel.name.to_owned(),
                param: param.name.to_owned(),
                part: part_name(part),
                found: found.clone(),
                expected: ty.name(),
            });
        }
    }
    Ok(())
}

/// Check a PTX module: `.target` is `target_cpu`, every declared kernel is there with
/// the parameters its declaration makes, and nothing is left to an external function.
pub fn check(
    text: &str,
    target_cpu: &str,
    kernels: &[KernelSignature],
) -> Result<PtxSummary, PtxError> {
    let summary = parse(text);
    if summary.target.as_deref() != Some(target_cpu) {
        return Err(PtxError::Target {
            expected: target_cpu.to_owned(),
            found: summary.target,
        });
    }
    for kernel in kernels {
        check_entry(&summary, kernel)?;
    }
    if let Some(name) = summary.externs.first() {
        return Err(PtxError::Extern(name.clone()));
    }
    Ok(summary)
}

/// What the PTX text of one entry (and the functions it calls) holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PtxCounts {
    pub global_loads: usize,
    pub global_stores: usize,
    pub fmas: usize,
    /// `trap` instructions: bounds checks (or other panics) that remain.
    pub traps: usize,
    /// Instructions in the largest innermost loop of the entry; `None` without a loop.
    pub hottest_loop_instructions: Option<usize>,
}

/// One function of a PTX module: its name and the lines of its body.
struct PtxFunction<'a> {
    name: &'a str,
    body: Vec<&'a str>,
}

/// Every `.entry` and `.func` of `ptx`, in order.
fn functions(ptx: &str) -> Vec<PtxFunction<'_>> {
    let mut out = Vec::new();
    let mut lines = ptx.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        let header = t.starts_with(".visible")
            || t.starts_with(".entry")
            || t.starts_with(".func")
            || t.starts_with(".weak");
        if !header {
            continue;
        }
        let Some(name) = declared_name(t) else {
            continue;
        };
        // A declaration ends with ';' before any body; a definition opens a '{'.
        let mut depth = 0usize;
        let mut opened = false;
        let mut body = Vec::new();
        let mut rest = Some(line);
        while let Some(l) = rest {
            if !opened && l.trim_end().ends_with(';') && !l.contains('{') {
                break;
            }
            for c in l.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            if opened {
                body.push(l);
                if depth == 0 {
                    break;
                }
            }
            rest = lines.next();
        }
        if opened {
            out.push(PtxFunction { name, body });
        }
    }
    out
}

/// The name declared by an `.entry`/`.func` header line: the identifier before its
/// parameter list (after the return value's list, for a `.func`).
fn declared_name(header: &str) -> Option<&str> {
    let after = header
        .split_once(".entry")
        .or_else(|| header.split_once(".func"))?
        .1;
    // `.func (.param .b32 retval) name(`: the return list skipped.
    name_after_list(after)
}

/// The identifier that begins `text`, after a parenthesised list (and a comma after it)
/// where `text` opens with one.
fn name_after_list(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let text = match text.strip_prefix('(') {
        Some(rest) => rest
            .split_once(')')?
            .1
            .trim_start()
            .trim_start_matches(',')
            .trim_start(),
        None => text,
    };
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(text.len());
    (end > 0).then(|| &text[..end])
}

/// The function a `call` instruction names, if `line` is one.
fn callee(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = t.strip_prefix("call")?;
    // `call.uni (retval), name, (args);`: the return list skipped.
    name_after_list(rest.split_once(char::is_whitespace)?.1)
}

/// An instruction line (not a label, directive, comment or brace).
fn is_instruction(line: &str) -> bool {
    let t = line.trim();
    !(t.is_empty()
        || t.starts_with("//")
        || t.starts_with('.')
        || t.ends_with(':')
        || t == "{"
        || t == "}"
        || t.starts_with(')')
        || t.starts_with('('))
}

/// The opcode of an instruction line, its predicate guard dropped.
fn opcode(line: &str) -> &str {
    let t = line.trim_start();
    let t = if t.starts_with('@') {
        t.split_once(char::is_whitespace)
            .map_or("", |(_, r)| r.trim_start())
    } else {
        t
    };
    t.split(|c: char| c.is_whitespace() || c == ';')
        .next()
        .unwrap_or("")
}

/// The label a branch instruction jumps to.
fn branch_target(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let op = opcode(t);
    if !op.starts_with("bra") {
        return None;
    }
    let target = t.rsplit(char::is_whitespace).next()?.trim_end_matches(';');
    Some(target)
}

/// Instructions in the largest innermost loop of `body`: a loop runs from a label to the
/// last branch back to it.
fn hottest_loop(body: &[&str]) -> Option<usize> {
    let labels: Vec<(usize, &str)> = (body.iter().enumerate())
        .filter_map(|(i, l)| l.trim().strip_suffix(':').map(|name| (i, name)))
        .collect();
    let loops: Vec<(usize, usize)> = (labels.iter())
        .filter_map(|&(start, name)| {
            (body.iter().enumerate())
                .skip(start + 1)
                .rfind(|(_, l)| branch_target(l) == Some(name))
                .map(|(end, _)| (start, end))
        })
        .collect();
    let innermost = loops.iter().filter(|&&(s, e)| {
        !(loops.iter()).any(|&(s2, e2)| (s2, e2) != (s, e) && s <= s2 && e2 <= e)
    });
    innermost
        .map(|&(s, e)| body[s..=e].iter().filter(|l| is_instruction(l)).count())
        .max()
}

/// The counts of `entry` in `ptx`, over its body and every function it calls; `None`
/// when the module has no such entry.
pub fn counts(ptx: &str, entry: &str) -> Option<PtxCounts> {
    let all = functions(ptx);
    let root = all.iter().position(|f| f.name == entry)?;
    let mut seen = vec![root];
    let mut next = 0;
    while next < seen.len() {
        for line in &all[seen[next]].body {
            if let Some(name) = callee(line)
                && let Some(i) = all.iter().position(|f| f.name == name)
                && !seen.contains(&i)
            {
                seen.push(i);
            }
        }
        next += 1;
    }
    let mut counts = PtxCounts {
        global_loads: 0,
        global_stores: 0,
        fmas: 0,
        traps: 0,
        hottest_loop_instructions: hottest_loop(&all[root].body),
    };
    for line in seen.iter().flat_map(|&i| &all[i].body) {
        if !is_instruction(line) {
            continue;
        }
        let op = opcode(line);
        counts.global_loads += usize::from(op.starts_with("ld.global"));
        counts.global_stores += usize::from(op.starts_with("st.global"));
        counts.fmas += usize::from(op.starts_with("fma."));
        counts.traps += usize::from(op == "trap");
    }
    Some(counts)
}

#[cfg(test)]
mod tests {
    use nvptx_kernel::{Param, ParamKind, Scalar};

    use super::*;

    const COUNTED: &str = "
.version 8.7
.target sm_90
.address_size 64

.func  (.param .b32 func_retval0) helper(
	.param .b32 helper_param_0
)
{
	.reg .b32 	%r<3>;
	ld.param.b32 	%r1, [helper_param_0];
	fma.rn.f32 	%r2, %r1, %r1, %r1;
	st.param.b32 	[func_retval0], %r2;
	ret;
}

.visible .entry k(
	.param .u64 .ptr .align 1 k_param_0,
	.param .u32 k_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<5>;

	ld.param.b64 	%rd1, [k_param_0];
	ld.param.b32 	%r1, [k_param_1];
	setp.eq.s32 	%p1, %r1, 0;
	@%p1 bra 	$L__BB1_4;
	mov.b32 	%r2, 0;
$L__BB1_2:
	ld.global.b32 	%r3, [%rd1];
	fma.rn.f32 	%r4, %r3, %r3, %r4;
$L__BB1_3:
	ld.global.nc.b32 	%r5, [%rd1+4];
	add.s32 	%r2, %r2, 1;
	setp.lt.u32 	%p2, %r2, %r1;
	@%p2 bra 	$L__BB1_3;
	setp.lt.u32 	%p2, %r2, 9;
	@%p2 bra 	$L__BB1_2;
	{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0], %r4;
	.param .b32 retval0;
	call.uni (retval0), helper, (param0);
	ld.param.b32 	%r6, [retval0];
	} // callseq 0
	st.global.b32 	[%rd1], %r6;
	ret;
$L__BB1_4:
	trap;
}
";

    #[test]
    fn ptx_counts_cover_the_entry_and_what_it_calls() {
        let c = counts(COUNTED, "k").unwrap();
        assert_eq!(c.global_loads, 2);
        assert_eq!(c.global_stores, 1);
        // One in the entry, one in the helper it calls.
        assert_eq!(c.fmas, 2);
        assert_eq!(c.traps, 1);
        // The inner loop $L__BB1_3: load, add, compare, branch.
        assert_eq!(c.hottest_loop_instructions, Some(4));
        assert!(counts(COUNTED, "missing").is_none());
        assert_eq!(counts(COUNTED, "helper").unwrap().fmas, 1);
    }

    #[test]
    fn names_and_calls_are_read_from_their_lines() {
        assert_eq!(declared_name(".visible .entry sincos("), Some("sincos"));
        assert_eq!(
            declared_name(".func  (.param .b32 func_retval0) _ZN4libm4sinf(").unwrap(),
            "_ZN4libm4sinf"
        );
        assert_eq!(
            callee("\tcall.uni (retval0), helper, (param0);"),
            Some("helper")
        );
        assert_eq!(callee("\tcall.uni helper, (param0);"), Some("helper"));
        assert_eq!(
            branch_target("\t@%p2 bra.uni \t$L__BB1_3;"),
            Some("$L__BB1_3")
        );
    }

    const SAMPLE: &str = "\
.version 8.7
.target sm_90
.address_size 64

	// .globl	fill
.visible .entry fill(
	.param .u64 .ptr .align 1 fill_param_0,
	.param .u64 fill_param_1,
	.param .u32 fill_param_2,
	.param .f32 fill_param_3
)
{
	ret;
}
.visible .entry empty()
{
	ret;
}
";

    const FILL: KernelSignature = KernelSignature {
        name: "fill",
        params: &[
            Param {
                name: "matrix",
                kind: ParamKind::SliceMut(Scalar::F32),
            },
            Param {
                name: "cols",
                kind: ParamKind::Value(Scalar::U32),
            },
            Param {
                name: "value",
                kind: ParamKind::Value(Scalar::F32),
            },
        ],
    };

    #[test]
    fn parses_target_entries_and_param_types() {
        let summary = parse(SAMPLE);
        assert_eq!(summary.version.as_deref(), Some("8.7"));
        assert_eq!(summary.target.as_deref(), Some("sm_90"));
        assert_eq!(
            summary.entry("fill").unwrap().params,
            [".u64", ".u64", ".u32", ".f32"]
        );
        assert!(summary.entry("empty").unwrap().params.is_empty());
        assert!(summary.externs.is_empty());
        assert!(check(SAMPLE, "sm_90", &[FILL]).is_ok());
    }

    #[test]
    fn wrong_target_is_reported() {
        let err = check(SAMPLE, "sm_80", &[FILL]).unwrap_err();
        assert!(err.to_string().contains("expected sm_80"), "{err}");
    }

    #[test]
    fn a_declaration_the_ptx_does_not_match_names_the_kernel_and_parameter() {
        let missing = KernelSignature {
            name: "sincos",
            ..FILL
        };
        assert_eq!(
            check(SAMPLE, "sm_90", &[missing]).unwrap_err(),
            PtxError::MissingEntry("sincos".into())
        );
        let shorter = KernelSignature {
            params: &FILL.params[..2],
            ..FILL
        };
        let err = check(SAMPLE, "sm_90", &[shorter]).unwrap_err().to_string();
        assert!(
            err.contains("makes 3 PTX parameters, the PTX entry has 4"),
            "{err}"
        );
        const WRONG: &[Param] = &[
            FILL.params[0],
            Param {
                name: "cols",
                kind: ParamKind::Value(Scalar::U64),
            },
            FILL.params[2],
        ];
        let wrong = KernelSignature {
            params: WRONG,
            ..FILL
        };
        let err = check(SAMPLE, "sm_90", &[wrong]).unwrap_err().to_string();
        assert_eq!(
            err,
            "kernel `fill`, parameter `cols`: the PTX passes `.u32` where the declaration needs a 64-bit integer or pointer"
        );
        let text = SAMPLE.replace(".param .u64 fill_param_1", ".param .u32 fill_param_1");
        let err = check(&text, "sm_90", &[FILL]).unwrap_err().to_string();
        assert!(err.contains("parameter `matrix` (its length)"), "{err}");
    }

    #[test]
    fn unresolved_extern_is_reported() {
        let text =
            format!("{SAMPLE}.extern .func (.param .b32 func_retval0) sinf(\n.param .b32 x\n);\n");
        let err = check(&text, "sm_90", &[FILL]).unwrap_err();
        assert_eq!(err, PtxError::Extern("sinf".to_owned()));
        assert_eq!(extern_name(" __nv_cosf(.param .b32 x);"), "__nv_cosf");
    }
}
