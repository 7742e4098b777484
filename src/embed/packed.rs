//! Many products of 16-bit copies at once, with no sum to fold.
//!
//! [`super::fixed`]'s products add each pair of vectors in sixteen lanes
//! and then fold the lanes into one sum: with eight products per call the
//! folding is about a third of the instructions. Here sixteen rows are laid
//! out side by side, one row per 32-bit lane, each lane holding two
//! neighbouring values of its row. A vector's two values at the same place,
//! repeated in every lane, multiply all sixteen rows at once, and after the
//! last place each lane holds one whole product. The integers are those of
//! [`super::fixed::dot_i16`]: integer sums do not depend on their order.

/// Rows of one length, in blocks of sixteen; a block's lane `l` is row
/// `16 · block + l`, and rows past the last are zero.
pub struct Packed {
    rows: usize,
    /// Pairs of values per row: half the length, rounded up.
    pairs: usize,
    /// Block by block, place by place, sixteen lanes.
    lanes: Vec<i32>,
}

/// Rows per block.
pub const BLOCK: usize = 16;

/// Two neighbouring values in one 32-bit lane, the first in the low half
/// (as `vpmaddwd` and `vpdpwssd` read them).
fn pair(first: i16, second: i16) -> i32 {
    i32::from(first as u16) | (i32::from(second as u16) << 16)
}

/// A vector's values in pairs, as [`Packed::products`] reads vectors; an
/// odd last value is paired with zero.
pub fn pairs_of(v: &[i16]) -> Vec<i32> {
    v.chunks(2)
        .map(|two| pair(two[0], two.get(1).copied().unwrap_or(0)))
        .collect()
}

impl Packed {
    /// `rows` in pairs ([`pairs_of`]), `pairs` to a row; a shorter row
    /// ends in zeros.
    pub fn new(rows: &[Vec<i32>], pairs: usize) -> Packed {
        let mut lanes = Vec::with_capacity(rows.len().div_ceil(BLOCK) * BLOCK * pairs);
        for block in rows.chunks(BLOCK) {
            for place in 0..pairs {
                for lane in 0..BLOCK {
                    let value = block.get(lane).and_then(|row| row.get(place));
                    lanes.push(value.copied().unwrap_or(0));
                }
            }
        }
        Packed {
            rows: rows.len(),
            pairs,
            lanes,
        }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn blocks(&self) -> usize {
        self.rows.div_ceil(BLOCK)
    }

    /// The products of each of `vectors` (from [`pairs_of`], as long as a
    /// row's pairs) with the sixteen rows of `block`: `out[k][l]` is vector
    /// `k` times row `16 · block + l` (zero past the last row).
    pub fn products<const N: usize>(
        &self,
        vectors: [&[i32]; N],
        block: usize,
    ) -> [[i32; BLOCK]; N] {
        let start = block * self.pairs * BLOCK;
        let lanes = &self.lanes[start..start + self.pairs * BLOCK];
        if vectors.iter().any(|v| v.len() != self.pairs) {
            return vectors.map(|v| portable(lanes, v));
        }
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512vnni") {
                // SAFETY: the CPU supports AVX-512 VNNI, checked just above;
                // `lanes` holds `pairs` places of sixteen lanes and every
                // vector `pairs` values, checked above.
                return unsafe { products_avx512(lanes, vectors) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: as above, with AVX2.
                return unsafe { products_avx2(lanes, vectors) };
            }
        }
        vectors.map(|v| portable(lanes, v))
    }
}

/// One vector against a block, lane by lane.
fn portable(lanes: &[i32], vector: &[i32]) -> [i32; BLOCK] {
    let mut out = [0i32; BLOCK];
    let halves = |x: i32| (i32::from(x as i16), i32::from((x >> 16) as i16));
    for (place, &value) in vector.iter().enumerate() {
        let (a0, a1) = halves(value);
        for (lane, sum) in out.iter_mut().enumerate() {
            let Some(&row) = lanes.get(place * BLOCK + lane) else {
                continue;
            };
            let (b0, b1) = halves(row);
            *sum = sum.wrapping_add(a0 * b0 + a1 * b1);
        }
    }
    out
}

/// `vpdpwssd`: each lane adds its two products with the vector's pair.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn products_avx512<const N: usize>(
    lanes: &[i32],
    vectors: [&[i32]; N],
) -> [[i32; BLOCK]; N] {
    use std::arch::x86_64::{
        __m512i, _mm512_dpwssd_epi32, _mm512_loadu_si512, _mm512_set1_epi32, _mm512_setzero_si512,
        _mm512_storeu_si512,
    };
    let mut sums: [__m512i; N] = [_mm512_setzero_si512(); N];
    for (place, row) in lanes.chunks_exact(BLOCK).enumerate() {
        // SAFETY: a chunk is sixteen i32s, one 512-bit load; every vector
        // has a value at each place (checked by the caller).
        unsafe {
            let block = _mm512_loadu_si512(row.as_ptr().cast::<__m512i>());
            for k in 0..N {
                let value = _mm512_set1_epi32(*vectors[k].get_unchecked(place));
                sums[k] = _mm512_dpwssd_epi32(sums[k], value, block);
            }
        }
    }
    let mut out = [[0i32; BLOCK]; N];
    for (k, lanes) in out.iter_mut().enumerate() {
        // SAFETY: sixteen i32s are one 512-bit store.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast::<__m512i>(), sums[k]) };
    }
    out
}

/// `vpmaddwd` on each half of a block, then an addition; four vectors at a
/// time, so the sums stay in AVX2's sixteen registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn products_avx2<const N: usize>(lanes: &[i32], vectors: [&[i32]; N]) -> [[i32; BLOCK]; N] {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_set1_epi32,
        _mm256_setzero_si256, _mm256_storeu_si256,
    };
    const AT_ONCE: usize = 4;
    let mut out = [[0i32; BLOCK]; N];
    for first in (0..N).step_by(AT_ONCE) {
        let count = AT_ONCE.min(N - first);
        let mut low: [__m256i; AT_ONCE] = [_mm256_setzero_si256(); AT_ONCE];
        let mut high: [__m256i; AT_ONCE] = [_mm256_setzero_si256(); AT_ONCE];
        for (place, row) in lanes.chunks_exact(BLOCK).enumerate() {
            // SAFETY: a chunk is sixteen i32s, two 256-bit loads; every
            // vector has a value at each place (checked by the caller).
            unsafe {
                let lo = _mm256_loadu_si256(row.as_ptr().cast::<__m256i>());
                let hi = _mm256_loadu_si256(row.as_ptr().add(8).cast::<__m256i>());
                for k in 0..count {
                    let value = _mm256_set1_epi32(*vectors[first + k].get_unchecked(place));
                    low[k] = _mm256_add_epi32(low[k], _mm256_madd_epi16(value, lo));
                    high[k] = _mm256_add_epi32(high[k], _mm256_madd_epi16(value, hi));
                }
            }
        }
        for k in 0..count {
            let lanes = &mut out[first + k];
            // SAFETY: eight i32s are one 256-bit store, twice.
            unsafe {
                _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), low[k]);
                _mm256_storeu_si256(lanes.as_mut_ptr().add(8).cast::<__m256i>(), high[k]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::fixed::{Scale, dot_i16, seeded_unit_vector};

    #[test]
    fn packed_products_are_the_products_one_by_one() {
        // An odd length (a lone last value) and rows that fill two blocks
        // and part of a third.
        for len in [7, 384, 389] {
            let vectors: Vec<Vec<f32>> = (0..40).map(|k| seeded_unit_vector(k, len)).collect();
            let scale = Scale::for_vectors(vectors.iter().map(Vec::as_slice));
            let copies: Vec<Vec<i16>> = vectors.iter().map(|v| scale.quantize(v)).collect();
            let rows = &copies[..37];
            let paired: Vec<Vec<i32>> = rows.iter().map(|r| pairs_of(r)).collect();
            let packed = Packed::new(&paired, len.div_ceil(2));
            assert_eq!((packed.rows(), packed.blocks()), (37, 3));
            let probes: Vec<Vec<i32>> = copies[32..].iter().map(|c| pairs_of(c)).collect();
            let eight: [&[i32]; 8] = std::array::from_fn(|k| probes[k % probes.len()].as_slice());
            for block in 0..packed.blocks() {
                let products = packed.products(eight, block);
                for (k, lanes) in products.iter().enumerate() {
                    for (lane, &product) in lanes.iter().enumerate() {
                        let row = block * BLOCK + lane;
                        let expected = rows
                            .get(row)
                            .map_or(0, |r| dot_i16(&copies[32 + k % probes.len()], r));
                        assert_eq!(product, expected, "len {len} row {row} vector {k}");
                        let lanes_from = &packed.lanes[block * packed.pairs * BLOCK..];
                        assert_eq!(portable(lanes_from, eight[k])[lane], expected);
                    }
                }
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let lanes = &packed.lanes[..packed.pairs * BLOCK];
                // SAFETY: the CPU supports AVX2, checked just above, and
                // every vector has `pairs` values.
                let avx2 = unsafe { products_avx2(lanes, eight) };
                assert_eq!(avx2, eight.map(|v| portable(lanes, v)));
            }
        }
    }
}
