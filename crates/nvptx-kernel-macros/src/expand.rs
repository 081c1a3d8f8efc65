//! What `#[kernel]` writes for an accepted function: both items, each under its own
//! `cfg`, since a macro cannot know which target the crate is compiled for.
//!
//! * On `nvptx64`: the function as an `extern "gpu-kernel"` entry named like it, each
//!   slice parameter taken as a pointer and a length and rebuilt before the body.
//! * Elsewhere: a unit struct named like the function, implementing
//!   `nvptx_kernel::Kernel` with the kernel's signature. The body is not compiled there.
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{Ident, LitStr};

use crate::parse::{KernelFn, KernelParam, Kind, Scalar};

/// Both items for `kernel`.
pub(crate) fn expand(kernel: &KernelFn) -> TokenStream {
    let entry = gpu_entry(kernel);
    let declaration = host_declaration(kernel);
    quote! {
        #entry
        #declaration
    }
}

/// The scalar's type, by a path no local name can shadow.
fn scalar_type(scalar: Scalar) -> TokenStream {
    let name = Ident::new(scalar.rust_name(), Span::call_site());
    quote!(::core::primitive::#name)
}

/// The entry's names for a slice parameter's pointer and length. Mixed-site hygiene
/// keeps them out of the body's reach and clear of the body's own names.
fn slice_parts(param: &KernelParam) -> (Ident, Ident) {
    let name = param.ident.unraw();
    (
        format_ident!("__{}_ptr", name, span = Span::mixed_site()),
        format_ident!("__{}_len", name, span = Span::mixed_site()),
    )
}

/// The GPU entry point: the user's function as `extern "gpu-kernel"`, exported under its
/// own name, with slices passed as pointer and length.
fn gpu_entry(kernel: &KernelFn) -> TokenStream {
    let KernelFn {
        attrs,
        ident,
        params,
        stmts,
    } = kernel;
    let mut inputs = Vec::new();
    let mut slices = Vec::new();
    for param in params {
        let KernelParam {
            mutability,
            ident: name,
            kind,
            scalar,
        } = param;
        let ty = scalar_type(*scalar);
        match kind {
            Kind::Value => inputs.push(quote!(#mutability #name: #ty)),
            Kind::ConstPtr => inputs.push(quote!(#mutability #name: *const #ty)),
            Kind::MutPtr => inputs.push(quote!(#mutability #name: *mut #ty)),
            Kind::Slice => {
                let (ptr, len) = slice_parts(param);
                inputs.push(quote!(#ptr: *const #ty));
                inputs.push(quote!(#len: ::core::primitive::usize));
                slices.push(quote! {
                    let #mutability #name: &[#ty] = if #len == 0 {
                        &[]
                    } else {
                        // SAFETY: the launch passes the address and element count of
                        // memory it lets the kernel read, as the kernel's contract says.
                        unsafe { ::core::slice::from_raw_parts(#ptr, #len) }
                    };
                });
            }
            Kind::SliceMut => {
                let (ptr, len) = slice_parts(param);
                inputs.push(quote!(#ptr: *mut #ty));
                inputs.push(quote!(#len: ::core::primitive::usize));
                slices.push(quote! {
                    let #mutability #name: &mut [#ty] = if #len == 0 {
                        &mut []
                    } else {
                        // SAFETY: the launch passes the address and element count of
                        // memory only this kernel uses, as the kernel's contract says.
                        unsafe { ::core::slice::from_raw_parts_mut(#ptr, #len) }
                    };
                });
            }
        }
    }
    quote! {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        #(#attrs)*
        pub unsafe extern "gpu-kernel" fn #ident(#(#inputs),*) {
            #(#slices)*
            #(#stmts)*
        }
    }
}

/// The host's view: a unit struct named like the kernel, carrying its doc comments, and
/// its `nvptx_kernel::Kernel` implementation.
fn host_declaration(kernel: &KernelFn) -> TokenStream {
    let ident = &kernel.ident;
    let docs = kernel
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"));
    let name = LitStr::new(&ident.unraw().to_string(), ident.span());
    let params = kernel.params.iter().map(|param| {
        let name = LitStr::new(&param.ident.unraw().to_string(), param.ident.span());
        let kind = Ident::new(param.kind.variant(), Span::call_site());
        let scalar = Ident::new(param.scalar.variant(), Span::call_site());
        quote! {
            ::nvptx_kernel::Param {
                name: #name,
                kind: ::nvptx_kernel::ParamKind::#kind(::nvptx_kernel::Scalar::#scalar),
            }
        }
    });
    let args = kernel.params.iter().map(|param| {
        let ty = scalar_type(param.scalar);
        match param.kind {
            Kind::Value => ty,
            Kind::Slice => quote!(::nvptx_kernel::Slice<#ty>),
            Kind::SliceMut => quote!(::nvptx_kernel::SliceMut<#ty>),
            Kind::ConstPtr => quote!(::nvptx_kernel::ConstPtr<#ty>),
            Kind::MutPtr => quote!(::nvptx_kernel::MutPtr<#ty>),
        }
    });
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        #(#docs)*
        #[allow(non_camel_case_types)]
        pub struct #ident;

        #[cfg(not(target_arch = "nvptx64"))]
        impl ::nvptx_kernel::Kernel for #ident {
            const SIGNATURE: ::nvptx_kernel::KernelSignature = ::nvptx_kernel::KernelSignature {
                name: #name,
                params: &[#(#params),*],
            };
            type Args = (#(#args,)*);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::check_fn;
    use syn::parse_quote;

    fn expand_fn(item: syn::ItemFn) -> TokenStream {
        expand(&check_fn(item).unwrap_or_else(|e| panic!("refused: {e}")))
    }

    #[test]
    fn sincos_expansion() {
        let expansion = expand_fn(parse_quote! {
            /// `b[i] = a[i] + 1`
            #[inline(never)]
            pub unsafe fn sincos(a: &[f32], b: &mut [f32], offset: u32) {
                b[0] = a[0] + offset as f32;
            }
        });
        let expected = quote! {
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            #[doc = r" `b[i] = a[i] + 1`"]
            #[inline(never)]
            pub unsafe extern "gpu-kernel" fn sincos(
                __a_ptr: *const ::core::primitive::f32,
                __a_len: ::core::primitive::usize,
                __b_ptr: *mut ::core::primitive::f32,
                __b_len: ::core::primitive::usize,
                offset: ::core::primitive::u32
            ) {
                let a: &[::core::primitive::f32] = if __a_len == 0 {
                    &[]
                } else {
                    unsafe { ::core::slice::from_raw_parts(__a_ptr, __a_len) }
                };
                let b: &mut [::core::primitive::f32] = if __b_len == 0 {
                    &mut []
                } else {
                    unsafe { ::core::slice::from_raw_parts_mut(__b_ptr, __b_len) }
                };
                b[0] = a[0] + offset as f32;
            }

            #[cfg(not(target_arch = "nvptx64"))]
            #[doc = r" `b[i] = a[i] + 1`"]
            #[allow(non_camel_case_types)]
            pub struct sincos;

            #[cfg(not(target_arch = "nvptx64"))]
            impl ::nvptx_kernel::Kernel for sincos {
                const SIGNATURE: ::nvptx_kernel::KernelSignature = ::nvptx_kernel::KernelSignature {
                    name: "sincos",
                    params: &[
                        ::nvptx_kernel::Param {
                            name: "a",
                            kind: ::nvptx_kernel::ParamKind::Slice(::nvptx_kernel::Scalar::F32),
                        },
                        ::nvptx_kernel::Param {
                            name: "b",
                            kind: ::nvptx_kernel::ParamKind::SliceMut(::nvptx_kernel::Scalar::F32),
                        },
                        ::nvptx_kernel::Param {
                            name: "offset",
                            kind: ::nvptx_kernel::ParamKind::Value(::nvptx_kernel::Scalar::U32),
                        }
                    ],
                };
                type Args = (
                    ::nvptx_kernel::Slice<::core::primitive::f32>,
                    ::nvptx_kernel::SliceMut<::core::primitive::f32>,
                    ::core::primitive::u32,
                );
            }
        };
        assert_eq!(expansion.to_string(), expected.to_string());
    }

    #[test]
    fn pointers_and_values_pass_through() {
        let expansion = expand_fn(parse_quote! {
            pub unsafe fn k(x: *const i8, mut y: *mut u64, n: usize, s: f64) {}
        });
        let file: syn::File = syn::parse2(expansion).expect("items");
        let syn::Item::Fn(entry) = &file.items[0] else {
            panic!("the entry comes first");
        };
        let inputs = &entry.sig.inputs;
        assert_eq!(
            quote!(#inputs).to_string(),
            quote!(
                x: *const ::core::primitive::i8,
                mut y: *mut ::core::primitive::u64,
                n: ::core::primitive::usize,
                s: ::core::primitive::f64
            )
            .to_string()
        );
        let syn::Item::Impl(declaration) = &file.items[2] else {
            panic!("the Kernel impl comes last");
        };
        let args = &declaration.items[1];
        assert_eq!(
            quote!(#args).to_string(),
            quote!(
                type Args = (
                    ::nvptx_kernel::ConstPtr<::core::primitive::i8>,
                    ::nvptx_kernel::MutPtr<::core::primitive::u64>,
                    ::core::primitive::usize,
                    ::core::primitive::f64,
                );
            )
            .to_string()
        );
    }

    #[test]
    fn no_parameters_and_both_cfgs() {
        let expansion = expand_fn(parse_quote! { pub unsafe fn noop() {} });
        let file: syn::File = syn::parse2(expansion).expect("items");
        let cfgs: Vec<String> = file
            .items
            .iter()
            .map(|item| {
                let attrs = match item {
                    syn::Item::Fn(item) => &item.attrs,
                    syn::Item::Struct(item) => &item.attrs,
                    syn::Item::Impl(item) => &item.attrs,
                    _ => panic!("unexpected item"),
                };
                let cfg = &attrs[0];
                quote!(#cfg).to_string()
            })
            .collect();
        assert_eq!(
            cfgs,
            [
                quote!(#[cfg(target_arch = "nvptx64")]).to_string(),
                quote!(#[cfg(not(target_arch = "nvptx64"))]).to_string(),
                quote!(#[cfg(not(target_arch = "nvptx64"))]).to_string(),
            ]
        );
        let syn::Item::Impl(declaration) = &file.items[2] else {
            panic!("the Kernel impl comes last");
        };
        let items = &declaration.items;
        assert_eq!(
            quote!(#(#items)*).to_string(),
            quote!(
                const SIGNATURE: ::nvptx_kernel::KernelSignature =
                    ::nvptx_kernel::KernelSignature {
                        name: "noop",
                        params: &[],
                    };
                type Args = ();
            )
            .to_string()
        );
    }

    #[test]
    fn raw_names_are_exported_unraw() {
        let expansion = expand_fn(parse_quote! { pub unsafe fn r#loop(r#in: &[u8]) {} });
        let text = expansion.to_string();
        assert!(text.contains("__in_ptr"), "{text}");
        assert!(text.contains("name : \"loop\""), "{text}");
        assert!(text.contains("name : \"in\""), "{text}");
    }
}
