//! Builds the Rust kernels in `kernels-rs/` to PTX, every entry checked against its
//! declaration; `runtime::kernels` embeds the result.
fn main() {
    nvptx_builder::Builder::new("../../kernels-rs")
        .kernels(&kernels_rs::KERNELS)
        .build()
        .unwrap_or_else(|err| nvptx_builder::fail(&err));
}
