//! The parts of `fire_overhead`: the floor client it compares `fire` with, one measured run of
//! either client, its ITL error token by token, and the percentile they are read with.

pub mod floor;
pub mod itl;
pub mod measure;
pub mod stats;
