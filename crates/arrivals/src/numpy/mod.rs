//! numpy's random generators, bit for bit, where `vllm bench serve` draws from them: with the
//! same seed, `arrivals --vllm-compatible` gives vLLM's request gaps (the legacy global
//! generator, [`NumpyLegacy`]) and its random dataset's lengths (`np.random.default_rng`,
//! [`NumpyGenerator`]), so a run can be compared with vLLM's request by request.

mod generator;
mod legacy;

pub use generator::NumpyGenerator;
pub use legacy::NumpyLegacy;
