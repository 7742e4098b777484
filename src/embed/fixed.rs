//! Fixed-point copies of vectors, for a first pass that rules pairs out.
//!
//! The pair search scores most candidate pairs only to find them far below
//! every floor. A 16-bit integer copy of each vector scores a pair with half
//! the instructions and half the memory traffic of the `f32` product, and
//! its error has a bound that holds for every pair ([`Scale::margin`]). A pair
//! whose estimate plus that bound stays below its floor cannot reach the
//! floor; the others get the exact [`super::dot`], so what is kept, and
//! every similarity, is what the `f32` pass alone gives.

/// How vectors are rounded to integers: `round(x · factor)`.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    factor: f32,
    /// Most an estimate can differ from the `f32` product of the same two
    /// vectors, as a similarity.
    margin: f64,
}

/// The largest factor: unit vectors' products then sum far inside `i32`.
const MOST_FACTOR: f32 = 16_384.0;

impl Scale {
    /// The scale for a set of vectors, from their largest component and
    /// largest norm: every component fits an `i16`, and no sum of products
    /// overflows an `i32`. Where a component is not finite or too large,
    /// the margin is infinite: every estimate may reach any floor.
    pub fn for_vectors<'v>(vectors: impl IntoIterator<Item = &'v [f32]>) -> Scale {
        let unbounded = Scale {
            factor: 1.0,
            margin: f64::INFINITY,
        };
        let mut largest = 0f32;
        let mut norm = 0f32;
        let mut dimension = 0usize;
        for v in vectors {
            dimension = dimension.max(v.len());
            let (most, squares) = extent(v);
            // A component that is not finite makes the squares so.
            if !squares.is_finite() {
                return unbounded;
            }
            largest = largest.max(most);
            norm = norm.max(squares.sqrt());
        }
        // |q| <= largest · factor + 0.5 fits an i16, and every partial sum
        // of products is at most |qa|·|qb| <= (factor · norm + sqrt(d)/2)²,
        // under 2³¹.
        let factor = MOST_FACTOR
            .min(32_000.0 / largest.max(f32::MIN_POSITIVE))
            .min(30_000.0 / norm.max(f32::MIN_POSITIVE));
        if factor.is_nan() || factor < 1.0 || dimension > 1 << 20 {
            return unbounded;
        }
        // Each rounding error is at most half a step (plus the float
        // addition's own rounding, under 1 % of a step at these values), so
        // the error vector's norm is at most sqrt(d) · 0.51 / factor; then |a·b − â·b̂| <=
        // |a|·|e_b| + |e_a|·|b| + |e_a|·|e_b|. The f32 product itself is off
        // the real one by at most about d · 2⁻²⁴ · |a|·|b|; the last term is
        // twice that, plus room for the f64 arithmetic that compares.
        let step = f64::from(factor).recip();
        let d = dimension as f64;
        let error = d.sqrt() * step * 0.51;
        let norm = f64::from(norm);
        let margin = 2.0 * norm * error
            + error * error
            + (d + 1.0) * f64::from(f32::EPSILON) * norm * norm
            + 1e-6;
        Scale { factor, margin }
    }

    /// The vector rounded to this scale, appended to `out`.
    pub fn quantize_into(&self, v: &[f32], out: &mut Vec<i16>) {
        // `for_vectors` chose the factor so that every value fits. Adding a
        // half and truncating rounds to nearest without a call to `roundf`
        // (the baseline x86-64 target has no rounding instruction).
        out.extend(v.iter().map(|&x| {
            let scaled = x * self.factor;
            (scaled + 0.5f32.copysign(scaled)) as i16
        }));
    }

    /// The vector rounded to this scale.
    pub fn quantize(&self, v: &[f32]) -> Vec<i16> {
        let mut out = Vec::with_capacity(v.len());
        self.quantize_into(v, &mut out);
        out
    }

    /// An integer product as a similarity.
    pub fn similarity(&self, product: i32) -> f64 {
        let step = f64::from(self.factor).recip();
        f64::from(product) * step * step
    }

    /// The least integer product whose similarity plus the margin reaches
    /// `floor`: a pair whose estimate is below it cannot reach the floor.
    pub fn least_product(&self, floor: f64) -> i64 {
        let least = ((floor - self.margin) * f64::from(self.factor).powi(2)).floor();
        if least.is_nan() {
            i64::MIN
        } else {
            least as i64
        }
    }

    /// A product at or below every product whose similarity is within
    /// `by` of `product`'s similarity: `product − by` in integer steps, one
    /// step lower for the rounding of the similarities' arithmetic.
    pub fn within_below(&self, product: i32, by: f64) -> i64 {
        let steps = (by * f64::from(self.factor).powi(2)).ceil();
        if steps.is_finite() && steps < i64::MAX as f64 / 4.0 {
            i64::from(product) - steps as i64 - 1
        } else {
            i64::MIN
        }
    }

    /// Bound on `|dot(a, b) − similarity(dot_i16(â, b̂))|`.
    pub fn margin(&self) -> f64 {
        self.margin
    }
}

/// The largest magnitude among `v`'s components and the sum of their
/// squares, summed in eight lanes so the compiler keeps them in one
/// register (the sum in one order would wait on each addition).
fn extent(v: &[f32]) -> (f32, f32) {
    const WIDTH: usize = 8;
    let mut most = [0f32; WIDTH];
    let mut squares = [0f32; WIDTH];
    let chunks = v.chunks_exact(WIDTH);
    let tail = chunks.remainder();
    for chunk in chunks {
        for lane in 0..WIDTH {
            let x = chunk[lane];
            if x.abs() > most[lane] {
                most[lane] = x.abs();
            }
            squares[lane] += x * x;
        }
    }
    for (lane, &x) in tail.iter().enumerate() {
        if x.abs() > most[lane] {
            most[lane] = x.abs();
        }
        squares[lane] += x * x;
    }
    (
        most.iter().fold(0f32, |a, &b| a.max(b)),
        squares.iter().sum(),
    )
}

/// The `k`-th largest of `products` (the first is the largest); `None`
/// where there are fewer. A running list of the `k` largest: in a list of
/// products, few enter it, so this reads each product once and copies none.
pub fn kth_largest(products: &[i32], k: usize, best: &mut Vec<i32>) -> Option<i32> {
    if k == 0 || k > products.len() {
        return None;
    }
    best.clear();
    for &product in products {
        if best.len() == k {
            if best[k - 1] >= product {
                continue;
            }
            best.pop();
        }
        let at = best.partition_point(|&b| b >= product);
        best.insert(at, product);
    }
    best.last().copied()
}

/// The integer dot product. Integer sums do not depend on their order, so
/// this is the same number on every CPU, and the number the pair search's
/// packed products ([`super::packed`]) give.
pub fn dot_i16(a: &[i16], b: &[i16]) -> i32 {
    // Sixteen lanes: the compiler turns pairs of products into `pmaddwd`
    // where the target has it.
    const LANES: usize = 16;
    let mut lanes = [0i32; LANES];
    let chunks = a.chunks_exact(LANES).zip(b.chunks_exact(LANES));
    let whole = a.len().min(b.len()) / LANES * LANES;
    for (x, y) in chunks {
        for lane in 0..LANES {
            lanes[lane] += i32::from(x[lane]) * i32::from(y[lane]);
        }
    }
    lanes.iter().sum::<i32>() + tail_product(&a[whole..], &b[whole..])
}

/// The products past the last whole chunk.
fn tail_product(a: &[i16], b: &[i16]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

/// A seeded pseudo-random unit vector of `len` values, for tests of
/// vector search.
#[cfg(test)]
pub(crate) fn seeded_unit_vector(seed: u64, len: usize) -> Vec<f32> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    let v: Vec<f32> = (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::dot;

    #[test]
    fn estimates_stay_within_their_margin() {
        for len in [7, 384, 389] {
            let vectors: Vec<Vec<f32>> = (0..40).map(|k| seeded_unit_vector(k, len)).collect();
            let scale = Scale::for_vectors(vectors.iter().map(Vec::as_slice));
            assert!(scale.margin() < 0.002, "{}", scale.margin());
            let quantized: Vec<Vec<i16>> = vectors.iter().map(|v| scale.quantize(v)).collect();
            for (a, qa) in vectors.iter().zip(&quantized) {
                for (b, qb) in vectors.iter().zip(&quantized) {
                    let estimate = scale.similarity(dot_i16(qa, qb));
                    let exact = f64::from(dot(a, b));
                    assert!((estimate - exact).abs() <= scale.margin());
                }
            }
        }
    }

    #[test]
    fn the_kth_largest_is_the_sorted_products_kth() {
        let products: Vec<i32> = (0..300u64)
            .map(|k| (k.wrapping_mul(2654435761) % 1000) as i32 - 500)
            .collect();
        let mut sorted = products.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let mut best = Vec::new();
        for k in [1, 2, 16, 299, 300] {
            assert_eq!(kth_largest(&products, k, &mut best), Some(sorted[k - 1]));
        }
        assert_eq!(kth_largest(&products, 301, &mut best), None);
        assert_eq!(kth_largest(&products, 0, &mut best), None);
    }

    #[test]
    fn within_below_keeps_every_product_within_reach() {
        let scale = Scale::for_vectors([&seeded_unit_vector(3, 384)[..]]);
        let by = 2.0 * scale.margin();
        for product in [-40_000_000, -12_345, 0, 7, 99_999, 250_000_000] {
            let least = scale.within_below(product, by);
            let reach = scale.similarity(product) - by;
            // Every product below `least` is out of reach (similarities
            // grow with the product), and `least` is no lower than it need be.
            assert!(scale.similarity((least - 1) as i32) < reach);
            assert!(scale.similarity(least as i32 + 2) >= reach);
        }
    }

    #[test]
    fn large_or_broken_vectors_get_a_scale_that_fits_or_no_bound() {
        let big = vec![3.0f32; 384];
        let scale = Scale::for_vectors([&big[..]]);
        let q = scale.quantize(&big);
        let estimate = scale.similarity(dot_i16(&q, &q));
        assert!((estimate - f64::from(dot(&big, &big))).abs() <= scale.margin());
        let broken = Scale::for_vectors([&[f32::NAN, 0.0][..]]);
        assert_eq!(broken.margin(), f64::INFINITY);
    }
}
