//! The embedded PTX of the Rust kernels shows the difference between the two forms that
//! the comparison with CUDA C++ measures: the plain forms keep Rust's bounds checks and
//! AddKernel's volatile local, the tuned forms drop the checks and keep the running sum
//! in a register behind a barrier; the math is inlined, correctly rounded.
use nvptx_builder::ptx;
use streamlab::runtime::kernels::RUST_PTX;

/// The text of one entry, from `.entry name(` to the next entry or the end.
fn body(name: &str) -> &'static str {
    let start = RUST_PTX
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no entry {name}"));
    let rest = &RUST_PTX[start + 1..];
    &rest[..rest.find(".entry ").unwrap_or(rest.len())]
}

fn count(text: &str, instruction: &str) -> usize {
    text.lines()
        .filter(|l| l.trim_start().starts_with(instruction))
        .count()
}

fn bounds_checks(name: &str) -> usize {
    body(name).matches("panic_bounds_check").count()
}

#[test]
fn plain_forms_keep_the_bounds_checks_that_tuned_forms_drop() {
    for (plain, tuned) in [
        ("matmul_plain", "matmul"),
        ("add_kernel_plain", "add_kernel"),
        ("sincos_plain", "sincos"),
    ] {
        assert!(bounds_checks(plain) > 0, "{plain} lost its bounds checks");
        assert_eq!(bounds_checks(tuned), 0, "{tuned} still checks bounds");
    }
}

#[test]
fn add_kernel_plain_adds_through_local_memory_and_tuned_through_a_register_loop() {
    let plain = body("add_kernel_plain");
    assert!(
        count(plain, "st.local") >= 1,
        "the volatile local is not in local memory"
    );
    let tuned = body("add_kernel");
    assert_eq!(
        count(tuned, "st.local") + count(tuned, "ld.local"),
        0,
        "tuned AddKernel spills"
    );
    let adds = count(tuned, "add.s32");
    let barriers = tuned.matches("begin inline asm").count();
    assert!(barriers >= 1, "no barrier keeps the additions");
    assert!(adds >= barriers, "{adds} additions for {barriers} barriers");
    let lines: Vec<&str> = tuned.lines().collect();
    let looped = lines.iter().enumerate().any(|(i, line)| {
        let label = line.trim();
        label.ends_with(':')
            && lines[i..]
                .iter()
                .any(|l| l.contains("bra") && l.contains(label.trim_end_matches(':')))
    });
    assert!(looped, "add_kernel has no loop: the additions were folded");
}

#[test]
fn math_is_inlined_and_correctly_rounded() {
    for sincos in ["sincos", "sincos_plain"] {
        assert_eq!(count(body(sincos), "sqrt.rn.f32"), 1, "{sincos}");
    }
    assert!(
        count(body("matmul"), "fma.rn.f32") >= 8,
        "the tuned matmul multiplies 8 products per turn"
    );
    assert!(
        ptx::parse(RUST_PTX).externs.is_empty(),
        "an external function is left to the driver"
    );
}
