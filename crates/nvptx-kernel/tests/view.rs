//! The safe views' index math on the host, against plain indexing: every element they hand
//! out is the one plain indexing names, each exactly once, and every shape they refuse is
//! one plain indexing would have gone out of bounds on.
use nvptx_kernel::view::{GridStride, Matrix, MatrixMut, Strided, zip_exact};

/// `rows × cols` values `0, 1, 2, …` with `extra` more after them.
fn numbered(rows: usize, cols: usize, extra: usize) -> Vec<u32> {
    (0..(rows * cols + extra) as u32).collect()
}

#[test]
fn rows_and_columns_are_the_elements_plain_indexing_names() {
    for (rows, cols, extra) in [
        (1, 1, 0),
        (3, 5, 0),
        (5, 3, 2),
        (4, 1, 7),
        (1, 6, 1),
        (0, 4, 3),
        (4, 0, 3),
    ] {
        let data = numbered(rows, cols, extra);
        let m = Matrix::new(&data, rows, cols).unwrap();
        assert_eq!((m.rows(), m.cols()), (rows, cols));
        for i in 0..rows {
            assert_eq!(m.row(i).unwrap(), &data[i * cols..(i + 1) * cols]);
        }
        for j in 0..cols {
            let column: Vec<u32> = m.column(j).unwrap().copied().collect();
            let want: Vec<u32> = (0..rows).map(|i| data[i * cols + j]).collect();
            assert_eq!(column, want, "column {j} of {rows}x{cols}");
            assert_eq!(m.column(j).unwrap().len(), rows);
            // fold (the counted loop) and next (the iterator) agree
            let folded = m.column(j).unwrap().fold(Vec::new(), |mut v, x| {
                v.push(*x);
                v
            });
            assert_eq!(folded, want);
        }
        assert!(m.row(rows).is_none());
        assert!(m.column(cols).is_none());
    }
}

#[test]
fn a_matrix_longer_than_its_slice_or_overflowing_is_refused() {
    let data = numbered(3, 4, 0);
    assert!(Matrix::new(&data, 3, 4).is_some());
    assert!(Matrix::new(&data, 3, 5).is_none());
    assert!(Matrix::new(&data, 4, 3).is_some());
    assert!(Matrix::new(&data, 13, 1).is_none());
    assert!(Matrix::new(&data, usize::MAX, 2).is_none());
    assert!(Matrix::new(&data, 2, usize::MAX / 2 + 1).is_none());
    let mut out = vec![0u32; 6];
    assert!(MatrixMut::new(&mut out, 2, 4).is_none());
    assert!(MatrixMut::new(&mut out, usize::MAX, usize::MAX).is_none());
}

#[test]
fn the_own_cell_and_row_are_where_plain_indexing_writes() {
    let (rows, cols) = (3, 4);
    let mut out = vec![0u32; rows * cols + 2];
    let mut m = MatrixMut::new(&mut out, rows, cols).unwrap();
    for row in 0..rows {
        for col in 0..cols {
            *m.cell_mut(row, col).unwrap() = (row * 10 + col) as u32;
        }
    }
    assert!(m.cell_mut(rows, 0).is_none());
    assert!(m.cell_mut(0, cols).is_none());
    m.row_mut(1).unwrap().fill(99);
    assert!(m.row_mut(rows).is_none());
    let want: Vec<u32> = (0..rows * cols)
        .map(|i| {
            if i / cols == 1 {
                99
            } else {
                ((i / cols) * 10 + i % cols) as u32
            }
        })
        .chain([0, 0])
        .collect();
    assert_eq!(out, want);
}

#[test]
fn zip_exact_pairs_equal_lengths_only_and_batches_then_the_rest() {
    let data = numbered(6, 5, 0);
    let m = Matrix::new(&data, 6, 5).unwrap();
    let row: &[u32] = &data[..6];
    assert!(zip_exact(m.row(0).unwrap(), m.column(0).unwrap()).is_none());
    let pairs: Vec<(u32, u32)> = zip_exact(row, m.column(3).unwrap())
        .unwrap()
        .map(|(x, y)| (*x, *y))
        .collect();
    let want: Vec<(u32, u32)> = (0..6).map(|k| (row[k], data[k * 5 + 3])).collect();
    assert_eq!(pairs, want);
    let folded = zip_exact(row, m.column(3).unwrap())
        .unwrap()
        .fold(Vec::new(), |mut v, (x, y)| {
            v.push((*x, *y));
            v
        });
    assert_eq!(folded, want);
    for n in [1usize, 2, 4, 6, 7] {
        let zipped = zip_exact(Strided::from(row), m.column(3).unwrap()).unwrap();
        let mut seen = Vec::new();
        let rest = match n {
            1 => batches::<1>(zipped, &mut seen),
            2 => batches::<2>(zipped, &mut seen),
            4 => batches::<4>(zipped, &mut seen),
            6 => batches::<6>(zipped, &mut seen),
            _ => batches::<7>(zipped, &mut seen),
        };
        assert_eq!(rest, 6 % n, "pairs left over from batches of {n}");
        assert_eq!(seen, want, "batches of {n}, then the rest");
    }
}

/// Every pair of `zipped`, batch by batch and then the rest, into `seen`; returns how many
/// were left over after the batches.
fn batches<const N: usize>(
    zipped: nvptx_kernel::view::ZipExact<'_, '_, u32, u32>,
    seen: &mut Vec<(u32, u32)>,
) -> usize {
    let (batches, rest) = zipped.batched::<N>();
    for (x, y) in batches {
        seen.extend(x.into_iter().zip(y));
    }
    let left = rest.len();
    seen.extend(rest.map(|(x, y)| (*x, *y)));
    left
}

#[test]
fn grid_stride_threads_write_every_element_once_and_nothing_else() {
    for (len, in_len, threads) in [
        (0, 0, 4),
        (10, 10, 1),
        (10, 10, 3),
        (10, 7, 4),
        (7, 10, 32),
        (33, 33, 8),
    ] {
        let input: Vec<u32> = (0..in_len as u32).map(|i| i * 3).collect();
        let mut out = vec![u32::MAX; len];
        let mut writes = vec![0u32; len];
        for first in 0..threads {
            let mut previous = None;
            for (o, i) in GridStride::new(&mut out, &input, first, threads) {
                *o = *i + 1;
                let index = (*i / 3) as usize;
                assert_eq!(index % threads, first);
                assert!(previous.is_none_or(|p| p < index));
                previous = Some(index);
                writes[index] += 1;
            }
        }
        let n = len.min(in_len);
        for k in 0..len {
            let (want_out, want_writes) = if k < n {
                (input[k] + 1, 1)
            } else {
                (u32::MAX, 0)
            };
            assert_eq!((out[k], writes[k]), (want_out, want_writes), "element {k}");
        }
    }
}

#[test]
fn grid_stride_ends_where_the_next_index_would_overflow() {
    let input = [1u32, 2, 3];
    let mut out = [0u32; 3];
    let got: Vec<u32> = GridStride::new(&mut out, &input, 1, usize::MAX)
        .map(|(_, i)| *i)
        .collect();
    assert_eq!(got, vec![2]);
    assert_eq!(GridStride::new(&mut out, &input, 5, 0).count(), 0);
    assert_eq!(
        GridStride::new(&mut out, &input, 0, 0).count(),
        3,
        "a stride of 0 counts as 1"
    );
}

#[test]
fn grid_stride_fold_visits_what_next_visits_on_both_widths() {
    let visits = |len: usize, in_len: usize, first: usize, stride: usize, fold: bool| {
        let input: Vec<usize> = (0..in_len).collect();
        let mut out = vec![0u8; len];
        let mut seen = Vec::new();
        let g = GridStride::new(&mut out, &input, first, stride);
        if fold {
            g.for_each(|(o, i)| {
                *o += 1;
                seen.push(*i);
            });
        } else {
            for (o, i) in g {
                *o += 1;
                seen.push(*i);
            }
        }
        (seen, out)
    };
    // Strides that fit in 32 bits (the counted loop) and those that do not (the while).
    for stride in [
        1,
        2,
        3,
        7,
        64,
        1 << 31,
        u32::MAX as usize,
        1 << 40,
        usize::MAX,
    ] {
        for (len, in_len) in [(0, 0), (1, 1), (10, 10), (10, 7), (7, 10), (100, 100)] {
            for first in [0, 1, 5, 9, 99, 100, 1000] {
                let by_next = visits(len, in_len, first, stride, false);
                assert_eq!(
                    visits(len, in_len, first, stride, true),
                    by_next,
                    "len {len}, in_len {in_len}, first {first}, stride {stride}"
                );
            }
        }
    }
}
