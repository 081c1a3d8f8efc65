//! The AddKernel workload, shared by every experiment that runs the Handbook's kernel:
//! `out[i] = in[i] + add_value·cycles`, with C's wrap-around, and its check.
use streamlab_results::saved::Verification;

/// Check every element of `output` against `input`: `output[i] == input[i] +
/// add_value·cycles` with wrap-around, exactly.
pub fn check(
    input: &[i32],
    output: &[i32],
    (add_value, cycles): (i32, i32),
    what: &str,
) -> Verification {
    let expected = |i: usize| {
        f64::from(kernels_rs::element::add_repeatedly_closed_form(
            input[i], add_value, cycles,
        ))
    };
    let mut v = crate::verify::compare(what, output, expected, 0.0);
    if v.passed {
        v.detail = format!(
            "{what}: all {} ints equal in + {add_value}·{cycles}",
            output.len()
        );
    }
    v
}
