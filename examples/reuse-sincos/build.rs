//! Builds kernels-rs to `$OUT_DIR/kernels.ptx`, found by its name among the
//! dependencies, every entry checked against its declaration.
fn main() {
    nvptx_builder::Builder::dependency("kernels-rs")
        .kernels(&kernels_rs::KERNELS)
        .build()
        .unwrap_or_else(|err| nvptx_builder::fail(&err));
}
