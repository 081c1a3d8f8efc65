//! The kernel modules the runtime can load: the Rust kernels built from `kernels-rs/`
//! by `build.rs` (embedded here), and which set a result was measured with.
use serde::{Deserialize, Serialize};

/// PTX of the Rust kernels (`fill`, `matmul`, `add_kernel`, `sincos`).
pub const RUST_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// Which implementation of the four kernels ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KernelSet {
    /// The Rust kernels of `kernels-rs/`.
    Rust,
    /// The CUDA C++ twins, compiled at run time with NVRTC.
    Cuda,
}

impl KernelSet {
    pub fn label(self) -> &'static str {
        match self {
            KernelSet::Rust => "rust",
            KernelSet::Cuda => "cuda",
        }
    }
}

/// The `.target` line of a PTX module (e.g. `sm_90`).
pub fn ptx_target(ptx: &str) -> &str {
    ptx.lines()
        .find_map(|line| line.trim().strip_prefix(".target"))
        .map(|rest| rest.split(',').next().unwrap_or(rest).trim())
        .unwrap_or("unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_ptx_has_the_four_kernels_and_the_default_target() {
        for name in kernels_rs::KERNEL_NAMES {
            assert!(
                RUST_PTX.contains(&format!(".entry {name}(")),
                "{name} missing"
            );
        }
        assert!(ptx_target(RUST_PTX).starts_with("sm_"));
        assert_eq!(ptx_target(".version 7.8\n.target sm_80\n"), "sm_80");
        assert_eq!(ptx_target("nothing"), "unknown");
    }
}
