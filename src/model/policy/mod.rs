//! Policies as small pure pieces, each unit-tested on its own: the attempt timeout rule, full-jitter
//! backoff, the gRFC A6 retry throttle, adaptive throttling, the circuit breaker, CoDel and the
//! rolling window they share. The simulation composes them in `caller`, `calls` and `service`.

pub mod adaptive;
pub mod backoff;
pub mod breaker;
pub mod codel;
pub mod rolling;
pub mod throttle;
pub mod timeout;
