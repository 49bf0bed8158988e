//! The parts of `fire_overhead`: the floor client it compares `fire` with, one measured run of
//! either client, and the percentile they are read with.

pub mod floor;
pub mod measure;
pub mod stats;
