//! The degenerate open-loop process of `--rate inf`: every request at offset 0, so `fire` sends
//! them all as fast as it can.

use super::{ArrivalProcess, ProcessError};
use tokenpipe_format::LoopMode;

/// Every request at offset 0; draws nothing and never overflows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllAtOnce;

impl ArrivalProcess for AllAtOnce {
    fn mode(&self) -> LoopMode {
        LoopMode::Open
    }

    fn next_offset_ns(&mut self) -> Result<Option<u64>, ProcessError> {
        Ok(Some(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offset_is_zero() {
        let mut p = AllAtOnce;
        for _ in 0..3 {
            assert_eq!(p.next_offset_ns(), Ok(Some(0)));
        }
    }
}
