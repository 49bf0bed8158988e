//! simserve from inside the test process: the server as a library on 127.0.0.1:0, spoken to in
//! raw HTTP/1.1 so that nothing of a client library hides what goes on the wire.

mod access;
mod e2e;
mod faults;
mod metrics;
mod timing;
