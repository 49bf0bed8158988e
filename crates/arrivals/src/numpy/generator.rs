//! numpy's `np.random.default_rng(seed)` as far as `Generator.integers` goes: a `SeedSequence`
//! expands the seed into the state of a PCG64 (XSL-RR, 128-bit LCG), and bounded integers
//! below 2³² come from Lemire's multiply-and-reject on 32-bit halves of its outputs (the low
//! half first, the high half kept for the next draw). vLLM's random dataset draws its input
//! and output lengths this way. The tests check it against values numpy 2.3 printed.

/// The generator `np.random.default_rng(seed)` makes.
#[derive(Clone)]
pub struct NumpyGenerator {
    state: u128,
    inc: u128,
    /// The high half of the last 64-bit output, served as the next 32-bit one.
    half: Option<u32>,
}

const MULTIPLIER: u128 = (2549297995355413924u128 << 64) | 4865540595714422341u128;

impl NumpyGenerator {
    /// `np.random.default_rng(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> Self {
        let words = seed_sequence_state(seed);
        let initstate = ((words[0] as u128) << 64) | words[1] as u128;
        let initseq = ((words[2] as u128) << 64) | words[3] as u128;
        let mut g = Self {
            state: 0,
            inc: (initseq << 1) | 1,
            half: None,
        };
        g.step();
        g.state = g.state.wrapping_add(initstate);
        g.step();
        g
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(MULTIPLIER).wrapping_add(self.inc);
    }

    /// The next 64-bit output (`PCG64.random_raw()`).
    pub fn next_u64(&mut self) -> u64 {
        self.step();
        let s = self.state;
        (((s >> 64) as u64) ^ (s as u64)).rotate_right((s >> 122) as u32)
    }

    fn next_u32(&mut self) -> u32 {
        if let Some(h) = self.half.take() {
            return h;
        }
        let next = self.next_u64();
        self.half = Some((next >> 32) as u32);
        next as u32
    }

    /// `integers(low, high_exclusive)`: one integer uniform in `[low, high)`. Ranges must be
    /// narrower than 2³² (all that lengths need); an empty or one-value range draws nothing.
    pub fn integer(&mut self, low: i64, high_exclusive: i64) -> i64 {
        let span = high_exclusive.saturating_sub(low).saturating_sub(1);
        if span <= 0 {
            return low;
        }
        let span = u32::try_from(span).unwrap_or(u32::MAX);
        if span == u32::MAX {
            return low + self.next_u32() as i64;
        }
        let excl = span as u64 + 1;
        let mut m = self.next_u32() as u64 * excl;
        let mut leftover = m as u32;
        if (leftover as u64) < excl {
            let threshold = ((u32::MAX - span) as u64 % excl) as u32;
            while leftover < threshold {
                m = self.next_u32() as u64 * excl;
                leftover = m as u32;
            }
        }
        low + (m >> 32) as i64
    }
}

/// `SeedSequence(seed).generate_state(4, np.uint64)`: the seed's 32-bit words hashed into a
/// pool of four, then four 64-bit words drawn from the pool.
fn seed_sequence_state(seed: u64) -> [u64; 4] {
    const INIT_A: u32 = 0x43b0_d7e5;
    const MULT_A: u32 = 0x931e_8875;
    const INIT_B: u32 = 0x8b51_f9dd;
    const MULT_B: u32 = 0x58f3_8ded;
    const MIX_MULT_L: u32 = 0xca01_f9dd;
    const MIX_MULT_R: u32 = 0x4973_f715;
    const XSHIFT: u32 = 16;
    // The seed as numpy splits an int: 32-bit words, least significant first, at least one.
    let mut entropy = vec![seed as u32];
    if seed >> 32 != 0 {
        entropy.push((seed >> 32) as u32);
    }
    let mut hash_const = INIT_A;
    let mut hashmix = |value: u32| {
        let mut v = value ^ hash_const;
        hash_const = hash_const.wrapping_mul(MULT_A);
        v = v.wrapping_mul(hash_const);
        v ^ (v >> XSHIFT)
    };
    let mix = |x: u32, y: u32| {
        let r = MIX_MULT_L
            .wrapping_mul(x)
            .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
        r ^ (r >> XSHIFT)
    };
    let mut pool = [0u32; 4];
    for (i, slot) in pool.iter_mut().enumerate() {
        *slot = hashmix(entropy.get(i).copied().unwrap_or(0));
    }
    for src in 0..4 {
        for dst in 0..4 {
            if src != dst {
                let h = hashmix(pool[src]);
                pool[dst] = mix(pool[dst], h);
            }
        }
    }
    for &word in entropy.iter().skip(4) {
        for slot in pool.iter_mut() {
            let h = hashmix(word);
            *slot = mix(*slot, h);
        }
    }
    let mut hash_const = INIT_B;
    let mut words = [0u32; 8];
    for (i, out) in words.iter_mut().enumerate() {
        let mut v = pool[i % 4] ^ hash_const;
        hash_const = hash_const.wrapping_mul(MULT_B);
        v = v.wrapping_mul(hash_const);
        *out = v ^ (v >> XSHIFT);
    }
    [0, 1, 2, 3].map(|i| words[2 * i] as u64 | (words[2 * i + 1] as u64) << 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_sequence_and_raw_outputs_are_numpys() {
        // [hex(x) for x in np.random.SeedSequence(S).generate_state(4, np.uint64)]
        assert_eq!(
            seed_sequence_state(0),
            [
                0xdb2cd7e7b0f478be,
                0xabf4641a2c71ba49,
                0x20c6ed6d9d7b8d41,
                0x2c4099de223c39d4
            ]
        );
        assert_eq!(
            seed_sequence_state(42),
            [
                0x9f1e2e6dcd540ab7,
                0xd57873dc79fb94b6,
                0x7d282a1b64d420b7,
                0x336579714692d5ff
            ]
        );
        // np.random.PCG64(0).random_raw(3)
        let mut g = NumpyGenerator::new(0);
        let raw: Vec<u64> = (0..3).map(|_| g.next_u64()).collect();
        assert_eq!(
            raw,
            [
                11749869230777074271,
                4976686463289251617,
                755828109848996024
            ]
        );
    }

    fn draws(g: &mut NumpyGenerator, low: i64, high: i64, n: usize) -> Vec<i64> {
        (0..n).map(|_| g.integer(low, high)).collect()
    }

    #[test]
    fn integers_are_numpys_across_calls() {
        // r = np.random.default_rng(0); r.integers(150, 251, size=5),
        // r.integers(43, 53, size=5), r.integers(0, 8192, size=3): vLLM's order (input
        // lengths, output lengths, vocabulary offsets), the 32-bit half kept between calls.
        let mut g = NumpyGenerator::new(0);
        assert_eq!(draws(&mut g, 150, 251, 5), [235, 214, 201, 177, 181]);
        assert_eq!(draws(&mut g, 43, 53, 5), [43, 43, 43, 44, 51]);
        assert_eq!(draws(&mut g, 0, 8192, 3), [5320, 7477, 4125]);
        let mut g = NumpyGenerator::new(42);
        assert_eq!(
            draws(&mut g, 100, 301, 7),
            [117, 255, 231, 188, 187, 272, 117]
        );
        // A seed of two words.
        let mut g = NumpyGenerator::new((1 << 40) + 5);
        assert_eq!(
            draws(&mut g, 1, 1_000_001, 4),
            [14160, 4740, 449971, 372585]
        );
        // A one-value range draws nothing.
        let mut g = NumpyGenerator::new(7);
        assert_eq!(draws(&mut g, 200, 201, 3), [200, 200, 200]);
        assert_eq!(draws(&mut g, 10, 13, 4), [12, 11, 12, 12]);
    }
}
