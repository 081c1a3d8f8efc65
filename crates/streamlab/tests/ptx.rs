//! The embedded PTX, built from `kernels-rs/` by the PTX builder: the four entries with
//! their parameter counts, the requested target, nothing left to an external function,
//! and AddKernel's loop still a loop.
use ptx_builder::ptx::{parse, validate};
use streamlab::kernels::RUST_PTX;

const KERNELS: [(&str, usize); 4] = [("fill", 4), ("matmul", 6), ("add_kernel", 5), ("sincos", 4)];

fn expected() -> Vec<(String, usize)> {
    KERNELS.iter().map(|(n, p)| (n.to_string(), *p)).collect()
}

/// The text of one entry, from `.entry name(` to the next entry or the end.
fn body(name: &str) -> &'static str {
    let start = RUST_PTX
        .find(&format!(".entry {name}("))
        .expect("entry present");
    let rest = &RUST_PTX[start + 1..];
    let end = rest.find(".entry ").map_or(rest.len(), |e| e);
    &rest[..end]
}

#[test]
fn all_four_kernels_with_their_parameter_counts() {
    let target = streamlab::kernels::ptx_target(RUST_PTX);
    let summary = validate(RUST_PTX, target, &expected()).expect("valid PTX");
    assert_eq!(summary.entries.len(), 4);
    assert!(summary.externs.is_empty());
    assert_eq!(
        target,
        std::env::var("STREAMLAB_TARGET_CPU")
            .as_deref()
            .unwrap_or("sm_90")
    );
}

#[test]
fn validation_rejects_a_tampered_module() {
    let renamed = RUST_PTX.replace(".entry sincos(", ".entry sincos2(");
    assert!(
        validate(&renamed, "sm_90", &expected())
            .unwrap_err()
            .to_string()
            .contains("sincos")
    );
    let with_extern = format!("{RUST_PTX}\n.extern .func __nv_sinf(.param .b32 x);\n");
    assert!(validate(&with_extern, "sm_90", &expected()).is_err());
    assert!(validate(RUST_PTX, "sm_70", &expected()).is_err());
}

#[test]
fn add_kernel_keeps_one_addition_per_cycle_in_a_loop() {
    let add = body("add_kernel");
    let adds = add
        .lines()
        .filter(|l| l.trim_start().starts_with("add.s32"))
        .count();
    let barriers = add.matches("begin inline asm").count();
    assert!(barriers >= 1, "no optimisation barrier in add_kernel");
    assert!(adds >= barriers, "{adds} additions for {barriers} barriers");
    // A backward branch: some label is jumped to from below it.
    let lines: Vec<&str> = add.lines().collect();
    let looped = lines.iter().enumerate().any(|(i, line)| {
        line.trim_end().ends_with(':')
            && lines[i..]
                .iter()
                .any(|l| l.contains("bra") && l.contains(line.trim().trim_end_matches(':')))
    });
    assert!(looped, "add_kernel has no loop");
    let multiplies = add
        .lines()
        .filter(|l| l.trim_start().starts_with("mul.lo.s32"))
        .count();
    assert!(
        multiplies <= 1,
        "only the grid stride may be a multiply, found {multiplies}"
    );
}

#[test]
fn math_is_inlined_with_correct_rounding() {
    let sincos = body("sincos");
    assert!(
        sincos.contains("sqrt.rn.f32"),
        "sqrt is not the correctly rounded instruction"
    );
    assert!(body("matmul").contains("fma.rn.f32"));
    assert!(parse(RUST_PTX).externs.is_empty());
}
