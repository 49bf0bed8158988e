//! A hasher for maps keyed by one integer (request ids, histogram buckets), looked up once per
//! streamed event: std's SipHash costs more than the rest of such a lookup. One folded multiply,
//! as foldhash and ahash's fallback do it: the 128-bit product of the key and an odd constant,
//! its high half xor its low half, so that every bit of the key reaches the low bits that pick
//! a table slot. Not resistant to chosen collisions; the keys come from the stream a user chose
//! to read.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by integers, hashed with [`IntHasher`].
pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// Folded-multiply hashing of integer keys (see the module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct IntHasher(u64);

/// An odd constant with well-mixed bits (the fractional part of pi, made odd).
const SEED: u64 = 0x243f_6a88_85a3_08d3;

/// The high and low halves of the full product, xored.
fn folded_multiply(a: u64, b: u64) -> u64 {
    let full = u128::from(a) * u128::from(b);
    (full as u64) ^ ((full >> 64) as u64)
}

impl Hasher for IntHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = folded_multiply(self.0 ^ n, SEED);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(n: u64) -> u64 {
        BuildHasherDefault::<IntHasher>::default().hash_one(n)
    }

    #[test]
    fn consecutive_ids_spread_over_the_low_bits() {
        // 4096 consecutive ids in a 4096-slot table take about as many slots as random keys
        // would (1 - 1/e of them, 2589).
        let mut slots = std::collections::HashSet::new();
        for id in 10_000..14_096u64 {
            slots.insert(hash(id) & 4095);
        }
        assert!(slots.len() > 2500, "{} slots of 4096", slots.len());
    }

    #[test]
    fn a_map_works_as_a_map() {
        let mut m: IntMap<u64, u64> = IntMap::default();
        for i in 0..1000 {
            *m.entry(i % 37).or_insert(0) += 1;
        }
        assert_eq!(m.len(), 37);
        assert_eq!(m[&0], 28);
    }
}
