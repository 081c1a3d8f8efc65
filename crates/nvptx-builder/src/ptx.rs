//! Reading and checking a PTX module: its `.target`, its kernel entries with their
//! parameter types, and any unresolved `.extern .func` (a call the driver cannot link).
//! [`check`] holds a module to the kernels' declarations.
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
        } else if let Some(pos) = line.find(".entry ") {
            let rest = &line[pos + ".entry ".len()..];
            let name = rest.split('(').next().unwrap_or(rest).trim().to_owned();
            let mut entry = Entry {
                name,
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

#[cfg(test)]
mod tests {
    use nvptx_kernel::{Param, ParamKind, Scalar};

    use super::*;

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
