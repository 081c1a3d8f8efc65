//! Per-element math of the kernels: plain functions the GPU entry points call for each
//! thread and the host tests call on the CPU, so both run the same arithmetic.
//!
//! Each kernel has a *plain* form, the write-up's algorithm ported as it reads, and a
//! *tuned* form; both compute the same results. `sqrt` and `fma` are correctly rounded
//! on both sides (PTX `sqrt.rn.f32` / `fma.rn.f32` on the GPU, `libm` on the host), and
//! `sin`/`cos` come from the `libm` crate on both, so the GPU and the host agree bit for
//! bit.

/// Correctly rounded square root (`sqrt.rn.f32` on the GPU).
#[inline(always)]
pub fn sqrt(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::f32::math::sqrt(x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        libm::sqrtf(x)
    }
}

/// Fused multiply-add `x * y + z` with one rounding (`fma.rn.f32` on the GPU).
#[inline(always)]
pub fn fma(x: f32, y: f32, z: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::f32::math::mul_add(x, y, z)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        libm::fmaf(x, y, z)
    }
}

/// Plain matmul cell: the dot product of row `row` of `a` (`rows × aligned`) with
/// column `col` of `b` (`aligned × cols`), one fused multiply-add per product in order,
/// as the wiki's loop reads, with Rust's checked indexing.
#[inline(always)]
pub fn matmul_cell_plain(
    a: &[f32],
    b: &[f32],
    row: usize,
    col: usize,
    cols: usize,
    aligned: usize,
) -> f32 {
    let mut sum = 0.0f32;
    for k in 0..aligned {
        sum = fma(a[row * aligned + k], b[k * cols + col], sum);
    }
    sum
}

/// Products per batch of [`matmul_cell`]: a batch's loads are issued together, before
/// its multiply-adds.
pub const MATMUL_BATCH: u32 = 8;

/// Batches per step of [`matmul_cell`]'s loop. A step multiplies the batch loaded during
/// the step before, loads and multiplies `MATMUL_STEP_BATCHES - 1` more, and loads the
/// batch the next step starts with, so that batch's loads are in flight across the
/// loop's back edge.
pub const MATMUL_STEP_BATCHES: u32 = 4;

/// A batch of [`matmul_cell`]'s products: [`MATMUL_BATCH`] elements of the row and of the
/// column.
type Batch = ([f32; MATMUL_BATCH as usize], [f32; MATMUL_BATCH as usize]);

/// `p` as an address in the global state space where `LDG` on the GPU (`cvta.to.global`),
/// the form [`load`] reads. Converted once per pointer, not in every load: the same loads
/// with a conversion each ran slower on an H200.
#[inline(always)]
fn global<const LDG: bool>(p: *const f32) -> *const f32 {
    #[cfg(target_arch = "nvptx64")]
    if LDG {
        let g: *const f32;
        // SAFETY: an address conversion; nothing is read.
        unsafe {
            core::arch::asm!(
                "cvta.to.global.u64 {g}, {p};",
                p = in(reg64) p,
                g = out(reg64) g,
                options(pure, nomem, nostack),
            )
        };
        return g;
    }
    p
}

/// `*p`, through the read-only data cache where `LDG` on the GPU (`ld.global.nc`, what
/// CUDA C++'s `__ldg` emits; `p` from [`global`]), else a plain load.
///
/// # Safety
/// `p` is readable global memory, which nothing writes while the kernel runs; where
/// `LDG`, `p` is an address from [`global`] (or an offset from one).
#[inline(always)]
unsafe fn load<const LDG: bool>(p: *const f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    if LDG {
        let value: f32;
        // SAFETY: the caller's bounds; the address is a global one ([`global`]), read-only
        // while the kernel runs, so the non-coherent cache cannot hold a stale copy.
        unsafe {
            core::arch::asm!(
                "ld.global.nc.f32 {v}, [{p}];",
                p = in(reg64) p,
                v = out(reg32) value,
                options(readonly, nostack, pure),
            )
        };
        return value;
    }
    // SAFETY: the caller's bounds.
    unsafe { *p }
}

/// Load the batch whose first product is at `a_k` (row) and `b_k` (column), through the
/// read-only data cache where `LDG`.
///
/// # Safety
/// `a_k` must be readable for [`MATMUL_BATCH`] elements, and `b_k` at every `u * cols`
/// for `u < MATMUL_BATCH`, none of them written while the kernel runs.
#[inline(always)]
unsafe fn load_batch<const LDG: bool>(a_k: *const f32, b_k: *const f32, cols: usize) -> Batch {
    let mut row = [0.0f32; MATMUL_BATCH as usize];
    let mut column = [0.0f32; MATMUL_BATCH as usize];
    for u in 0..MATMUL_BATCH as usize {
        // SAFETY: the caller's bounds.
        unsafe {
            row[u] = load::<LDG>(a_k.add(u));
            column[u] = load::<LDG>(b_k.add(u * cols));
        }
    }
    (row, column)
}

/// `sum` with a batch's products added in order, one `fma` each.
#[inline(always)]
fn add_batch(
    row: &[f32; MATMUL_BATCH as usize],
    column: &[f32; MATMUL_BATCH as usize],
    mut sum: f32,
) -> f32 {
    for u in 0..MATMUL_BATCH as usize {
        sum = fma(row[u], column[u], sum);
    }
    sum
}

/// Tuned matmul cell: the same products in the same order as [`matmul_cell_plain`]
/// (so the same result, bit for bit), loaded in batches of [`MATMUL_BATCH`], each
/// batch's loads issued before its multiply-adds, and one batch loaded a step ahead
/// (see [`MATMUL_STEP_BATCHES`]). A thread's products are one chain of dependent
/// multiply-adds, so what the loop costs is how long it waits for its loads: the batch
/// loaded ahead is on its way while the step before finishes.
///
/// Written for the GPU compilers: two pointers walk the row and the column, and every
/// loop counts a 32-bit number of steps fixed before it starts (the full steps, then the
/// batches left over), so LLVM knows each trip count and unrolls only the batches. The
/// `aligned % 8` products after the last batch are one more batch, unrolled, each product
/// guarded by its index: ptxas schedules the main loop differently depending on how this
/// tail is spelled. [`matmul_cell_spelled`] gives the other spellings (another step, the
/// tail as a counted loop), which compare-kernels times beside this one.
///
/// # Safety
/// `a` must be readable for `(row + 1) * aligned` elements and `b` for
/// `(aligned - 1) * cols + col + 1` elements.
#[inline(always)]
pub unsafe fn matmul_cell(
    a: *const f32,
    b: *const f32,
    row: usize,
    col: usize,
    cols: usize,
    aligned: u32,
) -> f32 {
    // SAFETY: the caller's bounds.
    unsafe {
        matmul_cell_spelled::<MATMUL_STEP_BATCHES, true, false>(a, b, row, col, cols, aligned)
    }
}

/// [`matmul_cell`] with `STEPS` batches a step, the tail either a guarded batch
/// (`GUARDED_TAIL`) or a counted loop of single products, and every load through the
/// read-only data cache where `LDG`: the same products in the same order, spelled
/// differently for the GPU compilers.
///
/// # Safety
/// As [`matmul_cell`], and where `LDG`, nothing writes `a` or `b` while the kernel runs.
#[inline(always)]
pub unsafe fn matmul_cell_spelled<const STEPS: u32, const GUARDED_TAIL: bool, const LDG: bool>(
    a: *const f32,
    b: *const f32,
    row: usize,
    col: usize,
    cols: usize,
    aligned: u32,
) -> f32 {
    const { assert!(STEPS > 0, "a step holds a batch") };
    // SAFETY (all loads below): the caller guarantees row `row` of `a` and column `col`
    // of `b` are in bounds; `a_k` and `b_k` point at product `k` of them, and every load
    // is of a product `k < aligned`: batches start at `k = 8 j` for `j < aligned / 8`.
    // The pointers step with `wrapping_add`: after the last batch or product they may
    // point past the row's or the column's end, outside `a` or `b`; they are not read.
    let mut a_k = global::<LDG>(unsafe { a.add(row * aligned as usize) });
    let mut b_k = global::<LDG>(unsafe { b.add(col) });
    let batch = MATMUL_BATCH as usize;
    let mut sum = 0.0f32;
    let batches = aligned / MATMUL_BATCH;
    if batches > 0 {
        let (mut row, mut column) = unsafe { load_batch::<LDG>(a_k, b_k, cols) };
        a_k = a_k.wrapping_add(batch);
        b_k = b_k.wrapping_add(batch * cols);
        let after_first = batches - 1;
        for _ in 0..after_first / STEPS {
            sum = add_batch(&row, &column, sum);
            for _ in 1..STEPS {
                let (next_row, next_column) = unsafe { load_batch::<LDG>(a_k, b_k, cols) };
                sum = add_batch(&next_row, &next_column, sum);
                a_k = a_k.wrapping_add(batch);
                b_k = b_k.wrapping_add(batch * cols);
            }
            (row, column) = unsafe { load_batch::<LDG>(a_k, b_k, cols) };
            a_k = a_k.wrapping_add(batch);
            b_k = b_k.wrapping_add(batch * cols);
        }
        for _ in 0..after_first % STEPS {
            sum = add_batch(&row, &column, sum);
            (row, column) = unsafe { load_batch::<LDG>(a_k, b_k, cols) };
            a_k = a_k.wrapping_add(batch);
            b_k = b_k.wrapping_add(batch * cols);
        }
        sum = add_batch(&row, &column, sum);
    }
    if GUARDED_TAIL {
        let left = (aligned % MATMUL_BATCH) as usize;
        for u in 0..batch {
            if u < left {
                let (x, y) = unsafe { (load::<LDG>(a_k.add(u)), load::<LDG>(b_k.add(u * cols))) };
                sum = fma(x, y, sum);
            }
        }
    } else {
        for _ in 0..aligned % MATMUL_BATCH {
            sum = fma(
                unsafe { load::<LDG>(a_k) },
                unsafe { load::<LDG>(b_k) },
                sum,
            );
            a_k = a_k.wrapping_add(1);
            b_k = b_k.wrapping_add(cols);
        }
    }
    sum
}

/// Matmul cell with two pointers walking the row and the column, one product a turn: the
/// same products in the same order as [`matmul_cell_plain`], with no index arithmetic
/// and no batching (what the compiler unrolls of it is its own).
///
/// # Safety
/// As [`matmul_cell`].
#[inline(always)]
pub unsafe fn matmul_cell_walk(
    a: *const f32,
    b: *const f32,
    row: usize,
    col: usize,
    cols: usize,
    aligned: u32,
) -> f32 {
    // SAFETY: the caller guarantees row `row` of `a` and column `col` of `b` are in
    // bounds; step k reads product k < aligned, and the pointers past the last are not
    // read.
    let mut a_k = unsafe { a.add(row * aligned as usize) };
    let mut b_k = unsafe { b.add(col) };
    let mut sum = 0.0f32;
    for _ in 0..aligned {
        sum = fma(unsafe { *a_k }, unsafe { *b_k }, sum);
        a_k = a_k.wrapping_add(1);
        b_k = b_k.wrapping_add(cols);
    }
    sum
}

/// Safe matmul cell: the same products in the same order as [`matmul_cell_plain`], with
/// no `unsafe`: `pairs` is row `row` of `a` zipped with column `col` of `b`, both taken from
/// `nvptx_kernel::view::Matrix` views, whose lengths were checked once when they were
/// paired, folded with its loads issued ahead of their use
/// (`nvptx_kernel::view::ZipExact::fold_ahead`, in the tuned cell's batches and steps).
#[inline(always)]
pub fn matmul_cell_safe(pairs: nvptx_kernel::view::ZipExact<'_, '_, f32, f32>) -> f32 {
    pairs.fold_ahead::<{ MATMUL_BATCH as usize }, { MATMUL_STEP_BATCHES as usize }, _>(
        0.0,
        |sum, x, y| fma(x, y, sum),
    )
}

/// Safe matmul cell as a plain fold of the zipped pairs: a counted loop over two pointers
/// with no check inside (its counter 32 bits wide where the length fits), which LLVM
/// unrolls as it would the unchecked C++ loop, one load of each a product.
#[inline(always)]
pub fn matmul_cell_safe_zip(pairs: nvptx_kernel::view::ZipExact<'_, '_, f32, f32>) -> f32 {
    pairs.fold(0.0, |sum, (x, y)| fma(*x, *y, sum))
}

/// Plain AddKernel element: the Handbook's `volatile int value`, as Rust says it: the
/// running value lives in a stack slot read and written with volatile accesses, so the
/// compiler cannot fold the loop into one multiply. LLVM keeps the slot in local memory
/// (one store per cycle), where NVVM keeps a `volatile` scalar in a register.
#[inline(always)]
pub fn add_repeatedly_volatile(value: i32, add_value: i32, cycles: i32) -> i32 {
    let mut slot = value;
    let slot = &mut slot as *mut i32;
    for _ in 0..cycles {
        // SAFETY: `slot` points at a live local.
        unsafe { slot.write_volatile(slot.read_volatile().wrapping_add(add_value)) };
    }
    // SAFETY: as above.
    unsafe { slot.read_volatile() }
}

/// AddKernel element (safe form): add `add_value` to `value`, `cycles` times,
/// with C's two's-complement wrap-around. Each sum passes through
/// [`nvptx_kernel::hint::opaque`], which keeps it in a register while hiding it from the
/// optimizer (as `asm volatile("" : "+r"(value))` does in the CUDA C++ twin), so the loop
/// is not folded into one multiply and the run time grows linearly with `cycles`.
#[inline(always)]
pub fn add_repeatedly(value: i32, add_value: i32, cycles: i32) -> i32 {
    let mut value = value;
    for _ in 0..cycles {
        value = nvptx_kernel::hint::opaque(value.wrapping_add(add_value));
    }
    value
}

/// Tuned AddKernel element: [`add_repeatedly`]'s sums, each behind the same barrier, eight
/// a step and then the rest straight-line: four, two and one, by the bits of `cycles`.
/// LLVM unrolls `add_repeatedly`'s loop eight times and leaves the up to seven sums after
/// the last eight to a loop of one sum a turn, which made the tuned kernel slower than its
/// CUDA C++ twin at counts with such a rest (5, 7, 31); NVVM leaves the C++ loop's rest
/// straight-line.
#[inline(always)]
pub fn add_repeatedly_unrolled(value: i32, add_value: i32, cycles: i32) -> i32 {
    add_repeatedly_by::<8>(value, add_value, cycles)
}

/// [`add_repeatedly`]'s sums, each behind the same barrier, `STEP` a step (a power of two
/// up to 128) and then the rest straight-line, by the bits of `cycles` below `STEP`.
#[inline(always)]
pub fn add_repeatedly_by<const STEP: i32>(value: i32, add_value: i32, cycles: i32) -> i32 {
    const {
        assert!(
            STEP > 0 && STEP <= 128 && STEP & (STEP - 1) == 0,
            "a power of two"
        )
    };
    let add = |value: i32| nvptx_kernel::hint::opaque(value.wrapping_add(add_value));
    let mut value = value;
    if cycles > 0 {
        let mut steps = cycles / STEP;
        while steps != 0 {
            for _ in 0..STEP {
                value = add(value);
            }
            steps -= 1;
        }
        value = add_rest_by_bits::<STEP>(value, add_value, cycles);
    }
    value
}

/// [`add_repeatedly`]'s sums, each behind the same barrier, `STEP` a step (a power of two
/// up to 128) and two steps a turn (an odd step first), then the rest straight-line by the
/// bits of `cycles` below `STEP`. The sums are one chain, so ptxas fuses them in pairs
/// (`x + 2a`) into `IMAD`s and `LEA`s, which issue to two different pipes: in a turn of
/// 256 sums (`STEP` 128) it splits them about evenly between the two, where in the 64 or
/// 128 sums a turn of [`add_repeatedly_by`] it gives the `IMAD` pipe two in three, and
/// the kernel waits on that pipe (measured with ptxas 13.0 on the PTX for `sm_90`).
#[inline(always)]
pub fn add_repeatedly_in_pairs<const STEP: i32>(value: i32, add_value: i32, cycles: i32) -> i32 {
    const {
        assert!(
            STEP > 0 && STEP <= 128 && STEP & (STEP - 1) == 0,
            "a power of two"
        )
    };
    let add = |value: i32| nvptx_kernel::hint::opaque(value.wrapping_add(add_value));
    let mut value = value;
    if cycles > 0 {
        let steps = cycles / STEP;
        if steps % 2 != 0 {
            for _ in 0..STEP {
                value = add(value);
            }
        }
        let mut pairs = steps / 2;
        while pairs != 0 {
            for _ in 0..2 * STEP {
                value = add(value);
            }
            pairs -= 1;
        }
        value = add_rest_by_bits::<STEP>(value, add_value, cycles);
    }
    value
}

/// The sums of [`add_repeatedly_by`] and [`add_repeatedly_in_pairs`] after their full
/// steps: straight-line, by the bits of `cycles` below `STEP`, each behind the same barrier.
#[inline(always)]
fn add_rest_by_bits<const STEP: i32>(value: i32, add_value: i32, cycles: i32) -> i32 {
    let mut value = value;
    let mut bit = STEP / 2;
    while bit > 0 {
        if cycles & bit != 0 {
            for _ in 0..bit {
                value = nvptx_kernel::hint::opaque(value.wrapping_add(add_value));
            }
        }
        bit /= 2;
    }
    value
}

/// The expected result of AddKernel, in closed form: `value + add_value·cycles` with
/// wrap-around (negative `cycles` run no iterations, as the C loop does).
pub fn add_repeatedly_closed_form(value: i32, add_value: i32, cycles: i32) -> i32 {
    value.wrapping_add(add_value.wrapping_mul(cycles.max(0)))
}

/// Plain sincos element: `a + sqrt(sin(x)² + cos(x)²)` with `x = i as f32`, sine and
/// cosine computed separately, as the blog's code does.
#[inline(always)]
pub fn sincos_element_plain(a: f32, i: u32) -> f32 {
    let x = i as f32;
    sincos_from(a, libm::sinf(x), libm::cosf(x))
}

/// Tuned sincos element: the same with sine and cosine from one `sincosf`, which reduces
/// the argument once.
#[inline(always)]
pub fn sincos_element(a: f32, i: u32) -> f32 {
    sincos_of(a, i as f32)
}

/// `a + sqrt(sin(x)² + cos(x)²)` for any `x`: the sincos element math, for kernels that
/// take `x` from their input rather than from the index.
#[inline(always)]
pub fn sincos_of(a: f32, x: f32) -> f32 {
    let (s, c) = libm::sincosf(x);
    sincos_from(a, s, c)
}

/// `a + sqrt(s² + c²)` from a sine `s` and a cosine `c`, one `fma` and one correctly
/// rounded square root: what every sincos kernel does with its math library's sine and
/// cosine, so a host given the same sine and cosine gets the same bits.
#[inline(always)]
pub fn sincos_from(a: f32, s: f32, c: f32) -> f32 {
    a + sqrt(fma(s, s, c * c))
}
