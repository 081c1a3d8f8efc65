//! The shapes a compare-kernels run times: the write-ups' (the run's parameters), a sweep of
//! shapes with tails (inner sizes that are not multiples of 8, cycle counts 1–9 and odd
//! larger ones, prime element counts), and shapes drawn at random from the run's seed. The
//! same parameters and seed give the same shapes, on any machine.

use streamlab_results::experiments::compare_kernels::{Origin, Params};

use crate::rng::Rng;

/// A `rows × cols` matrix for `fill`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FillShape {
    pub rows: u32,
    pub cols: u32,
    pub origin: Origin,
}

/// `c = a · b` with `a: rows × inner`, `b: inner × cols`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatmulShape {
    pub rows: u32,
    pub cols: u32,
    pub inner: u32,
    pub origin: Origin,
}

/// AddKernel over `elements` ints, `cycles` sums each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddShape {
    pub elements: usize,
    pub cycles: i32,
    pub origin: Origin,
}

/// sincos over `elements` floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SincosShape {
    pub elements: usize,
    pub origin: Origin,
}

/// Every shape of a run, kernel by kernel, the write-ups' first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shapes {
    pub fill: Vec<FillShape>,
    pub matmul: Vec<MatmulShape>,
    pub add: Vec<AddShape>,
    pub sincos: Vec<SincosShape>,
}

/// The rows of the wiki's output (and of `fill`'s A matrix).
pub const WIKI_ROWS: u32 = 32;
/// The columns of the wiki's output.
pub const WIKI_COLS: u32 = 16;

/// The cycle counts of the sweep: every count with a rest below eight, and odd larger
/// ones.
pub const TAIL_CYCLES: [i32; 12] = [1, 2, 3, 4, 5, 6, 7, 9, 31, 77, 257, 1001];

impl MatmulShape {
    /// The case's name: "rows×cols×inner".
    pub fn case(&self) -> String {
        format!("{}×{}×{}", self.rows, self.cols, self.inner)
    }

    /// Whether every index of its matrices fits in an `int`.
    pub fn int_indices(&self) -> bool {
        let [r, c, k] = [self.rows, self.cols, self.inner].map(u64::from);
        [r * k, k * c, r * c]
            .into_iter()
            .all(|n| n <= i32::MAX as u64)
    }

    /// The bytes of `a` and `b`.
    pub fn input_bytes(&self) -> u64 {
        4 * u64::from(self.inner) * (u64::from(self.rows) + u64::from(self.cols))
    }
}

impl FillShape {
    /// The case's name: empty at the write-ups' shape, "rows×cols" elsewhere.
    pub fn case(&self) -> String {
        match self.origin {
            Origin::Defaults => String::new(),
            _ => format!("{}×{}", self.rows, self.cols),
        }
    }
}

impl AddShape {
    /// The case's name: "cycles N", and the array where it is not the run's.
    pub fn case(&self, p: &Params) -> String {
        if self.elements == p.add_size << 20 {
            format!("cycles {}", self.cycles)
        } else {
            format!("cycles {}, {} ints", self.cycles, self.elements)
        }
    }
}

impl SincosShape {
    /// The case's name: empty at the run's array, "N floats" elsewhere.
    pub fn case(&self, p: &Params) -> String {
        if self.elements == p.sincos_elements {
            String::new()
        } else {
            format!("{} floats", self.elements)
        }
    }
}

/// The largest prime at most `n` (2 below 2).
pub fn prime_at_most(n: u64) -> u64 {
    let is_prime = |m: u64| {
        m >= 2
            && (2..)
                .take_while(|d| d * d <= m)
                .all(|d| !m.is_multiple_of(d))
    };
    (2..=n.max(2)).rev().find(|&m| is_prime(m)).unwrap_or(2)
}

/// The shapes a run with `p` times, the random ones drawn from `seed`. With
/// `p.sweep_launches` 0, the write-ups' shapes alone.
pub fn shapes(p: &Params, seed: u64) -> Shapes {
    let mut shapes = Shapes {
        fill: vec![FillShape {
            rows: WIKI_ROWS,
            cols: p.aligned,
            origin: Origin::Defaults,
        }],
        matmul: vec![MatmulShape {
            rows: WIKI_ROWS,
            cols: WIKI_COLS,
            inner: p.aligned,
            origin: Origin::Defaults,
        }],
        add: (p.add_cycles.iter())
            .map(|&cycles| AddShape {
                elements: p.add_size << 20,
                cycles,
                origin: Origin::Defaults,
            })
            .collect(),
        sincos: vec![SincosShape {
            elements: p.sincos_elements,
            origin: Origin::Defaults,
        }],
    };
    if p.square > 0 {
        shapes.matmul.push(MatmulShape {
            rows: p.square,
            cols: p.square,
            inner: p.square_inner,
            origin: Origin::Defaults,
        });
    }
    if p.sweep_launches > 0 {
        with_tails(&mut shapes, p);
        drawn(&mut shapes, p, seed);
    }
    shapes
}

/// The sweep's shapes with tails on every axis: odd inner sizes, block-ragged rows and
/// columns, primes.
fn with_tails(shapes: &mut Shapes, p: &Params) {
    let prime = |n: u64| prime_at_most(n) as u32;
    let tail = |rows, cols, inner| MatmulShape {
        rows,
        cols,
        inner,
        origin: Origin::Tail,
    };
    shapes
        .matmul
        .push(tail(WIKI_ROWS, WIKI_COLS, (p.aligned - 1).max(1)));
    shapes.matmul.push(tail(
        WIKI_ROWS - 1,
        WIKI_COLS + 1,
        prime(u64::from(p.aligned) / 2 + 1),
    ));
    if p.square > 0 {
        let side = (p.square / 4 * 3).max(2);
        shapes.matmul.push(tail(
            side + 3,
            side - 1,
            prime(u64::from(p.square_inner) * 3 / 2),
        ));
    }
    shapes.fill.push(FillShape {
        rows: WIKI_ROWS - 1,
        cols: prime(u64::from(p.aligned)),
        origin: Origin::Tail,
    });
    let ints = prime_at_most((p.add_size << 20) as u64) as usize;
    shapes.add.extend(
        (TAIL_CYCLES.iter())
            .filter(|c| !p.add_cycles.contains(c))
            .map(|&cycles| AddShape {
                elements: ints,
                cycles,
                origin: Origin::Tail,
            }),
    );
    shapes.sincos.push(SincosShape {
        elements: prime_at_most(p.sincos_elements as u64) as usize,
        origin: Origin::Tail,
    });
}

/// The shapes drawn from `seed`: matmul alternately latency-bound (a few threads walking
/// long rows) and wide (a thread per cell over much of the GPU).
fn drawn(shapes: &mut Shapes, p: &Params, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut draw = |lo: u64, hi: u64| rng.in_range(lo, hi.max(lo));
    for i in 0..p.random_shapes {
        let (rows, cols, inner) = if i % 2 == 0 {
            (draw(1, 64), draw(1, 64), draw(1, u64::from(p.aligned)))
        } else {
            let side = u64::from(p.square.max(64));
            (
                draw(1, 2 * side),
                draw(1, 2 * side),
                draw(1, 2 * u64::from(p.square_inner.max(64))),
            )
        };
        shapes.matmul.push(MatmulShape {
            rows: rows as u32,
            cols: cols as u32,
            inner: inner as u32,
            origin: Origin::Random,
        });
        shapes.add.push(AddShape {
            elements: draw((p.add_size << 19) as u64, (p.add_size << 20) as u64) as usize,
            cycles: draw(0, 1024) as i32,
            origin: Origin::Random,
        });
        shapes.sincos.push(SincosShape {
            elements: draw(1, p.sincos_elements as u64) as usize,
            origin: Origin::Random,
        });
        shapes.fill.push(FillShape {
            rows: draw(1, 64) as u32,
            cols: draw(1, u64::from(p.aligned)) as u32,
            origin: Origin::Random,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_draws_the_same_valid_shapes_with_tails_on_every_axis_and_primes_are_the_largest() {
        let p = Params::default();
        assert_eq!(shapes(&p, 7), shapes(&p, 7));
        assert_ne!(shapes(&p, 7).matmul, shapes(&p, 8).matmul);
        let none = Params {
            sweep_launches: 0,
            ..Params::default()
        };
        let only = shapes(&none, 7);
        assert!(
            (only.matmul.iter().map(|s| s.origin))
                .chain(only.add.iter().map(|s| s.origin))
                .all(|o| o == Origin::Defaults)
        );
        assert_eq!(only.add.len(), p.add_cycles.len());
        for seed in 0..50 {
            let s = shapes(&p, seed);
            let matmul = |origin| s.matmul.iter().filter(move |m| m.origin == origin);
            let tails: Vec<_> = matmul(Origin::Tail).collect();
            assert!(tails.iter().all(|m| m.inner % 8 != 0), "{tails:?}");
            assert!(tails.iter().any(|m| m.rows % 16 != 0 && m.cols % 16 != 0));
            let cycles: Vec<i32> = s.add.iter().map(|a| a.cycles).collect();
            assert!((1..=9).filter(|c| *c != 8).all(|c| cycles.contains(&c)));
            assert!(s.add.iter().all(|a| a.elements > 0 && a.cycles >= 0));
            assert!((s.matmul.iter()).all(|m| m.rows > 0 && m.cols > 0 && m.inner > 0));
            assert!(s.sincos.iter().all(|x| x.elements > 0));
            assert!(s.fill.iter().all(|f| f.rows > 0 && f.cols > 0));
            assert_eq!(matmul(Origin::Random).count(), p.random_shapes);
        }
        let primes = [10, 13, 1 << 20, 1].map(prime_at_most);
        assert_eq!(primes, [7, 13, 1_048_573, 2]);
        let m = |rows, cols, inner| MatmulShape {
            rows,
            cols,
            inner,
            origin: Origin::Defaults,
        };
        assert!(m(32, 16, 131_072).int_indices());
        assert!(!m(32_768, 16, 1 << 24).int_indices());
        assert_eq!(m(32, 16, 4).input_bytes(), 4 * 4 * 48);
    }
}
