//! The handle registry: nonzero, never-reused integer ids → `Arc<T>`, kind-checked.
//!
//! Calls clone the `Arc` under the lock and release the lock before doing any work, so a
//! `_free` racing a blocked call is safe (the object lives until the call returns) and a
//! stale id is an `INVALID_ARGUMENT` status, never undefined behaviour.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use fabric_config::Stage;

use crate::api_batch::BatchObject;
use crate::api_prewarm::PrewarmObject;
use crate::error::FfiError;
use crate::objects::{EnvironmentObject, RuntimeObject, ServiceObject, StreamObject};
use crate::operation::{OperationObject, QueueObject};

/// Largest id ever issued: 2^53 − 1, exactly representable as a JavaScript number.
pub(crate) const MAX_HANDLE: u64 = (1 << 53) - 1;

/// One registered object.
#[derive(Debug, Clone)]
pub(crate) enum Object {
    Runtime(Arc<RuntimeObject>),
    Environment(Arc<EnvironmentObject>),
    Service(Arc<ServiceObject>),
    Stream(Arc<StreamObject>),
    Operation(Arc<OperationObject>),
    Queue(Arc<QueueObject>),
    Prewarm(Arc<PrewarmObject>),
    Batch(Arc<BatchObject>),
    #[cfg(test)]
    Probe(Arc<tests::Probe>),
}

impl Object {
    fn kind(&self) -> &'static str {
        match self {
            Object::Runtime(_) => "runtime",
            Object::Environment(_) => "environment",
            Object::Service(_) => "service",
            Object::Stream(_) => "stream",
            Object::Operation(_) => "operation",
            Object::Queue(_) => "completion queue",
            Object::Prewarm(_) => "prewarm",
            Object::Batch(_) => "batch",
            #[cfg(test)]
            Object::Probe(_) => "probe",
        }
    }
}

/// A handle kind: how to wrap into and unwrap from an [`Object`].
pub(crate) trait Kind: Sized {
    const NAME: &'static str;
    fn wrap(value: Arc<Self>) -> Object;
    fn unwrap(object: &Object) -> Option<&Arc<Self>>;
}

impl Kind for RuntimeObject {
    const NAME: &'static str = "runtime";
    fn wrap(value: Arc<Self>) -> Object {
        Object::Runtime(value)
    }
    fn unwrap(object: &Object) -> Option<&Arc<Self>> {
        match object {
            Object::Runtime(value) => Some(value),
            _ => None,
        }
    }
}

impl Kind for EnvironmentObject {
    const NAME: &'static str = "environment";
    fn wrap(value: Arc<Self>) -> Object {
        Object::Environment(value)
    }
    fn unwrap(object: &Object) -> Option<&Arc<Self>> {
        match object {
            Object::Environment(value) => Some(value),
            _ => None,
        }
    }
}

impl Kind for ServiceObject {
    const NAME: &'static str = "service";
    fn wrap(value: Arc<Self>) -> Object {
        Object::Service(value)
    }
    fn unwrap(object: &Object) -> Option<&Arc<Self>> {
        match object {
            Object::Service(value) => Some(value),
            _ => None,
        }
    }
}

impl Kind for StreamObject {
    const NAME: &'static str = "stream";
    fn wrap(value: Arc<Self>) -> Object {
        Object::Stream(value)
    }
    fn unwrap(object: &Object) -> Option<&Arc<Self>> {
        match object {
            Object::Stream(value) => Some(value),
            _ => None,
        }
    }
}

impl Kind for OperationObject {
    const NAME: &'static str = "operation";
    fn wrap(value: Arc<Self>) -> Object {
        Object::Operation(value)
    }
    fn unwrap(object: &Object) -> Option<&Arc<Self>> {
        match object {
            Object::Operation(value) => Some(value),
            _ => None,
        }
    }
}

impl Kind for QueueObject {
    const NAME: &'static str = "completion queue";
    fn wrap(value: Arc<Self>) -> Object {
        Object::Queue(value)
    }
    fn unwrap(object: &Object) -> Option<&Arc<Self>> {
        match object {
            Object::Queue(value) => Some(value),
            _ => None,
        }
    }
}

impl Kind for PrewarmObject {
    const NAME: &'static str = "prewarm";
    fn wrap(value: Arc<Self>) -> Object {
        Object::Prewarm(value)
    }
    fn unwrap(object: &Object) -> Option<&Arc<Self>> {
        match object {
            Object::Prewarm(value) => Some(value),
            _ => None,
        }
    }
}

#[derive(Debug)]
struct Registry {
    /// The next id to issue; ids below it were issued once and are never issued again.
    next: u64,
    objects: BTreeMap<u64, Object>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    next: 1,
    objects: BTreeMap::new(),
});

fn lock() -> MutexGuard<'static, Registry> {
    // A panic while holding the lock cannot leave the map inconsistent (every mutation is
    // a single insert/remove), so a poisoned lock is safe to keep using.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers an object and returns its new id.
pub(crate) fn insert<T: Kind>(stage: Stage, value: Arc<T>) -> Result<u64, FfiError> {
    let mut registry = lock();
    let id = registry.next;
    if id > MAX_HANDLE {
        return Err(FfiError::internal(
            stage,
            "handle_space_exhausted",
            "every handle id up to 2^53-1 has been issued",
        ));
    }
    registry.next = id + 1;
    registry.objects.insert(id, T::wrap(value));
    Ok(id)
}

fn lookup_error(stage: Stage, param: &'static str, id: u64, issued: bool) -> FfiError {
    if id == 0 {
        FfiError::invalid_handle(stage, "null_handle", param, id, format!("`{param}` is 0"))
    } else if issued {
        FfiError::invalid_handle(
            stage,
            "stale_handle",
            param,
            id,
            format!("`{param}` refers to a handle that was already freed"),
        )
    } else {
        FfiError::invalid_handle(
            stage,
            "unknown_handle",
            param,
            id,
            format!("`{param}` is not a handle issued by this library"),
        )
    }
}

fn wrong_kind(stage: Stage, param: &'static str, id: u64, want: &str, got: &str) -> FfiError {
    FfiError::invalid_handle(
        stage,
        "wrong_handle_kind",
        param,
        id,
        format!("`{param}` is a {got} handle, expected a {want} handle"),
    )
}

/// Looks up a live handle of kind `T` and clones its `Arc`.
pub(crate) fn get<T: Kind>(stage: Stage, param: &'static str, id: u64) -> Result<Arc<T>, FfiError> {
    let registry = lock();
    match registry.objects.get(&id) {
        Some(object) => match T::unwrap(object) {
            Some(value) => Ok(Arc::clone(value)),
            None => Err(wrong_kind(stage, param, id, T::NAME, object.kind())),
        },
        None => Err(lookup_error(
            stage,
            param,
            id,
            id != 0 && id < registry.next,
        )),
    }
}

/// Removes a handle of kind `T`. `0` is a no-op (`Ok(None)`); an unknown, released or
/// wrong-kind id is an error and leaves the registry unchanged. The returned `Arc` is
/// dropped by the caller outside the lock.
pub(crate) fn remove<T: Kind>(
    stage: Stage,
    param: &'static str,
    id: u64,
) -> Result<Option<Arc<T>>, FfiError> {
    if id == 0 {
        return Ok(None);
    }
    let mut registry = lock();
    let issued = id < registry.next;
    match registry.objects.get(&id) {
        Some(object) => {
            if T::unwrap(object).is_none() {
                return Err(wrong_kind(stage, param, id, T::NAME, object.kind()));
            }
        }
        None => return Err(lookup_error(stage, param, id, issued)),
    }
    Ok(registry
        .objects
        .remove(&id)
        .and_then(|object| T::unwrap(&object).cloned()))
}

/// The body of the plain `_free` entry points: removes handle `id` of kind `T` (`0` is a
/// no-op) inside the panic boundary and drops the registry's reference outside the lock;
/// returns the status (`INVALID_ARGUMENT` for a stale, unknown or wrong-kind id).
pub(crate) fn free<T: Kind>(stage: Stage, param: &'static str, id: u64) -> i32 {
    crate::boundary::ffi_boundary!(stage, {
        drop(remove::<T>(stage, param, id)?);
        Ok(())
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[derive(Debug)]
    pub(crate) struct Probe(pub(crate) u32);

    impl Kind for Probe {
        const NAME: &'static str = "probe";
        fn wrap(value: Arc<Self>) -> Object {
            Object::Probe(value)
        }
        fn unwrap(object: &Object) -> Option<&Arc<Self>> {
            match object {
                Object::Probe(value) => Some(value),
                _ => None,
            }
        }
    }

    fn code(error: FfiError) -> String {
        assert_eq!(error.status, crate::status::FabricStatus::InvalidArgument);
        error.info.code
    }

    #[test]
    fn lifecycle_and_misuse() {
        let id = insert(Stage::Start, Arc::new(Probe(7))).unwrap();
        assert!(id > 0 && id <= MAX_HANDLE);
        assert_eq!(get::<Probe>(Stage::Invoke, "h", id).unwrap().0, 7);
        // Wrong kind: a probe is not a runtime, and the probe stays registered.
        assert_eq!(
            code(get::<RuntimeObject>(Stage::Invoke, "runtime", id).unwrap_err()),
            "wrong_handle_kind"
        );
        assert_eq!(
            code(remove::<EnvironmentObject>(Stage::Release, "environment", id).unwrap_err()),
            "wrong_handle_kind"
        );
        assert!(get::<Probe>(Stage::Invoke, "h", id).is_ok());
        // Free, then use after free and double free are stale.
        let held = get::<Probe>(Stage::Invoke, "h", id).unwrap();
        assert!(remove::<Probe>(Stage::Stop, "h", id).unwrap().is_some());
        assert_eq!(held.0, 7, "a call holding the Arc keeps the object alive");
        assert_eq!(
            code(get::<Probe>(Stage::Invoke, "h", id).unwrap_err()),
            "stale_handle"
        );
        assert_eq!(
            code(remove::<Probe>(Stage::Stop, "h", id).unwrap_err()),
            "stale_handle"
        );
        // 0 and never-issued ids.
        assert!(remove::<Probe>(Stage::Stop, "h", 0).unwrap().is_none());
        assert_eq!(
            code(get::<Probe>(Stage::Invoke, "h", 0).unwrap_err()),
            "null_handle"
        );
        assert_eq!(
            code(get::<Probe>(Stage::Invoke, "h", MAX_HANDLE).unwrap_err()),
            "unknown_handle"
        );
        // Ids are never reused.
        let next = insert(Stage::Start, Arc::new(Probe(8))).unwrap();
        assert!(next > id);
        assert!(remove::<Probe>(Stage::Stop, "h", next).unwrap().is_some());
    }

    #[test]
    fn handle_objects_are_send_and_sync() {
        // Handles are used from any thread (koffi async, goroutines, Python workers).
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<RuntimeObject>();
        assert_send_sync::<EnvironmentObject>();
        assert_send_sync::<StreamObject>();
        assert_send_sync::<OperationObject>();
        assert_send_sync::<QueueObject>();
        assert_send_sync::<Object>();
    }

    #[test]
    fn concurrent_inserts_get_distinct_ids() {
        let threads: Vec<_> = (0..4)
            .map(|t| {
                std::thread::spawn(move || {
                    (0..200)
                        .map(|i| insert(Stage::Start, Arc::new(Probe(t * 1000 + i))).unwrap())
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        let mut ids: Vec<u64> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        let total = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), total);
        for id in ids {
            assert!(remove::<Probe>(Stage::Stop, "h", id).unwrap().is_some());
        }
    }
}
