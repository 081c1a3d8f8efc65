//! Builds the kernel crate in `kernels/` to `$OUT_DIR/kernels.ptx`, its entry checked
//! against the kernel's declaration.
fn main() {
    nvptx_builder::Builder::new("kernels")
        .kernels(&vecadd_kernels::KERNELS)
        .build()
        .unwrap_or_else(|err| nvptx_builder::fail(&err));
}
