//! Every C ABI entry point with arbitrary bytes as its JSON arguments.
//!
//! Input layout: byte 0 picks the entry point, byte 1 is a mask (bits 0–3: pass NULL for
//! argument 0–3; bits 4–5: which handle; bit 6: NULL `out`), and the rest, split at NUL
//! bytes, are the string arguments (C strings cannot hold NUL; invalid UTF-8 stays in).
//! Missing arguments are NULL.
//!
//! Handles are 0, a freed (stale) one, a live completion queue (the wrong kind for every
//! other function) or one never issued: the runtime entry points run against closed or
//! absent handles. Entry points that would start an adapter host (run, runtime start,
//! environment prepare, their `_begin` twins, doctor) get the fuzzed config only when it
//! cannot select an adapter — it fails to decode, or `fabric_plan` reports
//! `adapter_not_found` — and otherwise a config naming an absent adapter, so a fuzz run
//! never starts processes; their other arguments (request, options) are always fuzzed.
//!
//! Every call must return a known status, never `FABRIC_STATUS_INTERNAL` (a caught panic
//! or an encoding bug), and an error status must come with an ErrorInfo naming its code.

use fabric_config::codes;
use std::ffi::{CStr, CString, c_char};
use std::sync::OnceLock;

use fabric_ffi::{self as ffi, FabricStatus};
use serde_json::Value;

/// A config that decodes and validates but names an adapter no discovery source has.
const ABSENT_CONFIG: &str =
    r#"{"metadata": {"name": "fuzz"}, "harness": {"adapter_id": "fuzz.absent-adapter"}}"#;

/// Codes with which `fabric_validate` rejects a config before any rule runs (so no entry
/// point gets as far as selecting an adapter).
const UNDECODABLE: &[&str] = &[
    codes::NULL_ARGUMENT,
    codes::INVALID_UTF8,
    codes::INVALID_JSON,
    codes::UNKNOWN_FIELD,
    codes::MISSING_FIELD,
    codes::INVALID_TYPE,
    codes::INVALID_VALUE,
    codes::UNKNOWN_VARIANT,
];

/// Handles the harness owns for the whole process.
struct Handles {
    /// A completion queue kept alive (right kind for queue calls, wrong for the rest).
    live_queue: u64,
    /// A completion queue that was freed.
    stale: u64,
}

fn handles() -> &'static Handles {
    static HANDLES: OnceLock<Handles> = OnceLock::new();
    HANDLES.get_or_init(|| {
        let live_queue = new_queue();
        let stale = new_queue();
        assert_eq!(
            ffi::fabric_completion_queue_free(stale),
            0,
            "free a new queue"
        );
        Handles { live_queue, stale }
    })
}

fn new_queue() -> u64 {
    let mut queue = 0;
    let mut out: *mut c_char = std::ptr::null_mut();
    // SAFETY: both out-pointers are valid for one write.
    let status = unsafe { ffi::fabric_completion_queue_new(&mut queue, &mut out) };
    assert_eq!(status, 0, "completion queue");
    queue
}

/// One decoded fuzz input.
struct Input {
    entry: u8,
    mask: u8,
    args: Vec<Option<CString>>,
}

impl Input {
    fn parse(data: &[u8]) -> Option<Input> {
        let (&entry, rest) = data.split_first()?;
        let (&mask, rest) = rest.split_first().unwrap_or((&0, &[]));
        let mut args: Vec<Option<CString>> = rest
            .split(|&b| b == 0)
            .map(|part| CString::new(part).ok())
            .collect();
        for (i, arg) in args.iter_mut().enumerate().take(4) {
            if mask & (1 << i) != 0 {
                *arg = None;
            }
        }
        Some(Input { entry, mask, args })
    }

    /// Argument `i` as a C pointer (NULL when absent).
    fn arg(&self, i: usize) -> *const c_char {
        self.args
            .get(i)
            .and_then(Option::as_ref)
            .map_or(std::ptr::null(), |s| s.as_ptr())
    }

    fn handle(&self) -> u64 {
        let handles = handles();
        match (self.mask >> 4) & 3 {
            0 => 0,
            1 => handles.stale,
            2 => handles.live_queue,
            _ => (1 << 53) - 1,
        }
    }

    /// As [`Input::handle`], but never the live queue (for calls that free or close).
    fn handle_to_free(&self) -> u64 {
        let handle = self.handle();
        if handle == handles().live_queue {
            handles().stale
        } else {
            handle
        }
    }

    fn null_out(&self) -> bool {
        self.mask & 0x40 != 0
    }
}

/// Feeds one input to the entry point it selects (see the module docs).
pub fn abi(data: &[u8]) {
    let Some(input) = Input::parse(data) else {
        return;
    };
    let entry = input.entry % ENTRIES;
    call_entry(entry, &input);
}

const ENTRIES: u8 = 18;

fn call_entry(entry: u8, input: &Input) {
    let (a0, a1, a2) = (input.arg(0), input.arg(1), input.arg(2));
    let handle = input.handle();
    let null_out = input.null_out();
    let status = match entry {
        // SAFETY (all arms): string arguments are NULL or NUL-terminated and outlive the
        // call; out-pointers are NULL or valid for one write (see `call`).
        0 => call(null_out, |out| unsafe { ffi::fabric_validate(a0, a1, out) }),
        1 => call(null_out, |out| unsafe { ffi::fabric_plan(a0, a1, out) }),
        2 => call(null_out, |out| unsafe {
            ffi::fabric_inspect(a0, a1, a2, out)
        }),
        3 => {
            let config = gated_config(input, 1);
            let c = ptr(&config);
            call(null_out, |out| unsafe { ffi::fabric_doctor(c, a1, out) })
        }
        4 => {
            let config = gated_config(input, 2);
            let c = ptr(&config);
            call(null_out, |out| unsafe { ffi::fabric_run(c, a1, a2, out) })
        }
        5 => {
            let config = gated_config(input, 1);
            let c = ptr(&config);
            let mut runtime = 0;
            let status = call(null_out, |out| unsafe {
                ffi::fabric_runtime_start(c, a1, &mut runtime, out)
            });
            assert_ne!(status, 0, "a gated config never starts a runtime");
            status
        }
        6 => {
            let config = gated_config(input, 1);
            let c = ptr(&config);
            let mut environment = 0;
            let status = call(null_out, |out| unsafe {
                ffi::fabric_environment_prepare(c, a1, &mut environment, out)
            });
            if status == 0 {
                release_environment(environment);
            }
            status
        }
        7 => {
            let config = gated_config(input, 2);
            let c = ptr(&config);
            let queue = queue_for(input);
            let mut op = 0;
            let status = call(null_out, |out| unsafe {
                ffi::fabric_run_begin(c, a1, a2, queue, &mut op, out)
            });
            finish_operation(status, op);
            status
        }
        8 => {
            let config = gated_config(input, 1);
            let c = ptr(&config);
            let queue = queue_for(input);
            let mut op = 0;
            let status = call(null_out, |out| unsafe {
                ffi::fabric_runtime_start_begin(c, a1, queue, &mut op, out)
            });
            finish_operation(status, op);
            status
        }
        9 => call(null_out, |out| unsafe {
            ffi::fabric_runtime_invoke(handle, a0, out)
        }),
        10 => {
            let mut stream = 0;
            call(null_out, |out| unsafe {
                ffi::fabric_runtime_invoke_openai_stream(handle, a0, &mut stream, out)
            })
        }
        11 => {
            let mut stream = 0;
            call(null_out, |out| unsafe {
                ffi::fabric_runtime_invoke_stream(handle, a0, &mut stream, out)
            })
        }
        12 => {
            let mut op = 0;
            let status = call(null_out, |out| unsafe {
                ffi::fabric_runtime_invoke_begin(handle, a0, 0, &mut op, out)
            });
            finish_operation(status, op);
            status
        }
        13 => call(null_out, |out| unsafe {
            ffi::fabric_check(handle, a0, out)
        }),
        14 => {
            let mut runtime = 0;
            call(null_out, |out| unsafe {
                ffi::fabric_environment_start_runtime(handle, a0, a1, &mut runtime, out)
            })
        }
        15 => handle_calls(handle, null_out),
        16 => free_calls(input.handle_to_free()),
        _ => {
            // SAFETY: NULL is allowed.
            unsafe { ffi::fabric_string_free(std::ptr::null_mut()) };
            // SAFETY: the version is a static NUL-terminated string.
            let version = unsafe { CStr::from_ptr(ffi::fabric_version()) };
            assert!(version.to_str().is_ok(), "version is UTF-8");
            assert_eq!(ffi::fabric_abi_version(), ffi::ABI_VERSION);
            0
        }
    };
    check_status(status);
}

/// The handle-only entry points that write a document.
fn handle_calls(handle: u64, null_out: bool) -> i32 {
    let mut fd = -1;
    let mut op = 0;
    // SAFETY (all): out-pointers are NULL or valid for one write.
    call(null_out, |out| unsafe {
        ffi::fabric_runtime_stop(handle, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_runtime_status(handle, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_runtime_resource_snapshot(handle, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_environment_release(handle, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_stream_next(handle, 0, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_stream_next_batch(handle, 0, 4, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_stream_ready_fd(handle, &mut fd, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_stream_result(handle, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_operation_ready_fd(handle, &mut fd, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_operation_take(handle, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_completion_queue_fd(handle, &mut fd, out)
    });
    call(null_out, |out| unsafe {
        ffi::fabric_completion_queue_next(handle, &mut op, out)
    })
}

/// The entry points that release or cancel (statuses only).
fn free_calls(handle: u64) -> i32 {
    for status in [
        ffi::fabric_operation_cancel(handle),
        ffi::fabric_stream_close(handle),
        ffi::fabric_runtime_free(handle),
        ffi::fabric_environment_free(handle),
        ffi::fabric_stream_free(handle),
        ffi::fabric_operation_free(handle),
        ffi::fabric_completion_queue_free(handle),
    ] {
        check_status(status);
        // `_free(0)` may be a no-op (OK); every other handle here is bad.
        let no_op = handle == 0 && status == FabricStatus::Ok as i32;
        assert!(
            no_op || status == FabricStatus::InvalidArgument as i32,
            "no handle the harness frees is live (status {status})"
        );
    }
    0
}

fn ptr(s: &Option<CString>) -> *const c_char {
    s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())
}

fn queue_for(input: &Input) -> u64 {
    // The live queue collects finished operations; the others are 0 or bad handles.
    input.handle()
}

/// The config argument, or [`ABSENT_CONFIG`] when the fuzzed one could select an adapter
/// (`options` is the index of the options argument the entry point takes).
fn gated_config(input: &Input, options: usize) -> Option<CString> {
    let config = input.args.first().cloned().flatten()?;
    let options = input.arg(options);
    let absent = || Some(CString::new(ABSENT_CONFIG).expect("no NUL"));
    // SAFETY: `config` and `options` are NUL-terminated (or NULL) and outlive the calls.
    let (status, error) =
        call_doc(|out| unsafe { ffi::fabric_validate(config.as_ptr(), options, out) });
    if status != 0 {
        return if code(&error).is_some_and(|c| UNDECODABLE.contains(&c)) {
            Some(config)
        } else {
            absent()
        };
    }
    // SAFETY: as above.
    let (status, error) =
        call_doc(|out| unsafe { ffi::fabric_plan(config.as_ptr(), options, out) });
    if status != 0 && code(&error) == Some(codes::ADAPTER_NOT_FOUND) {
        Some(config)
    } else {
        absent()
    }
}

fn code(doc: &Option<Value>) -> Option<&str> {
    doc.as_ref()?.get("code")?.as_str()
}

/// Waits for an operation a `_begin` call created, takes its outcome and frees it.
fn finish_operation(status: i32, op: u64) {
    if status != 0 {
        return;
    }
    let mut fd = -1;
    // SAFETY: both out-pointers are valid for one write.
    let (status, _) = call_doc(|out| unsafe { ffi::fabric_operation_ready_fd(op, &mut fd, out) });
    assert_eq!(status, 0, "a new operation has a ready descriptor");
    let mut pollfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd; the descriptor stays open until the operation is freed.
    let ready = unsafe { libc::poll(&mut pollfd, 1, 30_000) };
    assert_eq!(ready, 1, "a gated operation finishes within 30 s");
    // SAFETY: `out` is valid for one write.
    let (status, _) = call_doc(|out| unsafe { ffi::fabric_operation_take(op, out) });
    assert_ne!(status, 0, "a gated operation fails (no adapter)");
    assert_eq!(ffi::fabric_operation_free(op), 0, "free a taken operation");
}

fn release_environment(environment: u64) {
    // SAFETY: `out` is valid for one write.
    call_doc(|out| unsafe { ffi::fabric_environment_release(environment, out) });
    assert_eq!(ffi::fabric_environment_free(environment), 0);
}

/// Calls `f` with a fresh `out` slot (or NULL), checks the status and document, frees the
/// document; returns the status.
fn call(null_out: bool, f: impl FnOnce(*mut *mut c_char) -> i32) -> i32 {
    if null_out {
        let status = f(std::ptr::null_mut());
        check_status(status);
        return status;
    }
    call_doc(f).0
}

/// As [`call`] with an `out` slot; returns the status and the decoded document.
fn call_doc(f: impl FnOnce(*mut *mut c_char) -> i32) -> (i32, Option<Value>) {
    let mut out: *mut c_char = std::ptr::null_mut();
    let status = f(&mut out);
    check_status(status);
    let doc = if out.is_null() {
        None
    } else {
        // SAFETY: the library wrote a NUL-terminated string it owns; freed once below.
        let text = unsafe { CStr::from_ptr(out) }.to_str().map(str::to_owned);
        // SAFETY: `out` came from the library and is freed exactly once.
        unsafe { ffi::fabric_string_free(out) };
        let text = text.expect("library strings are UTF-8");
        Some(serde_json::from_str::<Value>(&text).expect("library strings are JSON"))
    };
    let is_error = (1..=8).contains(&status);
    if is_error {
        let doc = doc.as_ref().expect("an error status writes an ErrorInfo");
        let code = doc.get("code").and_then(Value::as_str).unwrap_or("");
        assert!(!code.is_empty(), "an ErrorInfo names its code: {doc}");
        assert!(
            doc.get("stage").and_then(Value::as_str).is_some(),
            "and its stage: {doc}"
        );
    }
    (status, doc)
}

fn check_status(status: i32) {
    assert!(
        FabricStatus::ALL.iter().any(|s| *s as i32 == status),
        "unknown status {status}"
    );
    assert_ne!(
        status,
        FabricStatus::Internal as i32,
        "FABRIC_STATUS_INTERNAL: a caught panic or an encoding bug"
    );
}
