//! Splitting host-side work on large arrays (filling, references, checks) over all cores,
//! one contiguous chunk per thread.
use std::ops::Range;

/// The chunk length that gives each of `threads` threads one chunk of `len` elements.
fn chunk_len(len: usize, threads: usize) -> usize {
    len.div_ceil(threads).max(1)
}

/// Run `work(start, chunk)` on each chunk of `out` in parallel; `start` is the index of
/// the chunk's first element in `out`.
pub fn for_each_chunk_mut<T: Send>(out: &mut [T], work: impl Fn(usize, &mut [T]) + Sync) {
    for_each_chunk_mut_over(out, cores(), work)
}

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// [`for_each_chunk_mut`] over `threads` threads (at least one; the caller's own thread
/// alone where it is one).
pub fn for_each_chunk_mut_over<T: Send>(
    out: &mut [T],
    threads: usize,
    work: impl Fn(usize, &mut [T]) + Sync,
) {
    if threads <= 1 {
        work(0, out);
        return;
    }
    let size = chunk_len(out.len(), threads);
    let work = &work;
    std::thread::scope(|scope| {
        for (k, chunk) in out.chunks_mut(size).enumerate() {
            scope.spawn(move || work(k * size, chunk));
        }
    });
}

/// Run `work(range)` on each chunk of `0..len` in parallel and return the results in
/// order.
pub fn map_chunks<R: Send>(len: usize, work: impl Fn(Range<usize>) -> R + Sync) -> Vec<R> {
    let size = chunk_len(len, cores());
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..len)
            .step_by(size)
            .map(|start| scope.spawn(move || work(start..(start + size).min(len))))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker thread"))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_see_their_own_indices_and_cover_everything_once() {
        let mut out = vec![0usize; 1001];
        for_each_chunk_mut(&mut out, |start, chunk| {
            for (j, o) in chunk.iter_mut().enumerate() {
                *o += start + j;
            }
        });
        assert!(out.iter().enumerate().all(|(i, &v)| v == i));
        let ranges = map_chunks(1001, |r| r);
        assert_eq!(ranges.first().map(|r| r.start), Some(0));
        assert_eq!(ranges.last().map(|r| r.end), Some(1001));
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
        assert!(map_chunks(0, |r| r).is_empty());
        for threads in [0, 1, 3, 64] {
            let mut out = vec![0usize; 100];
            for_each_chunk_mut_over(&mut out, threads, |start, chunk| {
                for (j, o) in chunk.iter_mut().enumerate() {
                    *o += start + j;
                }
            });
            assert!(out.iter().enumerate().all(|(i, &v)| v == i), "{threads}");
        }
    }
}
