//! SplitMix64: a small, seeded generator for input data and drawn shapes, so every run
//! draws fresh values and a failing run can be repeated from its seed.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A seed from the clock, for fresh inputs on every run.
    pub fn seed_from_clock() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x5EED, |d| d.as_nanos() as u64)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 24 random bits.
    pub fn unit_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in `[-1, 1)`, 24 random bits: inputs whose products and sums all differ.
    pub fn signed_unit_f32(&mut self) -> f32 {
        2.0 * self.unit_f32() - 1.0
    }

    /// Uniform in `lo..=hi` (`lo` where `hi < lo`).
    pub fn in_range(&mut self, lo: u64, hi: u64) -> u64 {
        let span = hi.saturating_sub(lo) as u128 + 1;
        lo + ((u128::from(self.next_u64()) * span) >> 64) as u64
    }

    /// Any i32, as C's `rand()` feeds the Handbook's input.
    pub fn any_i32(&mut self) -> i32 {
        (self.next_u64() >> 32) as i32
    }

    /// Fill `out` with [`Rng::unit_f32`] values.
    pub fn fill_unit(&mut self, out: &mut [f32]) {
        out.iter_mut().for_each(|x| *x = self.unit_f32());
    }

    /// Fill `out` with [`Rng::signed_unit_f32`] values.
    pub fn fill_signed_unit(&mut self, out: &mut [f32]) {
        out.iter_mut().for_each(|x| *x = self.signed_unit_f32());
    }

    /// Fill `out` with [`Rng::any_i32`] values.
    pub fn fill_any_i32(&mut self, out: &mut [i32]) {
        out.iter_mut().for_each(|x| *x = self.any_i32());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_values_and_units_in_range() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        assert_eq!(a.next_u64(), b.next_u64());
        assert!((0..10_000).all(|_| (0.0..1.0).contains(&a.unit_f32())));
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
        let mut r = Rng::new(3);
        let drawn: Vec<u64> = (0..10_000).map(|_| r.in_range(5, 9)).collect();
        assert!(drawn.iter().all(|x| (5..=9).contains(x)));
        assert!((5..=9).all(|v| drawn.contains(&v)), "every value drawn");
        assert_eq!(r.in_range(7, 3), 7);
        assert!((0..10_000).all(|_| (-1.0..1.0).contains(&r.signed_unit_f32())));
    }
}
