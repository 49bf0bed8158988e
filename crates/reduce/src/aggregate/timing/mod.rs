//! The run in time: the instants that bound it ([`span`]), which stretch of it is measured
//! ([`window`]), what each slice of it held
//! ([`intervals`], `--every`), and how hard it loaded the server ([`load`]: peak throughput over
//! 1 s from [`peak`], requests in flight from [`concurrency`], and server throughput derived
//! from per-user rates).

pub mod concurrency;
pub mod grid;
pub mod intervals;
pub mod load;
pub mod peak;
pub mod span;
pub mod window;
