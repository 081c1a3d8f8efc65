//! Safe views for kernel bodies: each checks a shape once, when it is made, and then reads
//! or writes its elements with no check per element, so a kernel written with them needs
//! no `unsafe` and pays no bounds check in its hot loop.
//!
//! * [`Matrix`]: a row-major `rows × cols` matrix over a slice. [`Matrix::row`] is a slice
//!   and [`Matrix::column`] a [`Strided`] iterator, each checked once against the shape.
//! * [`MatrixMut`]: the same over a writable slice, for the thread's own output cell or row.
//! * [`Strided`]: `len` elements `stride` apart (a slice is one with stride 1).
//!   [`zip_exact`] pairs two of equal length (slices or strided), checked once; [`ZipExact::batched`]
//!   hands the pairs out `N` at a time, as arrays, for a kernel that issues a batch of
//!   loads before it uses them.
//! * [`GridStride`]: the grid-stride loop over an output and an input, zipped: the thread's
//!   elements `first, first + stride, …`, each a distinct `&mut`. Threads with distinct
//!   `first` below one `stride` (as `GridStride::this_thread` gives them on the GPU) write disjoint
//!   elements: one writer per element.
//!
//! Each type's `unsafe` is a few lines with its proof beside it. The proofs rest on one
//! invariant per type, stated on the type and established by its constructor; the host
//! tests in `tests/view.rs` check the index math against plain indexing.
//!
//! ```
//! use nvptx_kernel::view::{Matrix, zip_exact};
//!
//! let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3
//! let b = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0]; // 3 × 2
//! let (a, b) = (Matrix::new(&a, 2, 3).unwrap(), Matrix::new(&b, 3, 2).unwrap());
//! // c[1][0] = row 1 of a · column 0 of b, the lengths checked once by zip_exact
//! let pairs = zip_exact(a.row(1).unwrap(), b.column(0).unwrap()).unwrap();
//! assert_eq!(pairs.fold(0.0, |sum, (x, y)| sum + x * y), 4.0 + 6.0);
//! ```
use core::marker::PhantomData;

/// A row-major `rows × cols` matrix over a slice of at least `rows * cols` elements.
#[derive(Debug, Clone, Copy)]
pub struct Matrix<'a, T> {
    /// Exactly `rows * cols` elements (the invariant every method relies on).
    data: &'a [T],
    rows: usize,
    cols: usize,
}

impl<'a, T> Matrix<'a, T> {
    /// The matrix in the first `rows * cols` elements of `data`; `None` if `data` is
    /// shorter or the product overflows.
    #[inline(always)]
    pub fn new(data: &'a [T], rows: usize, cols: usize) -> Option<Matrix<'a, T>> {
        let data = data.get(..rows.checked_mul(cols)?)?;
        Some(Matrix { data, rows, cols })
    }

    /// Rows.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns: each row's length.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Row `i` (`cols` elements), or `None` if `i >= rows`.
    #[inline(always)]
    pub fn row(&self, i: usize) -> Option<&'a [T]> {
        if i >= self.rows {
            return None;
        }
        // SAFETY: i < rows, so (i + 1) * cols <= rows * cols == data.len(), and the product
        // cannot overflow since rows * cols did not.
        Some(unsafe { self.data.get_unchecked(i * self.cols..(i + 1) * self.cols) })
    }

    /// Column `j` (`rows` elements, `cols` apart), or `None` if `j >= cols`.
    #[inline(always)]
    pub fn column(&self, j: usize) -> Option<Strided<'a, T>> {
        if j >= self.cols {
            return None;
        }
        // Strided's invariant: element k < rows is at j + k * cols <= j + (rows - 1) * cols
        // < rows * cols == data.len(), inside `data`, borrowed for 'a.
        Some(Strided {
            next: self.data.as_ptr().wrapping_add(j),
            len: self.rows,
            stride: self.cols,
            data: PhantomData,
        })
    }
}

/// A row-major `rows × cols` matrix over a writable slice: the thread's own output cell or
/// row, through `&mut self`, so no two of them are live at once.
#[derive(Debug)]
pub struct MatrixMut<'a, T> {
    /// Exactly `rows * cols` elements.
    data: &'a mut [T],
    rows: usize,
    cols: usize,
}

impl<'a, T> MatrixMut<'a, T> {
    /// As [`Matrix::new`].
    #[inline(always)]
    pub fn new(data: &'a mut [T], rows: usize, cols: usize) -> Option<MatrixMut<'a, T>> {
        let data = data.get_mut(..rows.checked_mul(cols)?)?;
        Some(MatrixMut { data, rows, cols })
    }

    /// Cell `(row, col)`, or `None` outside the matrix.
    #[inline(always)]
    pub fn cell_mut(&mut self, row: usize, col: usize) -> Option<&mut T> {
        if row >= self.rows || col >= self.cols {
            return None;
        }
        // SAFETY: row * cols + col <= (rows - 1) * cols + cols - 1 < rows * cols == len.
        Some(unsafe { self.data.get_unchecked_mut(row * self.cols + col) })
    }

    /// Row `i`, or `None` if `i >= rows`.
    #[inline(always)]
    pub fn row_mut(&mut self, i: usize) -> Option<&mut [T]> {
        if i >= self.rows {
            return None;
        }
        // SAFETY: as in Matrix::row.
        Some(unsafe {
            self.data
                .get_unchecked_mut(i * self.cols..(i + 1) * self.cols)
        })
    }
}

/// `len` shared elements `stride` apart: a matrix's column, or a slice's elements
/// (`Strided::from(slice)`, stride 1). Iterates with no bounds check.
#[derive(Debug, Clone)]
pub struct Strided<'a, T> {
    /// The invariant: for every k < len, `next.wrapping_add(k * stride)` points at an
    /// element borrowed for 'a. Past the last element `next` may point anywhere and is
    /// never read.
    next: *const T,
    len: usize,
    stride: usize,
    data: PhantomData<&'a T>,
}

impl<'a, T> From<&'a [T]> for Strided<'a, T> {
    /// The slice's elements in order.
    #[inline(always)]
    fn from(slice: &'a [T]) -> Strided<'a, T> {
        // The invariant: element k < len is slice[k].
        Strided {
            next: slice.as_ptr(),
            len: slice.len(),
            stride: 1,
            data: PhantomData,
        }
    }
}

impl<'a, T> Strided<'a, T> {
    /// The pairs of `self` and `other`, element by element, if the two have the same
    /// length (`None` if not): one check here instead of one per step.
    #[inline(always)]
    pub fn zip_exact<'b, U>(
        self,
        other: impl Into<Strided<'b, U>>,
    ) -> Option<ZipExact<'a, 'b, T, U>> {
        let other = other.into();
        (self.len == other.len).then_some(ZipExact { a: self, b: other })
    }
}

/// `a` and `b` paired element by element if they have the same length (`None` if not),
/// each a slice or a [`Strided`]: [`Strided::zip_exact`] for either.
#[inline(always)]
pub fn zip_exact<'a, 'b, T, U>(
    a: impl Into<Strided<'a, T>>,
    b: impl Into<Strided<'b, U>>,
) -> Option<ZipExact<'a, 'b, T, U>> {
    a.into().zip_exact(b)
}

impl<'a, T> Iterator for Strided<'a, T> {
    type Item = &'a T;

    #[inline(always)]
    fn next(&mut self) -> Option<&'a T> {
        if self.len == 0 {
            return None;
        }
        // SAFETY: len > 0, so `next` is element 0 of the invariant, valid for 'a.
        let item = unsafe { &*self.next };
        self.len -= 1;
        // The invariant holds for the rest: their k shifts down by one.
        self.next = self.next.wrapping_add(self.stride);
        Some(item)
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }

    /// A loop counting `len` steps (what `sum`, `fold` and `for_each` run): one counter,
    /// one pointer, nothing else tested per step. The counter is 32 bits wide where `len`
    /// fits (one instruction a step on the GPU, where a 64-bit count takes two).
    #[inline(always)]
    fn fold<B, F: FnMut(B, &'a T) -> B>(self, init: B, mut f: F) -> B {
        let mut acc = init;
        let mut next = self.next;
        macro_rules! steps {
            ($len:expr) => {
                for _ in 0..$len {
                    // SAFETY: step k reads element k < len of the invariant.
                    acc = f(acc, unsafe { &*next });
                    next = next.wrapping_add(self.stride);
                }
            };
        }
        match u32::try_from(self.len) {
            Ok(len) => steps!(len),
            Err(_) => steps!(self.len),
        }
        acc
    }
}

impl<T> ExactSizeIterator for Strided<'_, T> {}

/// Two [`Strided`] of equal length, paired element by element: one count for both.
#[derive(Debug, Clone)]
pub struct ZipExact<'a, 'b, T, U> {
    /// The invariant: `a.len == b.len`.
    a: Strided<'a, T>,
    b: Strided<'b, U>,
}

impl<'a, 'b, T, U> Iterator for ZipExact<'a, 'b, T, U> {
    type Item = (&'a T, &'b U);

    #[inline(always)]
    fn next(&mut self) -> Option<(&'a T, &'b U)> {
        if self.a.len == 0 {
            return None;
        }
        // SAFETY: a.len == b.len > 0: element 0 of each is valid (Strided's invariant).
        let pair = unsafe { (&*self.a.next, &*self.b.next) };
        self.a.len -= 1;
        self.b.len -= 1;
        self.a.next = self.a.next.wrapping_add(self.a.stride);
        self.b.next = self.b.next.wrapping_add(self.b.stride);
        Some(pair)
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.a.len, Some(self.a.len))
    }

    /// As [`Strided`]'s: one counter for both, 32 bits wide where the length fits.
    #[inline(always)]
    fn fold<B, F: FnMut(B, (&'a T, &'b U)) -> B>(self, init: B, mut f: F) -> B {
        let mut acc = init;
        let (mut a, mut b) = (self.a.next, self.b.next);
        macro_rules! steps {
            ($len:expr) => {
                for _ in 0..$len {
                    // SAFETY: step k reads element k < a.len == b.len of both invariants.
                    acc = f(acc, unsafe { (&*a, &*b) });
                    a = a.wrapping_add(self.a.stride);
                    b = b.wrapping_add(self.b.stride);
                }
            };
        }
        match u32::try_from(self.a.len) {
            Ok(len) => steps!(len),
            Err(_) => steps!(self.a.len),
        }
        acc
    }
}

impl<T, U> ExactSizeIterator for ZipExact<'_, '_, T, U> {}

impl<'a, 'b, T: Copy, U: Copy> ZipExact<'a, 'b, T, U> {
    /// The pairs `N` at a time, each batch two arrays read before the batch is handed out
    /// (so a kernel has `2 N` loads in flight), and the `len % N` pairs left over.
    #[inline(always)]
    pub fn batched<const N: usize>(self) -> (Batches<'a, 'b, T, U, N>, ZipExact<'a, 'b, T, U>) {
        const { assert!(N > 0, "a batch holds at least one pair") };
        let len = self.a.len;
        let whole = len - len % N;
        let rest = ZipExact {
            a: Strided {
                next: self.a.next.wrapping_add(whole * self.a.stride),
                len: len - whole,
                ..self.a
            },
            b: Strided {
                next: self.b.next.wrapping_add(whole * self.b.stride),
                len: len - whole,
                ..self.b
            },
        };
        // rest's invariant: its element k is element whole + k of self, valid by self's.
        let batches = Batches {
            batches: len / N,
            pairs: self,
        };
        (batches, rest)
    }

    /// `fold` with every load issued ahead of its use: the pairs in batches of `N`,
    /// `STEPS` batches a step, each step's first batch loaded during the step before (so
    /// its loads are in flight across the loop's back edge), and the `len % N` pairs left
    /// over one at a time. `f` sees the same pairs in the
    /// same order as [`Iterator::fold`], so the result is the same; what changes is how
    /// many loads a thread has in flight when `f` waits for them (a dot product's chain
    /// of multiply-adds, say).
    ///
    /// ```
    /// use nvptx_kernel::view::zip_exact;
    /// let (a, b) = ([1.0f32, 2.0, 3.0, 4.0, 5.0], [1.0f32, 1.0, 2.0, 2.0, 3.0]);
    /// let pairs = zip_exact(&a[..], &b[..]).unwrap();
    /// let dot = pairs.clone().fold_ahead::<2, 2, _>(0.0, |sum, x, y| sum + x * y);
    /// assert_eq!(dot, pairs.fold(0.0, |sum, (x, y)| sum + x * y));
    /// ```
    #[inline(always)]
    pub fn fold_ahead<const N: usize, const STEPS: usize, B>(
        self,
        init: B,
        mut f: impl FnMut(B, T, U) -> B,
    ) -> B {
        const {
            assert!(
                N > 0 && STEPS > 0,
                "a batch holds a pair and a step a batch"
            )
        };
        let (len, sa, sb) = (self.a.len, self.a.stride, self.b.stride);
        let (mut x, mut y) = (self.a.next, self.b.next);
        // SAFETY (every read below): it reads element k < len of `a` and of `b` (valid by
        // Strided's invariant, len being both lengths): batch j, read while j < len / N
        // batches are left, holds elements N j + u for u < N; the pairs left over are
        // N (len / N) + u for u < len % N, one a step. The pointers step with
        // `wrapping_add` and may point past the end after the last pair, where nothing is
        // read.
        let load = |x: *const T, y: *const U| -> ([T; N], [U; N]) {
            (
                core::array::from_fn(|u| unsafe { *x.add(u * sa) }),
                core::array::from_fn(|u| unsafe { *y.add(u * sb) }),
            )
        };
        let mut acc = init;
        // The loops count 32-bit steps where the batches fit (LLVM's code for them is
        // leaner); the same loops over 64-bit counts otherwise.
        macro_rules! batches {
            ($batches:expr, $count:ty) => {
                let batches: $count = $batches;
                let steps = STEPS as $count;
                if batches > 0 {
                    let mut ahead = load(x, y);
                    (x, y) = (x.wrapping_add(N * sa), y.wrapping_add(N * sb));
                    let after_first = batches - 1;
                    for _ in 0..after_first / steps {
                        for u in 0..N {
                            acc = f(acc, ahead.0[u], ahead.1[u]);
                        }
                        for _ in 1..STEPS {
                            let next = load(x, y);
                            for u in 0..N {
                                acc = f(acc, next.0[u], next.1[u]);
                            }
                            (x, y) = (x.wrapping_add(N * sa), y.wrapping_add(N * sb));
                        }
                        ahead = load(x, y);
                        (x, y) = (x.wrapping_add(N * sa), y.wrapping_add(N * sb));
                    }
                    for _ in 0..after_first % steps {
                        for u in 0..N {
                            acc = f(acc, ahead.0[u], ahead.1[u]);
                        }
                        ahead = load(x, y);
                        (x, y) = (x.wrapping_add(N * sa), y.wrapping_add(N * sb));
                    }
                    for u in 0..N {
                        acc = f(acc, ahead.0[u], ahead.1[u]);
                    }
                }
            };
        }
        match u32::try_from(len / N) {
            Ok(batches) => {
                batches!(batches, u32);
            }
            Err(_) => {
                batches!(len / N, usize);
            }
        }
        for _ in 0..len % N {
            acc = f(acc, unsafe { *x }, unsafe { *y });
            (x, y) = (x.wrapping_add(sa), y.wrapping_add(sb));
        }
        acc
    }
}

/// [`ZipExact`]'s pairs `N` at a time (see [`ZipExact::batched`]).
#[derive(Debug, Clone)]
pub struct Batches<'a, 'b, T, U, const N: usize> {
    /// The invariant: `batches * N <= pairs.a.len`.
    batches: usize,
    pairs: ZipExact<'a, 'b, T, U>,
}

impl<T: Copy, U: Copy, const N: usize> Iterator for Batches<'_, '_, T, U, N> {
    type Item = ([T; N], [U; N]);

    #[inline(always)]
    fn next(&mut self) -> Option<([T; N], [U; N])> {
        if self.batches == 0 {
            return None;
        }
        let (a, b) = (&self.pairs.a, &self.pairs.b);
        // SAFETY: batches >= 1, so N <= a.len == b.len: elements u < N of each are valid.
        let x = core::array::from_fn(|u| unsafe { *a.next.add(u * a.stride) });
        let y = core::array::from_fn(|u| unsafe { *b.next.add(u * b.stride) });
        self.batches -= 1;
        // The invariant holds after both advance N elements: (batches - 1) * N <= len - N.
        self.pairs.a.next = a.next.wrapping_add(N * a.stride);
        self.pairs.b.next = b.next.wrapping_add(N * b.stride);
        self.pairs.a.len -= N;
        self.pairs.b.len -= N;
        Some((x, y))
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.batches, Some(self.batches))
    }
}

/// A grid-stride loop over `out` and `input` zipped: pairs `first`, `first + stride`, …
/// below the shorter length, each output a distinct `&mut` (the indices only grow).
#[derive(Debug)]
pub struct GridStride<'a, T, U> {
    /// The invariant: `out` and `input` are valid for `len` elements, `out` borrowed
    /// mutably for 'a, and no index at or above `next` has been handed out.
    out: *mut T,
    input: *const U,
    next: usize,
    len: usize,
    stride: usize,
    data: PhantomData<(&'a mut [T], &'a [U])>,
}

impl<'a, T, U> GridStride<'a, T, U> {
    /// Elements `first, first + stride, …` of both (a `stride` of 0 counts as 1).
    #[inline(always)]
    pub fn new(out: &'a mut [T], input: &'a [U], first: usize, stride: usize) -> Self {
        GridStride {
            len: out.len().min(input.len()),
            out: out.as_mut_ptr(),
            input: input.as_ptr(),
            next: first,
            stride: stride.max(1),
            data: PhantomData,
        }
    }

    /// The running thread's elements: `first` is its global x index and `stride` the
    /// grid's threads along x (`thread::index_1d`, `thread::grid_stride_1d`).
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn this_thread(out: &'a mut [T], input: &'a [U]) -> Self {
        use crate::thread;
        GridStride::new(
            out,
            input,
            thread::index_1d() as usize,
            thread::grid_stride_1d() as usize,
        )
    }
}

impl<'a, T, U> Iterator for GridStride<'a, T, U> {
    type Item = (&'a mut T, &'a U);

    #[inline(always)]
    fn next(&mut self) -> Option<(&'a mut T, &'a U)> {
        if self.next >= self.len {
            return None;
        }
        let i = self.next;
        // Past the end (or on overflow) the loop is over: next >= len from here on.
        self.next = i.checked_add(self.stride).unwrap_or(self.len);
        // SAFETY: i < len, valid in both; i is below every later `next`, so this `&mut`
        // is handed out once.
        Some(unsafe { (&mut *self.out.add(i), &*self.input.add(i)) })
    }

    /// The grid-stride loop (what `for_each` and `fold` run). Where the length and the
    /// stride fit in 32 bits, the thread's elements are counted once, `(len − 1 − first) /
    /// stride + 1`, and the loop steps a 32-bit index and tests a 32-bit counter (on the
    /// GPU a 64-bit test, or an add that saturates, takes more instructions a step); else
    /// it is a plain `while` over a 64-bit index whose add saturates, so it cannot wrap
    /// around to an index handed out before.
    #[inline(always)]
    fn fold<B, F: FnMut(B, (&'a mut T, &'a U)) -> B>(self, init: B, mut f: F) -> B {
        let mut acc = init;
        if let (Ok(len), Ok(stride)) = (u32::try_from(self.len), u32::try_from(self.stride)) {
            if self.next >= self.len {
                return acc;
            }
            // Lossless: first < len.
            let first = self.next as u32;
            let mut i = first;
            for _ in 0..(len - 1 - first) / stride + 1 {
                // SAFETY: step k is element first + k·stride ≤ first + ⌊(len − 1 − first)
                // / stride⌋·stride ≤ len − 1, valid in both; indices only grow, so each
                // `&mut` is handed out once. After the last step `i` is not used.
                let at = i as usize;
                acc = f(acc, unsafe {
                    (&mut *self.out.add(at), &*self.input.add(at))
                });
                i = i.wrapping_add(stride);
            }
            return acc;
        }
        let mut i = self.next;
        while i < self.len {
            // SAFETY: i < len, valid in both; indices only grow, so each `&mut` is
            // handed out once.
            acc = f(acc, unsafe { (&mut *self.out.add(i), &*self.input.add(i)) });
            i = i.saturating_add(self.stride);
        }
        acc
    }
}
