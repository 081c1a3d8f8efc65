//! compare-kernels' derived numbers: per case the quartiles of both languages and the
//! ratio of medians, and per kernel the headline ratio of each form.
use serde::{Deserialize, Serialize};

use super::summary::KernelRatios;
use crate::saved::KernelForm;
use crate::saved::compare_kernels::{KernelCase, KernelComparison};
use crate::stats::Quartiles;

/// The kernels every comparison covers, in table order.
pub const KERNELS: [&str; 4] = ["fill", "matmul", "add_kernel", "sincos"];

/// One case, Rust against CUDA C++.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRatio {
    pub kernel: String,
    pub case: String,
    /// `None` for a kernel with one form (plain and tuned are the same code).
    pub form: Option<KernelForm>,
    pub rust: Quartiles,
    pub cuda: Quartiles,
    /// Median Rust time over median CUDA C++ time: below 1 Rust is faster.
    pub ratio: f64,
}

/// Everything derived from a kernel comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonAnalysis {
    pub cases: Vec<CaseRatio>,
    /// Per kernel, its first case in the tuned form (or its only form).
    pub tuned: Option<KernelRatios>,
    /// Per kernel, its first case in the plain form (or its only form).
    pub plain: Option<KernelRatios>,
}

fn case_ratio(c: &KernelCase) -> CaseRatio {
    CaseRatio {
        kernel: c.kernel.clone(),
        case: c.case.clone(),
        form: c.form,
        rust: c.rust.quartiles(),
        cuda: c.cuda.quartiles(),
        ratio: c.rust.median() / c.cuda.median(),
    }
}

/// Derive everything from `c`.
pub fn analyze(c: &KernelComparison) -> ComparisonAnalysis {
    let cases: Vec<CaseRatio> = c.cases.iter().map(case_ratio).collect();
    let ratios = |form: KernelForm| {
        let of = |kernel: &str| {
            (cases.iter())
                .find(|k| k.kernel == kernel && k.form.is_none_or(|f| f == form))
                .map(|k| k.ratio)
        };
        Some(KernelRatios {
            fill: of(KERNELS[0])?,
            matmul: of(KERNELS[1])?,
            add_kernel: of(KERNELS[2])?,
            sincos: of(KERNELS[3])?,
        })
    };
    ComparisonAnalysis {
        tuned: ratios(KernelForm::Tuned),
        plain: ratios(KernelForm::Plain),
        cases,
    }
}
