//! Selected software evidence (`RunResult.execution`): the core's own snapshot, the
//! composition of the core's, the caller's and each adapter host's reports, and the bounds.
//!
//! This crate knows nothing of hosts: `fabric-host` hands it the caller's
//! `provenance.reports`, the adapter host's `start` report (or its absence) and, for process
//! adapters, what the core observed of the executable.
//!
//! ```
//! use fabric_config::options::BindingIdentity;
//! use fabric_provenance::{GuestReport, Parts, compose, core_inventory};
//!
//! let binding = BindingIdentity {
//!     name: "fabric-core".into(),
//!     version: "0.1.0".into(),
//!     runtime_name: Some("cpython".into()),
//!     runtime_version: Some("3.12.3".into()),
//! };
//! let core = core_inventory(Some(&binding));
//! let evidence = compose(Parts {
//!     core,
//!     caller: None,
//!     guest: GuestReport::Missing,
//!     host_observed: Vec::new(),
//! });
//! assert_eq!(evidence.inventories[0].context_ref, "ctx-1");
//! assert_eq!(evidence.inventories[0].entries[0].name, "fabric-core");
//! // An upstream-built adapter host sends no report: a `guest_sdk` gap.
//! assert_eq!(evidence.coverage.gaps[0].participant, "guest_sdk");
//! ```

#![forbid(unsafe_code)]

mod bounds;
mod compose;
mod snapshot;

pub use compose::{GuestReport, Parts, compose, executable_inventory};
pub use snapshot::{
    CORE_NAME, CORE_VERSION, core_inventory, has_snapshot, now_rfc3339, snapshots_taken,
};
