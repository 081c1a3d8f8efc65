//! Reading and checking a PTX module: its `.target`, its kernel entries with their
//! parameter counts, and any unresolved `.extern .func` (a call the driver cannot link).

/// One `.entry` of a PTX module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub params: usize,
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

/// A way in which a PTX module is not what was asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PtxError {
    #[error("`.target` is {found:?}, expected {expected}")]
    Target {
        expected: String,
        found: Option<String>,
    },
    #[error("kernel `{0}` is missing: no `.entry {0}` in the PTX")]
    MissingEntry(String),
    #[error("kernel `{name}` takes {found} parameters, expected {expected}")]
    ParamCount {
        name: String,
        expected: usize,
        found: usize,
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
            entry.params += line.matches(".param").count();
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
            let mut entry = Entry { name, params: 0 };
            let after_open = rest.split_once('(').map_or("", |(_, tail)| tail);
            entry.params += after_open.matches(".param").count();
            if after_open.contains(')') {
                summary.entries.push(entry);
            } else {
                open_entry = Some(entry);
            }
        }
    }
    summary
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

/// Check a PTX module: `.target` is `target_cpu`, each `(name, params)` kernel is there
/// with that many parameters, and nothing is left to an external function.
pub fn validate(
    text: &str,
    target_cpu: &str,
    kernels: &[(String, usize)],
) -> Result<PtxSummary, PtxError> {
    let summary = parse(text);
    if summary.target.as_deref() != Some(target_cpu) {
        return Err(PtxError::Target {
            expected: target_cpu.to_owned(),
            found: summary.target,
        });
    }
    for (name, expected) in kernels {
        let entry = summary
            .entry(name)
            .ok_or_else(|| PtxError::MissingEntry(name.clone()))?;
        if entry.params != *expected {
            return Err(PtxError::ParamCount {
                name: name.clone(),
                expected: *expected,
                found: entry.params,
            });
        }
    }
    if let Some(name) = summary.externs.first() {
        return Err(PtxError::Extern(name.clone()));
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
.version 7.8
.target sm_90
.address_size 64

	// .globl	fill
.visible .entry fill(
	.param .u64 .ptr .global .align 1 fill_param_0,
	.param .u32 fill_param_1,
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

    fn fill4() -> Vec<(String, usize)> {
        vec![("fill".to_owned(), 4)]
    }

    #[test]
    fn parses_target_entries_and_params() {
        let summary = parse(SAMPLE);
        assert_eq!(summary.version.as_deref(), Some("7.8"));
        assert_eq!(summary.target.as_deref(), Some("sm_90"));
        assert_eq!(summary.entry("fill").unwrap().params, 4);
        assert_eq!(summary.entry("empty").unwrap().params, 0);
        assert!(summary.externs.is_empty());
        assert!(validate(SAMPLE, "sm_90", &fill4()).is_ok());
    }

    #[test]
    fn wrong_target_is_reported() {
        let err = validate(SAMPLE, "sm_80", &fill4()).unwrap_err();
        assert!(err.to_string().contains("expected sm_80"), "{err}");
    }

    #[test]
    fn missing_kernel_and_wrong_arity_name_the_kernel() {
        let err = validate(SAMPLE, "sm_90", &[("sincos".to_owned(), 4)]).unwrap_err();
        assert_eq!(err, PtxError::MissingEntry("sincos".to_owned()));
        assert!(err.to_string().contains("sincos"));
        let err = validate(SAMPLE, "sm_90", &[("fill".to_owned(), 3)]).unwrap_err();
        assert!(
            err.to_string()
                .contains("`fill` takes 4 parameters, expected 3"),
            "{err}"
        );
    }

    #[test]
    fn unresolved_extern_is_reported() {
        let text =
            format!("{SAMPLE}.extern .func (.param .b32 func_retval0) sinf(\n.param .b32 x\n);\n");
        let err = validate(&text, "sm_90", &fill4()).unwrap_err();
        assert_eq!(err, PtxError::Extern("sinf".to_owned()));
        assert_eq!(extern_name(" __nv_cosf(.param .b32 x);"), "__nv_cosf");
    }
}
