//! Each language's spellings of matmul's and AddKernel's forms: entries of its module
//! computing a form's results written another way ([`Spelling`]), which compare-kernels
//! times side by side and keeps the fastest of.
use streamlab_record::KernelForm;

/// One spelling of a kernel's form in one language: an entry of its module computing the
/// form's results, written another way (the kernel's own entry is one of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelling {
    pub entry: &'static str,
    pub form: KernelForm,
    /// What the spelling does, in words.
    pub how: &'static str,
    /// Indexes with `int`: correct only where every index fits in one (compare-kernels
    /// times it only there).
    pub int_indices: bool,
}

impl Spelling {
    const fn new(entry: &'static str, form: KernelForm, how: &'static str) -> Spelling {
        Spelling {
            entry,
            form,
            how,
            int_indices: false,
        }
    }
}

use KernelForm::{Plain, Safe, Tuned};

/// The spellings of matmul's forms, Rust's and CUDA C++'s (each form's own kernel first).
pub const MATMUL_SPELLINGS: [&[Spelling]; 2] = [
    &[
        Spelling::new(
            "matmul_plain",
            Plain,
            "the wiki's loop; index arithmetic, checked indexing",
        ),
        Spelling::new(
            "matmul_safe",
            Safe,
            "views checked once; loads ahead (fold_ahead: 8-product batches, 4 a step); counted-loop tail",
        ),
        Spelling::new(
            "matmul_safe_zip",
            Safe,
            "views checked once; the zipped row and column folded one pair a turn",
        ),
        Spelling::new(
            "matmul",
            Tuned,
            "8-product batches, 4 a step, one loaded a step ahead; guarded-batch tail",
        ),
        Spelling::new(
            "matmul_tuned_loop_tail",
            Tuned,
            "8-product batches, 4 a step, one loaded a step ahead; counted-loop tail",
        ),
        Spelling::new(
            "matmul_tuned_two_step",
            Tuned,
            "8-product batches, 2 a step, one loaded a step ahead; guarded-batch tail",
        ),
        Spelling::new(
            "matmul_tuned_ldg",
            Tuned,
            "as matmul_tuned_loop_tail, every load through the read-only data cache (ld.global.nc)",
        ),
        Spelling::new(
            "matmul_tuned_walk",
            Tuned,
            "two pointers walking the row and the column, one product a turn",
        ),
    ],
    &[
        Spelling::new(
            "matmul_plain",
            Plain,
            "the wiki's loop; 64-bit index arithmetic",
        ),
        Spelling {
            int_indices: true,
            ..Spelling::new(
                "matmul_plain_int",
                Plain,
                "the wiki's loop; int index arithmetic, as the wiki declares its indices",
            )
        },
        Spelling::new("matmul_safe", Safe, "lengths checked once; the plain loop"),
        Spelling::new(
            "matmul_safe_ahead",
            Safe,
            "lengths checked once; 8-product batches, 4 a step, one loaded ahead; guarded-batch tail",
        ),
        Spelling::new(
            "matmul",
            Tuned,
            "8-product batches, 4 a step, one loaded a step ahead; counted-loop tail",
        ),
        Spelling::new(
            "matmul_tuned_guarded_tail",
            Tuned,
            "8-product batches, 4 a step, one loaded a step ahead; guarded-batch tail",
        ),
        Spelling::new(
            "matmul_tuned_two_step",
            Tuned,
            "8-product batches, 2 a step, one loaded a step ahead; counted-loop tail",
        ),
        Spelling::new(
            "matmul_tuned_ldg",
            Tuned,
            "as matmul, every load through __ldg (the read-only data cache)",
        ),
        Spelling::new(
            "matmul_tuned_walk",
            Tuned,
            "two pointers walking the row and the column, one product a turn",
        ),
    ],
];

/// The spellings of AddKernel's forms, Rust's and CUDA C++'s (each form's own kernel first).
pub const ADD_KERNEL_SPELLINGS: [&[Spelling]; 2] = [
    &[
        Spelling::new("add_kernel_plain", Plain, "the Handbook's volatile local"),
        Spelling::new(
            "add_kernel_safe",
            Safe,
            "grid-stride view; sums 128 a step, two steps a turn, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_safe_by8",
            Safe,
            "grid-stride view; sums 8 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_safe_loop",
            Safe,
            "grid-stride view; sums one a turn",
        ),
        Spelling::new(
            "add_kernel",
            Tuned,
            "grid-stride loop; sums 128 a step, two steps a turn, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_by32",
            Tuned,
            "grid-stride loop; sums 32 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_ahead",
            Tuned,
            "a copy loop at 0 cycles; the next index and test before the sums; sums 8 a step",
        ),
    ],
    &[
        Spelling::new("add_kernel_plain", Plain, "the Handbook's volatile local"),
        Spelling::new(
            "add_kernel_safe",
            Safe,
            "grid-stride loop to the shorter length; sums one a turn",
        ),
        Spelling::new(
            "add_kernel_safe_by8",
            Safe,
            "grid-stride loop to the shorter length; sums 8 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_safe_by16",
            Safe,
            "grid-stride loop to the shorter length; sums 16 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_safe_by32",
            Safe,
            "grid-stride loop to the shorter length; sums 32 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_safe_pairs",
            Safe,
            "grid-stride loop to the shorter length; sums 128 a step, two steps a turn, the rest by bits",
        ),
        Spelling::new(
            "add_kernel",
            Tuned,
            "grid-stride loop; sums 128 a step, two steps a turn, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_by16",
            Tuned,
            "grid-stride loop; sums 16 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_by32",
            Tuned,
            "grid-stride loop; sums 32 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_by8",
            Tuned,
            "grid-stride loop; sums 8 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_loop",
            Tuned,
            "the Handbook's loop; sums one a turn behind an asm barrier",
        ),
        Spelling::new(
            "add_kernel_tuned_ahead",
            Tuned,
            "a copy loop at 0 cycles; the next index and test before the sums; sums 8 a step",
        ),
    ],
];

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_rs as k;
    use nvptx_kernel::Kernel;

    #[test]
    fn every_rust_spelling_is_declared_with_its_kernels_parameters_and_none_is_left_out() {
        let declared = |name: &str| {
            (kernels_rs::KERNELS.iter().chain(&kernels_rs::SPELLINGS))
                .find(|k| k.name == name)
                .unwrap_or_else(|| panic!("{name} is not declared"))
        };
        let spelled = [
            (MATMUL_SPELLINGS[0], k::matmul::SIGNATURE),
            (ADD_KERNEL_SPELLINGS[0], k::add_kernel::SIGNATURE),
        ];
        for (spellings, kernel) in spelled {
            for form in KernelForm::ALL {
                // Each form's own kernel comes first among its spellings.
                let first = spellings
                    .iter()
                    .find(|s| s.form == form)
                    .expect("a spelling");
                let suffix = match form {
                    Plain => "_plain",
                    Safe => "_safe",
                    Tuned => "",
                };
                assert_eq!(first.entry, format!("{}{suffix}", kernel.name));
            }
            for spelling in spellings {
                assert_eq!(
                    declared(spelling.entry).params,
                    kernel.params,
                    "{}",
                    spelling.entry
                );
            }
        }
        for spelling in kernels_rs::SPELLINGS {
            assert!(
                spelled
                    .iter()
                    .any(|(s, _)| s.iter().any(|s| s.entry == spelling.name)),
                "{} is declared but never timed",
                spelling.name
            );
        }
    }
}
