//! The kernel modules the runtime loads: the Rust kernels built from `kernels-rs/` by
//! `build.rs` (embedded here) or their CUDA C++ twins, each kernel a [`Function`] typed
//! by its declaration's parameters.
use std::ffi::{CString, c_void};
use std::marker::PhantomData;

use cudarc::driver::{result, sys};
use kernels_rs as k;
use nvptx_kernel::Kernel;
use streamlab_results::saved::{KernelForm, KernelSet};

use super::RuntimeError;

/// PTX of the Rust kernels.
pub const RUST_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// A loaded kernel entry, typed by its parameters (`P`: the declaration's `Args`), so a
/// launch with the wrong arguments does not compile. Kernels with the same parameters
/// (a plain form and its tuned form) share the type.
pub struct Function<P> {
    pub(super) raw: sys::CUfunction,
    pub(super) name: &'static str,
    pub(super) ptx_params: usize,
    _params: PhantomData<fn(P)>,
}

impl<P> Clone for Function<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Function<P> {}

impl<P> Function<P> {
    pub fn name(&self) -> &'static str {
        self.name
    }
}

type Args<K> = <K as Kernel>::Args;

/// Every kernel of one module (the Rust set, or the CUDA C++ twins).
#[derive(Clone, Copy)]
pub struct Kernels {
    pub set: KernelSet,
    pub fill: Function<Args<k::fill>>,
    pub matmul_plain: Function<Args<k::matmul>>,
    pub matmul: Function<Args<k::matmul>>,
    pub add_kernel_plain: Function<Args<k::add_kernel>>,
    pub add_kernel: Function<Args<k::add_kernel>>,
    pub sincos_plain: Function<Args<k::sincos>>,
    pub sincos: Function<Args<k::sincos>>,
    pub empty: Function<Args<k::empty>>,
    pub spin: Function<Args<k::spin>>,
}

impl Kernels {
    /// Load a PTX module holding every kernel of `kernels_rs::KERNELS`.
    pub fn load(ptx: &str, set: KernelSet) -> Result<Kernels, RuntimeError> {
        let module = Module::load(ptx)?;
        Ok(Kernels {
            set,
            fill: module.function::<k::fill>()?,
            matmul_plain: module.function::<k::matmul_plain>()?,
            matmul: module.function::<k::matmul>()?,
            add_kernel_plain: module.function::<k::add_kernel_plain>()?,
            add_kernel: module.function::<k::add_kernel>()?,
            sincos_plain: module.function::<k::sincos_plain>()?,
            sincos: module.function::<k::sincos>()?,
            empty: module.function::<k::empty>()?,
            spin: module.function::<k::spin>()?,
        })
    }

    /// matmul in `form`.
    pub fn matmul_in(&self, form: KernelForm) -> Function<Args<k::matmul>> {
        match form {
            KernelForm::Plain => self.matmul_plain,
            KernelForm::Tuned => self.matmul,
        }
    }

    /// AddKernel in `form`.
    pub fn add_kernel_in(&self, form: KernelForm) -> Function<Args<k::add_kernel>> {
        match form {
            KernelForm::Plain => self.add_kernel_plain,
            KernelForm::Tuned => self.add_kernel,
        }
    }

    /// sincos in `form`.
    pub fn sincos_in(&self, form: KernelForm) -> Function<Args<k::sincos>> {
        match form {
            KernelForm::Plain => self.sincos_plain,
            KernelForm::Tuned => self.sincos,
        }
    }
}

/// A loaded PTX module; it stays loaded for the life of the process.
pub struct Module {
    raw: sys::CUmodule,
}

impl Module {
    /// Load a PTX text (JIT-compiled by the driver for this GPU).
    pub fn load(ptx: &str) -> Result<Module, RuntimeError> {
        let image = CString::new(ptx)
            .map_err(|_| RuntimeError::Module("the PTX contains a NUL byte".into()))?;
        // SAFETY: `image` is a NUL-terminated PTX text.
        let raw = unsafe { result::module::load_data(image.as_ptr() as *const c_void) }
            .map_err(|err| RuntimeError::Module(super::describe(&err)))?;
        Ok(Module { raw })
    }

    /// Kernel `K` by its declared name, typed by its declared parameters.
    pub fn function<K: Kernel>(&self) -> Result<Function<K::Args>, RuntimeError> {
        let sig = K::SIGNATURE;
        // SAFETY: the module was built from (or checked against) `K`'s declaration.
        unsafe { self.raw_function(sig.name, sig.ptx_params().count()) }
    }

    /// The entry `name`, typed as taking `P`.
    ///
    /// # Safety
    /// The entry must take exactly the parameters `P` describes, `ptx_params` of them.
    pub unsafe fn raw_function<P>(
        &self,
        name: &'static str,
        ptx_params: usize,
    ) -> Result<Function<P>, RuntimeError> {
        let cname = CString::new(name)
            .map_err(|_| RuntimeError::Module(format!("kernel name {name:?} has a NUL")))?;
        // SAFETY: the module is loaded.
        let raw = unsafe { result::module::get_function(self.raw, cname) }
            .map_err(|err| RuntimeError::Module(format!("{name}: {}", super::describe(&err))))?;
        Ok(Function {
            raw,
            name,
            ptx_params,
            _params: PhantomData,
        })
    }
}

/// A loaded kernel entry whose parameters are known only at run time (a user's kernel,
/// checked against the shape it must have before it is loaded).
pub struct DynamicFunction {
    pub(super) raw: sys::CUfunction,
    pub(super) name: String,
    pub(super) ptx_params: usize,
}

impl DynamicFunction {
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Module {
    /// The entry `name` taking `ptx_params` parameters.
    pub fn dynamic_function(
        &self,
        name: &str,
        ptx_params: usize,
    ) -> Result<DynamicFunction, RuntimeError> {
        let cname = CString::new(name)
            .map_err(|_| RuntimeError::Module(format!("kernel name {name:?} has a NUL")))?;
        // SAFETY: the module is loaded.
        let raw = unsafe { result::module::get_function(self.raw, cname) }
            .map_err(|err| RuntimeError::Module(format!("{name}: {}", super::describe(&err))))?;
        Ok(DynamicFunction {
            raw,
            name: name.to_owned(),
            ptx_params,
        })
    }
}

/// The `.target` line of a PTX module (e.g. `sm_90`).
pub fn ptx_target(ptx: &str) -> &str {
    ptx.lines()
        .find_map(|line| line.trim().strip_prefix(".target"))
        .map(|rest| rest.split(',').next().unwrap_or(rest).trim())
        .unwrap_or("unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_ptx_has_every_declared_kernel_and_the_default_target() {
        nvptx_builder::ptx::check(RUST_PTX, ptx_target(RUST_PTX), &kernels_rs::KERNELS)
            .expect("the embedded PTX matches the declarations");
        assert!(ptx_target(RUST_PTX).starts_with("sm_"));
        assert_eq!(ptx_target(".version 7.8\n.target sm_80\n"), "sm_80");
        assert_eq!(ptx_target("nothing"), "unknown");
    }
}
