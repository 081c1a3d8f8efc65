//! A kernel's card: why its time is what it is, with no profiler. What the driver says
//! after loading the module (registers per thread, local memory, static shared memory,
//! the largest block, and the theoretical occupancy at the launch shape), and what the
//! PTX text says (global loads and stores, fused multiply-adds, `trap`s left by bounds
//! checks, and the instructions in the hottest loop), each counted over the entry and
//! every function it calls.
use serde::{Deserialize, Serialize};

/// What the driver reports for one loaded kernel entry (`cuFuncGetAttribute`,
/// `cuOccupancyMaxActiveBlocksPerMultiprocessor`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DriverCard {
    pub registers: i32,
    /// Local memory per thread: spills and stack.
    pub local_bytes: i32,
    pub static_shared_bytes: i32,
    pub max_threads_per_block: i32,
    /// Threads per block of the launch the card describes.
    pub block_threads: u32,
    /// Resident warps per SM at that block size over the SM's most: 0 to 1.
    pub occupancy: f64,
}

/// What the PTX text of one entry (and the functions it calls) holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtxCounts {
    pub global_loads: usize,
    pub global_stores: usize,
    pub fmas: usize,
    /// `trap` instructions: bounds checks (or other panics) that remain.
    pub traps: usize,
    /// Instructions in the largest innermost loop of the entry; `None` without a loop.
    pub hottest_loop_instructions: Option<usize>,
}

/// One kernel's card in one language.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KernelCard {
    pub driver: DriverCard,
    pub ptx: PtxCounts,
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
        if !header || !(t.contains(".entry") || t.contains(".func")) {
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
        .1
        .trim_start();
    let after = match after.strip_prefix('(') {
        // `.func (.param .b32 retval) name(`: skip the return list.
        Some(rest) => rest.split_once(')')?.1.trim_start(),
        None => after,
    };
    let end = after
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(after.len());
    (end > 0).then(|| &after[..end])
}

/// The function a `call` instruction names, if `line` is one.
fn callee(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = t.strip_prefix("call")?;
    let rest = rest.split_once(char::is_whitespace)?.1.trim_start();
    let rest = match rest.strip_prefix('(') {
        Some(r) => r
            .split_once(')')?
            .1
            .trim_start()
            .trim_start_matches(',')
            .trim_start(),
        None => rest,
    };
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
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
pub fn ptx_counts(ptx: &str, entry: &str) -> Option<PtxCounts> {
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

/// Theoretical occupancy: `blocks` resident blocks of `block_threads` threads over the
/// SM's `max_threads_per_sm`, in whole warps.
pub fn occupancy(blocks: i32, block_threads: u32, max_threads_per_sm: i32) -> f64 {
    let warps = |threads: u32| threads.div_ceil(32);
    let resident = blocks.max(0) as u32 * warps(block_threads);
    f64::from(resident) / f64::from(warps(max_threads_per_sm.max(1) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "
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
        let c = ptx_counts(PTX, "k").unwrap();
        assert_eq!(c.global_loads, 2);
        assert_eq!(c.global_stores, 1);
        // One in the entry, one in the helper it calls.
        assert_eq!(c.fmas, 2);
        assert_eq!(c.traps, 1);
        // The inner loop $L__BB1_3: load, add, compare, branch.
        assert_eq!(c.hottest_loop_instructions, Some(4));
        assert!(ptx_counts(PTX, "missing").is_none());
        assert_eq!(ptx_counts(PTX, "helper").unwrap().fmas, 1);
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

    #[test]
    fn occupancy_is_resident_warps_over_the_sms_most() {
        assert_eq!(occupancy(2, 1024, 2048), 1.0);
        assert_eq!(occupancy(8, 100, 2048), 8.0 * 4.0 / 64.0);
        assert_eq!(occupancy(0, 256, 2048), 0.0);
    }
}
