//! Runtime health checks over an authenticated loopback channel.
