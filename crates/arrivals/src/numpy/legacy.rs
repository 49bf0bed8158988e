//! numpy's legacy global generator (`np.random.seed(s)` then `np.random.gamma(k, θ)`), bit for
//! bit: `vllm bench serve` draws its request gaps from it, so `--vllm-compatible` with the same
//! seed sends the same requests at the same instants as vLLM does.
//!
//! This is numpy's `RandomState`: a Mersenne Twister (MT19937) seeded by `init_genrand`, doubles
//! of 53 bits from two outputs, and the legacy gamma sampler (Marsaglia–Tsang for a shape above
//! one, with the polar Box–Muller normal that keeps its second value; a rejection sampler
//! below one; the exponential at exactly one). The tests check it against values numpy 2.3
//! printed.

/// The state numpy's `np.random.seed(seed)` leaves.
#[derive(Clone)]
pub struct NumpyLegacy {
    mt: Box<[u32; N]>,
    index: usize,
    /// The second normal of the last Box–Muller pair, served next.
    gauss: Option<f64>,
}

const N: usize = 624;
const M: usize = 397;

impl NumpyLegacy {
    /// `np.random.seed(seed)`: numpy takes seeds of 0 to 2³² − 1.
    pub fn new(seed: u32) -> Self {
        let mut mt = Box::new([0u32; N]);
        mt[0] = seed;
        for i in 1..N {
            let prev = mt[i - 1];
            mt[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Self {
            mt,
            index: N,
            gauss: None,
        }
    }

    fn twist(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        const MATRIX: u32 = 0x9908_b0df;
        for i in 0..N {
            let y = (self.mt[i] & UPPER) | (self.mt[(i + 1) % N] & LOWER);
            let mut next = self.mt[(i + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                next ^= MATRIX;
            }
            self.mt[i] = next;
        }
        self.index = 0;
    }

    /// The next 32-bit output.
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.mt[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `random_sample()`: a double in [0, 1) from 27 + 26 bits of two outputs.
    pub fn next_double(&mut self) -> f64 {
        let a = (self.next_u32() >> 5) as f64;
        let b = (self.next_u32() >> 6) as f64;
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }

    fn standard_exponential(&mut self) -> f64 {
        -(1.0 - self.next_double()).ln()
    }

    fn gauss(&mut self) -> f64 {
        if let Some(g) = self.gauss.take() {
            return g;
        }
        let (x1, x2, r2) = loop {
            let x1 = 2.0 * self.next_double() - 1.0;
            let x2 = 2.0 * self.next_double() - 1.0;
            let r2 = x1 * x1 + x2 * x2;
            if r2 < 1.0 && r2 != 0.0 {
                break (x1, x2, r2);
            }
        };
        let f = (-2.0 * r2.ln() / r2).sqrt();
        self.gauss = Some(f * x1);
        f * x2
    }

    fn standard_gamma(&mut self, shape: f64) -> f64 {
        if shape == 1.0 {
            return self.standard_exponential();
        }
        if shape == 0.0 {
            return 0.0;
        }
        if shape < 1.0 {
            loop {
                let u = self.next_double();
                let v = self.standard_exponential();
                if u <= 1.0 - shape {
                    let x = u.powf(1.0 / shape);
                    if x <= v {
                        return x;
                    }
                } else {
                    let y = -((1.0 - u) / shape).ln();
                    let x = (1.0 - shape + shape * y).powf(1.0 / shape);
                    if x <= v + y {
                        return x;
                    }
                }
            }
        }
        let b = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * b).sqrt();
        loop {
            let (x, mut v) = loop {
                let x = self.gauss();
                let v = 1.0 + c * x;
                if v > 0.0 {
                    break (x, v);
                }
            };
            v = v * v * v;
            let u = self.next_double();
            if u < 1.0 - 0.0331 * (x * x) * (x * x) {
                return b * v;
            }
            if u.ln() < 0.5 * x * x + b * (1.0 - v + v.ln()) {
                return b * v;
            }
        }
    }

    /// `np.random.gamma(shape=shape, scale=scale)`.
    pub fn gamma(&mut self, shape: f64, scale: f64) -> f64 {
        scale * self.standard_gamma(shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_and_doubles_are_numpys() {
        // np.random.RandomState(0).randint(0, 2**32, size=3, dtype=np.uint64)
        let mut g = NumpyLegacy::new(0);
        let ints: Vec<u32> = (0..3).map(|_| g.next_u32()).collect();
        assert_eq!(ints, [2357136044, 2546248239, 3071714933]);
        // np.random.RandomState(0).random_sample() twice
        let mut g = NumpyLegacy::new(0);
        assert_eq!(g.next_double(), 0.5488135039273248);
        assert_eq!(g.next_double(), 0.7151893663724195);
    }

    /// np.random.seed(seed); [np.random.gamma(shape=k, scale=1/(2*k)) for _ in range(5)]
    #[test]
    fn gamma_draws_are_numpys_for_every_branch() {
        let cases: [(u32, f64, [f64; 5]); 6] = [
            (
                0,
                1.0,
                [
                    0.397937254081555,
                    0.6279653814829189,
                    0.4616115729020344,
                    0.39360057615863536,
                    0.2755242455477496,
                ],
            ),
            (
                0,
                0.7,
                [
                    0.35042152626074563,
                    0.4261359314257447,
                    0.21824291130875656,
                    0.23059250505335924,
                    2.451473785525558,
                ],
            ),
            (
                42,
                0.5,
                [
                    0.14028030062619642,
                    0.6590180328421851,
                    0.024341816165506288,
                    0.0033737060025058087,
                    0.3757291395473922,
                ],
            ),
            (
                7,
                2.0,
                [
                    0.28365200126619494,
                    0.21038775514600822,
                    0.41733368306792024,
                    0.838975573351344,
                    0.6420796596354572,
                ],
            ),
            (
                123,
                1.5,
                [
                    0.1143473368227968,
                    0.8698353791743871,
                    0.21555257323143534,
                    1.3379796205678551,
                    0.0061577250466581645,
                ],
            ),
            (
                0,
                0.1,
                [
                    0.012394182700805997,
                    0.031654726918405936,
                    0.0009313036621783961,
                    0.0012871116296866028,
                    5.061978475170941,
                ],
            ),
        ];
        for (seed, k, want) in cases {
            let mut g = NumpyLegacy::new(seed);
            let got: Vec<f64> = (0..5).map(|_| g.gamma(k, 1.0 / (2.0 * k))).collect();
            assert_eq!(got, want, "seed {seed}, shape {k}");
        }
        // The largest seed numpy takes.
        let mut g = NumpyLegacy::new(u32::MAX);
        assert_eq!(g.gamma(1.0, 0.5), 0.051366445995518685);
        assert_eq!(g.gamma(1.0, 0.5), 1.2173892351666062);
    }

    #[test]
    fn a_thousand_draws_cross_a_twist() {
        // 624 outputs per twist: a long run must keep matching past the first regeneration.
        // np.random.seed(0); [np.random.gamma(1.0, 1.0) for _ in range(1000)][-1]
        let mut g = NumpyLegacy::new(0);
        let last = (0..1000).map(|_| g.gamma(1.0, 1.0)).last().unwrap();
        assert_eq!(last, 1.1305400299356234);
    }
}
