//! The `#[kernel]` attribute of `nvptx-kernel`: a `pub unsafe fn` becomes a PTX entry
//! point when its crate is compiled for `nvptx64-nvidia-cuda`, and a typed declaration
//! of that entry (a unit struct implementing `nvptx_kernel::Kernel`) when it is compiled
//! for the host.
//!
//! Use it through `nvptx-kernel`, which re-exports it and defines the types the
//! expansion names (`::nvptx_kernel::Kernel`, `Param`, `Slice`, …).
//!
//! ```
//! use nvptx_kernel::{Kernel, kernel};
//!
//! /// `b[i] = a[i] * k`
//! #[kernel]
//! pub unsafe fn scale(a: &[f32], b: &mut [f32], k: f32) {
//!     let i = nvptx_kernel::thread::index_1d() as usize;
//!     if i < b.len() {
//!         b[i] = a[i] * k;
//!     }
//! }
//!
//! // Compiled for the host, `scale` is the kernel's declaration.
//! assert_eq!(scale::SIGNATURE.to_string(), "scale(a: &[f32], b: &mut [f32], k: f32)");
//! ```
//!
//! `parse` checks the function and reads its parameters; `expand` writes both items.
mod expand;
mod parse;

use proc_macro2::TokenStream;

/// Make a `pub unsafe fn` a GPU kernel.
///
/// ```
/// # use nvptx_kernel::kernel;
/// /// `c[i] = a[i] + b[i]`
/// #[kernel]
/// pub unsafe fn vecadd(a: &[f32], b: &[f32], c: &mut [f32]) { /* … */ }
/// ```
///
/// The function must be `pub` and `unsafe`, return nothing, and have no generics, no
/// `self`, no `const`/`async` and no ABI of its own. Each parameter is a plain name with
/// one of these types, `T` being `i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `i64`, `u64`,
/// `isize`, `usize`, `f32` or `f64`:
///
/// | Rust          | PTX entry parameters                | host `Kernel::Args` |
/// |---------------|-------------------------------------|---------------------|
/// | `&[T]`        | pointer (`.u64`), length (`.u64`)   | `Slice<T>`          |
/// | `&mut [T]`    | pointer (`.u64`), length (`.u64`)   | `SliceMut<T>`       |
/// | `*const T`    | pointer (`.u64`)                    | `ConstPtr<T>`       |
/// | `*mut T`      | pointer (`.u64`)                    | `MutPtr<T>`         |
/// | 32/64-bit `T` | the value                           | `T`                 |
///
/// Compiled for `nvptx64`, the function becomes `#[unsafe(no_mangle)] pub unsafe extern
/// "gpu-kernel" fn`, keeping its attributes; each slice is rebuilt from its pointer and
/// length before the body runs (an empty slice never touches its pointer). Compiled for
/// any other target, it becomes `pub struct name;` with the function's doc comments and
/// an `impl nvptx_kernel::Kernel` giving its signature and argument types; the body is
/// not compiled there.
///
/// A function the attribute cannot take is a compile error naming the problem and the fix.
#[proc_macro_attribute]
pub fn kernel(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    kernel_items(attr.into(), item.into()).into()
}

/// `#[kernel]` on `proc_macro2` tokens: the expansion, or the errors as `compile_error!`s.
fn kernel_items(attr: TokenStream, item: TokenStream) -> TokenStream {
    match parse::parse_kernel(attr, item) {
        Ok(kernel) => expand::expand(&kernel),
        Err(error) => error.to_compile_error(),
    }
}

/// The README's examples, compiled and run as this crate's doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn errors_become_compile_errors() {
        let item = quote!(
            pub fn k(x: bool) {}
        );
        let tokens = kernel_items(quote!(), item).to_string();
        assert_eq!(tokens.matches("compile_error").count(), 2, "{tokens}");
        assert!(tokens.contains("must be `unsafe`"), "{tokens}");
        assert!(tokens.contains("parameter `x` has type `bool`"), "{tokens}");
    }

    #[test]
    fn accepted_functions_expand_for_both_targets() {
        let item = quote!(
            pub unsafe fn k(x: &[f32]) {}
        );
        let tokens = kernel_items(quote!(), item).to_string();
        assert!(tokens.contains("extern \"gpu-kernel\" fn k"), "{tokens}");
        assert!(tokens.contains("Kernel for k"), "{tokens}");
    }
}
