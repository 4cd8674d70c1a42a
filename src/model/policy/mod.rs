//! Caller-side policies as small pure pieces, each unit-tested on its own: the attempt timeout
//! rule, full-jitter backoff and the gRFC A6 retry throttle. The simulation composes them in
//! `caller`.

pub mod backoff;
pub mod throttle;
pub mod timeout;
