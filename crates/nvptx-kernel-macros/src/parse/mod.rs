//! Reading a `#[kernel]` function: the checks that it can be a PTX entry point, and each
//! parameter's name, kind and scalar as `nvptx_kernel::ParamKind` describes them.
//!
//! Every problem found becomes one error spanning the offending tokens; all of them are
//! reported together.
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{
    Attribute, FnArg, Ident, Item, ItemFn, Pat, PointerMutability, ReturnType, Safety, Stmt, Token,
    Type, Visibility,
};

/// A scalar a parameter or slice element may have: `nvptx_kernel::Scalar`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    Isize,
    Usize,
    F32,
    F64,
}

impl Scalar {
    /// Every scalar, in `nvptx_kernel::Scalar`'s order.
    const ALL: [Scalar; 12] = [
        Scalar::I8,
        Scalar::U8,
        Scalar::I16,
        Scalar::U16,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::Isize,
        Scalar::Usize,
        Scalar::F32,
        Scalar::F64,
    ];

    /// The primitive type's name, as written in Rust.
    pub(crate) fn rust_name(self) -> &'static str {
        match self {
            Scalar::I8 => "i8",
            Scalar::U8 => "u8",
            Scalar::I16 => "i16",
            Scalar::U16 => "u16",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::Isize => "isize",
            Scalar::Usize => "usize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// The name of the matching `nvptx_kernel::Scalar` variant.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Scalar::I8 => "I8",
            Scalar::U8 => "U8",
            Scalar::I16 => "I16",
            Scalar::U16 => "U16",
            Scalar::I32 => "I32",
            Scalar::U32 => "U32",
            Scalar::I64 => "I64",
            Scalar::U64 => "U64",
            Scalar::Isize => "Isize",
            Scalar::Usize => "Usize",
            Scalar::F32 => "F32",
            Scalar::F64 => "F64",
        }
    }

    /// Whether a kernel may take the scalar by value: PTX parameters are 32 or 64 bits.
    fn by_value(self) -> bool {
        !matches!(self, Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16)
    }
}

/// How a kernel takes a parameter: `nvptx_kernel::ParamKind` without its scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The scalar by value.
    Value,
    /// `&[T]`, passed as a pointer and a length.
    Slice,
    /// `&mut [T]`, passed as a pointer and a length.
    SliceMut,
    /// `*const T`.
    ConstPtr,
    /// `*mut T`.
    MutPtr,
}

impl Kind {
    /// The name of the matching `nvptx_kernel::ParamKind` variant.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Kind::Value => "Value",
            Kind::Slice => "Slice",
            Kind::SliceMut => "SliceMut",
            Kind::ConstPtr => "ConstPtr",
            Kind::MutPtr => "MutPtr",
        }
    }
}

/// One parameter of a kernel.
pub(crate) struct KernelParam {
    /// `mut` on the binding, kept for the body's sake.
    pub(crate) mutability: Option<Token![mut]>,
    /// The name, as the body uses it.
    pub(crate) ident: Ident,
    pub(crate) kind: Kind,
    pub(crate) scalar: Scalar,
}

/// A function `#[kernel]` accepted.
pub(crate) struct KernelFn {
    /// The function's attributes (without `#[kernel]`), doc comments included.
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) ident: Ident,
    pub(crate) params: Vec<KernelParam>,
    /// The body, kept as written.
    pub(crate) stmts: Vec<Stmt>,
}

/// The types a kernel parameter may have, for error messages.
const SUPPORTED: &str = "use &[T], &mut [T], *const T, *mut T (T a primitive number) or \
                         i32, u32, i64, u64, isize, usize, f32, f64";

/// Read `#[kernel]`'s arguments (`attr`, which must be empty) and the item it is on.
pub(crate) fn parse_kernel(attr: TokenStream, item: TokenStream) -> syn::Result<KernelFn> {
    if !attr.is_empty() {
        return Err(syn::Error::new_spanned(
            attr,
            "#[kernel] takes no arguments: write `#[kernel]` alone",
        ));
    }
    match syn::parse2::<Item>(item)? {
        Item::Fn(item) => check_fn(item),
        other => Err(syn::Error::new_spanned(
            other,
            "#[kernel] applies to functions only: put it on `pub unsafe fn name(...) { ... }`",
        )),
    }
}

/// Collects errors so that all of a function's problems are reported at once.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }
}

/// Check everything about a kernel function and read its parameters.
pub(crate) fn check_fn(item: ItemFn) -> syn::Result<KernelFn> {
    item.modifiers.require_empty()?;
    let name = item.sig.ident.unraw();
    let mut errors = Errors::default();
    check_signature(&item, &name, &mut errors);
    let sig = &item.sig;
    let mut params: Vec<KernelParam> = Vec::new();
    for arg in &sig.inputs {
        match check_param(arg, &name) {
            Ok(param) => {
                if params
                    .iter()
                    .any(|p| p.ident.unraw() == param.ident.unraw())
                {
                    errors.spanned(
                        &param.ident,
                        format!(
                            "#[kernel] parameter `{}` is declared twice: rename one of them",
                            param.ident.unraw()
                        ),
                    );
                }
                params.push(param);
            }
            Err(error) => errors.push(error),
        }
    }

    match errors.0 {
        Some(error) => Err(error),
        None => Ok(KernelFn {
            attrs: item.attrs,
            ident: item.sig.ident,
            params,
            stmts: item.block.stmts,
        }),
    }
}

/// Every error of `item`'s signature and attributes beside its parameters: a kernel is a
/// plain `pub unsafe fn`, neither const, async, generic nor variadic, with no ABI, return
/// type or export attribute of its own.
fn check_signature(item: &ItemFn, name: &proc_macro2::Ident, errors: &mut Errors) {
    let sig = &item.sig;
    if !matches!(item.vis, Visibility::Public(_)) {
        let at = match &item.vis {
            Visibility::Inherited => sig.ident.to_token_stream(),
            vis => vis.to_token_stream(),
        };
        errors.spanned(
            at,
            format!(
                "#[kernel] function `{name}` must be plain `pub`: a kernel is an exported PTX \
                 entry, write `pub unsafe fn {name}`"
            ),
        );
    }
    if !matches!(sig.safety, Safety::Unsafe(_)) {
        let at = match &sig.safety {
            Safety::Safe(safe) => safe.to_token_stream(),
            _ => sig.ident.to_token_stream(),
        };
        errors.spanned(
            at,
            format!(
                "#[kernel] function `{name}` must be `unsafe`: its launches must uphold what it \
                 assumes of its pointers and lengths, write `pub unsafe fn {name}`"
            ),
        );
    }
    if let Some(constness) = &sig.constness {
        errors.spanned(
            constness,
            format!("#[kernel] function `{name}` is `const`: a kernel runs only on the GPU, remove `const`"),
        );
    }
    if let Some(asyncness) = &sig.asyncness {
        errors.spanned(
            asyncness,
            format!(
                "#[kernel] function `{name}` is `async`: a kernel cannot be async, remove `async`"
            ),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(
            abi,
            format!(
                "#[kernel] function `{name}` names an ABI: #[kernel] makes it \
                 `extern \"gpu-kernel\"` itself, remove `{}`",
                pretty(abi)
            ),
        );
    }
    if !sig.generics.params.is_empty() {
        errors.spanned(
            &sig.generics,
            format!(
                "#[kernel] function `{name}` is generic: a PTX entry has one concrete \
                 signature, remove the generic parameters"
            ),
        );
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.spanned(
            where_clause,
            format!(
                "#[kernel] function `{name}` has a where clause: a PTX entry has one concrete \
                 signature, remove it"
            ),
        );
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        errors.spanned(
            &sig.output,
            format!(
                "#[kernel] function `{name}` returns `{}`: a kernel returns nothing, write \
                 results through a `&mut [T]` or `*mut T` parameter",
                pretty(ty)
            ),
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(
            variadic,
            format!(
                "#[kernel] function `{name}` is variadic: a PTX entry has a fixed parameter \
                 list, remove `...`"
            ),
        );
    }
    check_exports(item, name, errors);
}

/// An error for each attribute of `item` that exports it itself: #[kernel] does.
fn check_exports(item: &ItemFn, name: &proc_macro2::Ident, errors: &mut Errors) {
    for attr in &item.attrs {
        if let Some(export) = export_attr(attr) {
            errors.spanned(
                attr,
                format!(
                    "#[kernel] function `{name}` has #[{export}]: #[kernel] exports it as \
                     `{name}` itself, remove the attribute"
                ),
            );
        }
    }
}

/// `no_mangle` or `export_name` if the attribute is one of them, plain or in `unsafe(...)`.
fn export_attr(attr: &Attribute) -> Option<&'static str> {
    let named = |path: &syn::Path| {
        ["no_mangle", "export_name"]
            .into_iter()
            .find(|name| path.is_ident(name))
    };
    if attr.path().is_ident("unsafe") {
        let inner: syn::Meta = attr.parse_args().ok()?;
        named(inner.path())
    } else {
        named(attr.path())
    }
}

/// Check one parameter of kernel `kernel` and read its name, kind and scalar.
pub(crate) fn check_param(arg: &FnArg, kernel: &Ident) -> syn::Result<KernelParam> {
    let typed = match arg {
        FnArg::Receiver(receiver) => {
            return Err(syn::Error::new_spanned(
                receiver,
                format!(
                    "#[kernel] function `{kernel}` takes `self`: a kernel is a free function, \
                     remove the receiver"
                ),
            ));
        }
        FnArg::Typed(typed) => typed,
    };
    let (mutability, ident) = match &*typed.pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
            (pat.mutability, pat.ident.clone())
        }
        pat => {
            return Err(syn::Error::new_spanned(
                pat,
                format!(
                    "#[kernel] parameter `{}` is a pattern, not a name: write `name: Type` and \
                     destructure in the body",
                    pretty(pat)
                ),
            ));
        }
    };
    if let Some(attr) = typed.attrs.first() {
        return Err(syn::Error::new_spanned(
            attr,
            format!(
                "#[kernel] parameter `{}` has an attribute: a kernel's parameters are fixed, \
                 put lint attributes on the function instead",
                ident.unraw()
            ),
        ));
    }
    let Some((kind, scalar)) = param_type(&typed.ty) else {
        return Err(syn::Error::new_spanned(
            typed,
            format!(
                "#[kernel] parameter `{}` has type `{}`, which a kernel cannot take: {SUPPORTED}",
                ident.unraw(),
                pretty(&typed.ty)
            ),
        ));
    };
    Ok(KernelParam {
        mutability,
        ident,
        kind,
        scalar,
    })
}

/// How a kernel takes a parameter of type `ty`, if it can: `&[T]`, `&mut [T]` (any
/// lifetime), `*const T`, `*mut T` for every scalar `T`, and the 32- and 64-bit scalars
/// by value.
pub(crate) fn param_type(ty: &Type) -> Option<(Kind, Scalar)> {
    match peel(ty) {
        Type::Reference(reference) => {
            let Type::Slice(slice) = peel(&reference.elem) else {
                return None;
            };
            let kind = match reference.mutability {
                Some(_) => Kind::SliceMut,
                None => Kind::Slice,
            };
            Some((kind, scalar(&slice.elem)?))
        }
        Type::Ptr(ptr) => {
            let kind = match ptr.mutability {
                PointerMutability::Const(_) => Kind::ConstPtr,
                PointerMutability::Mut(_) => Kind::MutPtr,
            };
            Some((kind, scalar(&ptr.elem)?))
        }
        other => scalar(other)
            .filter(|scalar| scalar.by_value())
            .map(|scalar| (Kind::Value, scalar)),
    }
}

/// The scalar a type names, if it is a primitive number written as its bare name.
fn scalar(ty: &Type) -> Option<Scalar> {
    let Type::Path(path) = peel(ty) else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let ident = path.path.get_ident()?;
    Scalar::ALL
        .into_iter()
        .find(|scalar| ident == scalar.rust_name())
}

/// `ty` without parentheses or the invisible groups `macro_rules!` puts around `$t:ty`.
fn peel(ty: &Type) -> &Type {
    match ty {
        Type::Paren(paren) => peel(&paren.elem),
        Type::Group(group) => peel(&group.elem),
        ty => ty,
    }
}

/// Tokens as a person writes them (`Vec<f32>`, `&mut [f32]`), for error messages.
pub(crate) fn pretty(tokens: &impl ToTokens) -> String {
    let mut text = tokens.to_token_stream().to_string();
    for (from, to) in [
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ::", "::"),
        (":: ", "::"),
        ("& ", "&"),
        ("* ", "*"),
        ("[ ", "["),
        (" ]", "]"),
        ("( ", "("),
        (" )", ")"),
        (" ,", ","),
    ] {
        text = text.replace(from, to);
    }
    text
}

#[cfg(test)]
mod tests;
