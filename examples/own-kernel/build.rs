//! Builds the kernel crate in `kernels/` to `$OUT_DIR/kernels.ptx`, each entry checked
//! against its declaration.
fn main() {
    nvptx_builder::Builder::new("kernels")
        .kernels(&own_kernel_kernels::KERNELS)
        .build()
        .unwrap_or_else(|err| nvptx_builder::fail(&err));
}
