//! The parser on every form a kernel's signature takes, and on each it refuses.
use super::*;
use quote::quote;
use syn::parse_quote;

/// The first error message for `item`, which must be refused.
fn refusal(item: ItemFn) -> String {
    match check_fn(item) {
        Ok(_) => panic!("accepted"),
        Err(error) => error.to_string(),
    }
}

/// All error messages for `item`, which must be refused.
fn refusals(item: ItemFn) -> Vec<String> {
    match check_fn(item) {
        Ok(_) => panic!("accepted"),
        Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
    }
}

fn kinds(item: ItemFn) -> Vec<(String, Kind, Scalar)> {
    let kernel = check_fn(item).unwrap_or_else(|e| panic!("refused: {e}"));
    kernel
        .params
        .iter()
        .map(|p| (p.ident.to_string(), p.kind, p.scalar))
        .collect()
}

#[test]
fn reads_every_supported_parameter_kind() {
    let item: ItemFn = parse_quote! {
        pub unsafe fn all(a: &[i8], b: &mut [u16], c: &'static [f64], d: *const u8,
                          e: *mut i64, f: i32, mut g: u32, h: i64, i: u64, j: isize,
                          k: usize, l: f32, m: f64) {}
    };
    assert_eq!(
        kinds(item),
        [
            ("a", Kind::Slice, Scalar::I8),
            ("b", Kind::SliceMut, Scalar::U16),
            ("c", Kind::Slice, Scalar::F64),
            ("d", Kind::ConstPtr, Scalar::U8),
            ("e", Kind::MutPtr, Scalar::I64),
            ("f", Kind::Value, Scalar::I32),
            ("g", Kind::Value, Scalar::U32),
            ("h", Kind::Value, Scalar::I64),
            ("i", Kind::Value, Scalar::U64),
            ("j", Kind::Value, Scalar::Isize),
            ("k", Kind::Value, Scalar::Usize),
            ("l", Kind::Value, Scalar::F32),
            ("m", Kind::Value, Scalar::F64),
        ]
        .map(|(name, kind, scalar)| (name.to_string(), kind, scalar))
    );
}

#[test]
fn keeps_mut_bindings_and_body() {
    let kernel = check_fn(parse_quote! {
        /// Docs.
        #[inline(never)]
        pub unsafe fn k(mut n: u32, mut out: &mut [f32]) { n += 1; out = &mut out[1..]; }
    })
    .unwrap_or_else(|e| panic!("refused: {e}"));
    assert!(kernel.params.iter().all(|p| p.mutability.is_some()));
    assert_eq!(kernel.attrs.len(), 2);
    assert_eq!(kernel.stmts.len(), 2);
}

#[test]
fn maps_every_scalar_by_name() {
    for scalar in Scalar::ALL {
        let name = Ident::new(scalar.rust_name(), proc_macro2::Span::call_site());
        let ty: Type = parse_quote!(*const #name);
        assert_eq!(param_type(&ty), Some((Kind::ConstPtr, scalar)));
        let ty: Type = parse_quote!(&mut [#name]);
        assert_eq!(param_type(&ty), Some((Kind::SliceMut, scalar)));
        let ty: Type = parse_quote!(#name);
        let by_value = param_type(&ty).map(|(_, s)| s);
        assert_eq!(by_value.is_some(), scalar.by_value(), "{name}");
    }
}

#[test]
fn refuses_unsupported_types() {
    for ty in [
        quote!(Vec<f32>),
        quote!(bool),
        quote!(u8),
        quote!(i16),
        quote!(&f32),
        quote!(&mut u32),
        quote!(&[bool]),
        quote!(*const *const f32),
        quote!(T),
        quote!(core::primitive::f32),
        quote!([f32; 4]),
        quote!((f32, f32)),
        quote!(&[[f32; 2]]),
    ] {
        let ty: Type = syn::parse2(ty).expect("a type");
        assert_eq!(param_type(&ty), None, "{}", pretty(&ty));
    }
}

#[test]
fn unsupported_type_message() {
    let message = refusal(parse_quote! { pub unsafe fn k(x: Vec<f32>) {} });
    assert_eq!(
        message,
        "#[kernel] parameter `x` has type `Vec<f32>`, which a kernel cannot take: use &[T], \
         &mut [T], *const T, *mut T (T a primitive number) or i32, u32, i64, u64, isize, \
         usize, f32, f64"
    );
    let message = refusal(parse_quote! { pub unsafe fn k(x: &mut Option<&[u8]>) {} });
    assert!(
        message.contains("has type `&mut Option<&[u8]>`"),
        "{message}"
    );
}

#[test]
fn signature_messages() {
    let cases: [(ItemFn, &str); 10] = [
        (
            parse_quote! { unsafe fn k() {} },
            "#[kernel] function `k` must be plain `pub`: a kernel is an exported PTX entry, \
             write `pub unsafe fn k`",
        ),
        (
            parse_quote! { pub(crate) unsafe fn k() {} },
            "#[kernel] function `k` must be plain `pub`: a kernel is an exported PTX entry, \
             write `pub unsafe fn k`",
        ),
        (
            parse_quote! { pub fn k() {} },
            "#[kernel] function `k` must be `unsafe`: its launches must uphold what it \
             assumes of its pointers and lengths, write `pub unsafe fn k`",
        ),
        (
            parse_quote! { pub unsafe fn k() -> u32 { 0 } },
            "#[kernel] function `k` returns `u32`: a kernel returns nothing, write results \
             through a `&mut [T]` or `*mut T` parameter",
        ),
        (
            parse_quote! { pub unsafe fn k<T>(x: *const T) {} },
            "#[kernel] function `k` is generic: a PTX entry has one concrete signature, \
             remove the generic parameters",
        ),
        (
            parse_quote! { pub unsafe fn k() where u32: Copy {} },
            "#[kernel] function `k` has a where clause: a PTX entry has one concrete \
             signature, remove it",
        ),
        (
            parse_quote! { pub async unsafe fn k() {} },
            "#[kernel] function `k` is `async`: a kernel cannot be async, remove `async`",
        ),
        (
            parse_quote! { pub const unsafe fn k() {} },
            "#[kernel] function `k` is `const`: a kernel runs only on the GPU, remove `const`",
        ),
        (
            parse_quote! { pub unsafe extern "C" fn k() {} },
            "#[kernel] function `k` names an ABI: #[kernel] makes it `extern \"gpu-kernel\"` \
             itself, remove `extern \"C\"`",
        ),
        (
            parse_quote! { #[unsafe(no_mangle)] pub unsafe fn k() {} },
            "#[kernel] function `k` has #[no_mangle]: #[kernel] exports it as `k` itself, \
             remove the attribute",
        ),
    ];
    for (item, expected) in cases {
        assert_eq!(refusal(item), expected);
    }
}

#[test]
fn parameter_messages() {
    assert_eq!(
        refusal(parse_quote! { pub unsafe fn k(&self) {} }),
        "#[kernel] function `k` takes `self`: a kernel is a free function, remove the receiver"
    );
    assert_eq!(
        refusal(parse_quote! { pub unsafe fn k((a, b): (u32, u32)) {} }),
        "#[kernel] parameter `(a, b)` is a pattern, not a name: write `name: Type` and \
         destructure in the body"
    );
    assert_eq!(
        refusal(parse_quote! { pub unsafe fn k(ref a: u32) {} }),
        "#[kernel] parameter `ref a` is a pattern, not a name: write `name: Type` and \
         destructure in the body"
    );
    assert_eq!(
        refusal(parse_quote! { pub unsafe fn k(_: u32) {} }),
        "#[kernel] parameter `_` is a pattern, not a name: write `name: Type` and \
         destructure in the body"
    );
    assert_eq!(
        refusal(parse_quote! { pub unsafe fn k(#[allow(unused)] a: u32) {} }),
        "#[kernel] parameter `a` has an attribute: a kernel's parameters are fixed, put lint \
         attributes on the function instead"
    );
    assert_eq!(
        refusal(parse_quote! { pub unsafe fn k(a: u32, a: f32) {} }),
        "#[kernel] parameter `a` is declared twice: rename one of them"
    );
}

#[test]
fn reports_every_problem_at_once() {
    let messages = refusals(parse_quote! { fn k(x: bool, y: &[f32]) -> f32 { 0.0 } });
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert!(messages[0].contains("must be plain `pub`"));
    assert!(messages[1].contains("must be `unsafe`"));
    assert!(messages[2].contains("returns `f32`"));
    assert!(messages[3].contains("parameter `x` has type `bool`"));
}

#[test]
fn refuses_arguments_and_non_functions() {
    let error = |attr: TokenStream, item: TokenStream| match parse_kernel(attr, item) {
        Ok(_) => panic!("accepted"),
        Err(error) => error.to_string(),
    };
    assert_eq!(
        error(
            quote!(sm_90),
            quote!(
                pub unsafe fn k() {}
            )
        ),
        "#[kernel] takes no arguments: write `#[kernel]` alone"
    );
    assert_eq!(
        error(
            TokenStream::new(),
            quote!(
                pub struct K;
            )
        ),
        "#[kernel] applies to functions only: put it on `pub unsafe fn name(...) { ... }`"
    );
}

#[test]
fn pretty_prints_types_as_written() {
    for (ty, text) in [
        (quote!(Vec<Vec<f32>>), "Vec<Vec<f32>>"),
        (quote!(&'a mut [f32]), "&'a mut [f32]"),
        (
            quote!(*const core::primitive::u8),
            "*const core::primitive::u8",
        ),
        (quote!(HashMap<u32, f32>), "HashMap<u32, f32>"),
    ] {
        let ty: Type = syn::parse2(ty).expect("a type");
        assert_eq!(pretty(&ty), text);
    }
}
