//! Builds the Rust kernels in `kernels-rs/` to PTX; `src/kernels.rs` embeds the result.
use ptx_builder::{PtxBuilder, fail_build_script};

fn main() {
    let builder = PtxBuilder::new("../../kernels-rs")
        .kernel("fill", 4)
        .kernel("matmul", 6)
        .kernel("add_kernel", 5)
        .kernel("sincos", 4);
    builder.emit_rerun_directives();
    let ptx = builder
        .build()
        .unwrap_or_else(|err| fail_build_script(&err));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:warning=kernels built: {}", ptx.display());
}
