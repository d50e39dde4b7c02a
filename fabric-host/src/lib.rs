//! Adapter host processes on one mio reactor; runtimes, invocations, run(); the Fabric facade.
