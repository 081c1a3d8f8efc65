//! Builds the Rust kernels in `kernels-rs/` to PTX, every entry checked against its
//! declaration; `kernels` embeds the result.
fn main() {
    nvptx_builder::Builder::new("../../kernels-rs")
        .kernels(&kernels_rs::KERNELS)
        .kernels(&kernels_rs::SPELLINGS)
        .build()
        .unwrap_or_else(|err| nvptx_builder::fail(&err));
}
