package fabric

/*
// The C SDK's fabric.pc (scripts/package.sh) gives the header and the library; in this
// repository, bindings/go/dev-pkgconfig.sh writes one for the debug build (test.sh uses it).
#cgo pkg-config: fabric
#include <stdlib.h>
#include "fabric.h"

// Fails to compile against a header of another ABI; the library's own version is checked
// again at run time (fabric_abi_version) because a stale libfabric_ffi.a links fine.
// Keep in step with the generated ABIVersion (internal_test.go compares them).
#if FABRIC_ABI_VERSION != 2
#error "bindings/go needs FABRIC_ABI_VERSION 2"
#endif
*/
import "C"

import (
	"strings"
	"sync"
	"unsafe"
)

// nativeResult is one finished native call: its status and the decoded *out text.
type nativeResult struct {
	status int32
	text   string
	has    bool
	handle uint64
	err    error
}

// take decodes a library string and frees it with fabric_string_free.
func take(out *C.char) (string, bool) {
	if out == nil {
		return "", false
	}
	defer C.fabric_string_free(out)
	return C.GoString(out), true
}

// cstring converts a Go string for the duration of one call; NUL bytes are rejected
// because C would silently truncate at them.
func cstring(value, what string) (*C.char, error) {
	if strings.IndexByte(value, 0) >= 0 {
		return nil, newError(StatusInvalidArgument, &Info{ErrorInfo: ErrorInfo{
			Stage:   StageConfig,
			Code:    CodeInvalidArgument,
			Message: what + " must not contain NUL bytes",
		}})
	}
	return C.CString(value), nil
}

func free(pointer *C.char) {
	if pointer != nil {
		C.free(unsafe.Pointer(pointer))
	}
}

var (
	loadOnce sync.Once
	loadErr  error
)

// checkLibrary verifies (once) that the linked library speaks this package's ABI.
func checkLibrary() error {
	loadOnce.Do(func() {
		if got := uint32(C.fabric_abi_version()); got != ABIVersion {
			loadErr = &NativeUnavailableError{Info{ErrorInfo: ErrorInfo{
				Stage:   StageConfig,
				Code:    CodeABIVersionMismatch,
				Message: "linked libfabric_ffi has another C ABI version; rebuild it with 'cargo build -p fabric-ffi'",
			}}}
		}
	})
	return loadErr
}

// LibraryVersion is the linked core's version, for example "0.1.0".
func LibraryVersion() string {
	return C.GoString(C.fabric_version())
}

type configCall func(config, options *C.char, out **C.char) C.int32_t

// handleCall is a configCall that also writes a new handle (runtime, environment,
// service or operation: every handle type is a uint64_t).
type handleCall func(config, options *C.char, handle *C.uint64_t, out **C.char) C.int32_t

// documentCall is a handleCall with one more document (an attach call's reference, a
// run's request) between config and options.
type documentCall func(config, document, options *C.char, handle *C.uint64_t, out **C.char) C.int32_t

// requestCall writes a new handle for a request document (the invocations that return
// a stream or an operation).
type requestCall func(request *C.char, handle *C.uint64_t, out **C.char) C.int32_t

func callConfig(fn configCall, config string, o options) nativeResult {
	return withConfig(config, o, func(cConfig, cOptions *C.char) nativeResult {
		var out *C.char
		status := fn(cConfig, cOptions, &out)
		return finish(status, out, 0)
	})
}

// callHandle is callConfig for the calls that create a handle.
func callHandle(fn handleCall, config string, o options) nativeResult {
	return withConfig(config, o, func(cConfig, cOptions *C.char) nativeResult {
		var handle C.uint64_t
		var out *C.char
		status := fn(cConfig, cOptions, &handle, &out)
		return finish(status, out, uint64(handle))
	})
}

// callDocument is callHandle with one more document, converted first (what names it in
// a conversion error).
func callDocument(fn documentCall, config, document, what string, o options) nativeResult {
	cDocument, err := cstring(document, what)
	if err != nil {
		return errorResult(err)
	}
	defer free(cDocument)
	return callHandle(func(c, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return fn(c, cDocument, b, h, out)
	}, config, o)
}

// callRequest converts request for fn and returns the handle fn wrote.
func callRequest(fn requestCall, request string) nativeResult {
	cRequest, err := cstring(request, "request")
	if err != nil {
		return errorResult(err)
	}
	defer free(cRequest)
	var handle C.uint64_t
	var out *C.char
	status := fn(cRequest, &handle, &out)
	return finish(status, out, uint64(handle))
}

// withConfig converts config and the options object for the duration of call, or
// returns the conversion error.
func withConfig(config string, o options, call func(cConfig, cOptions *C.char) nativeResult) nativeResult {
	cConfig, err := cstring(config, "config")
	if err != nil {
		return errorResult(err)
	}
	defer free(cConfig)
	cOptions, err := optionsCString(o)
	if err != nil {
		return errorResult(err)
	}
	defer free(cOptions)
	return call(cConfig, cOptions)
}

// optionsCString is the options_json argument as a C string (freed with free).
func optionsCString(o options) (*C.char, error) {
	text, err := o.json()
	if err != nil {
		return nil, err
	}
	return cstring(text, "options")
}

// finish decodes and frees *out and packs one finished native call. Callers store the
// call's status first: Go does not order reading out/handle against a call in the same
// argument list.
func finish(status C.int32_t, out *C.char, handle uint64) nativeResult {
	text, has := take(out)
	return nativeResult{status: int32(status), text: text, has: has, handle: handle}
}

func nativeValidate(config string, o options) nativeResult {
	return callConfig(func(c, b *C.char, out **C.char) C.int32_t { return C.fabric_validate(c, b, out) }, config, o)
}

func nativePlan(config string, o options) nativeResult {
	return callConfig(func(c, b *C.char, out **C.char) C.int32_t { return C.fabric_plan(c, b, out) }, config, o)
}

func nativeDoctor(config string, o options) nativeResult {
	return callConfig(func(c, b *C.char, out **C.char) C.int32_t { return C.fabric_doctor(c, b, out) }, config, o)
}

// nativeInspect calls fabric_inspect; a nil descriptor or target is passed as NULL.
func nativeInspect(config string, descriptor, target *string) nativeResult {
	cConfig, err := cstring(config, "config")
	if err != nil {
		return errorResult(err)
	}
	defer free(cConfig)
	var cDescriptor, cTarget *C.char
	if descriptor != nil {
		if cDescriptor, err = cstring(*descriptor, "descriptor"); err != nil {
			return errorResult(err)
		}
		defer free(cDescriptor)
	}
	if target != nil {
		if cTarget, err = cstring(*target, "target descriptor"); err != nil {
			return errorResult(err)
		}
		defer free(cTarget)
	}
	var out *C.char
	status := C.fabric_inspect(cConfig, cDescriptor, cTarget, &out)
	return finish(status, out, 0)
}

func nativeGymObservations(request string) nativeResult {
	return nativeRequest(request, func(cRequest *C.char, out **C.char) C.int32_t {
		return C.fabric_gym_observations(cRequest, out)
	})
}

func nativeGymJoinModelCalls(request string) nativeResult {
	return nativeRequest(request, func(cRequest *C.char, out **C.char) C.int32_t {
		return C.fabric_gym_join_model_calls(cRequest, out)
	})
}

func nativeGymJoinAssistantMessages(request string) nativeResult {
	return nativeRequest(request, func(cRequest *C.char, out **C.char) C.int32_t {
		return C.fabric_gym_join_assistant_messages(cRequest, out)
	})
}

// nativeRequest calls a pure function of one JSON request that writes `*out`.
func nativeRequest(request string, call func(*C.char, **C.char) C.int32_t) nativeResult {
	cRequest, err := cstring(request, "request")
	if err != nil {
		return errorResult(err)
	}
	defer free(cRequest)
	var out *C.char
	status := call(cRequest, &out)
	return finish(status, out, 0)
}

func nativeRun(config, request string, o options) nativeResult {
	cConfig, err := cstring(config, "config")
	if err != nil {
		return errorResult(err)
	}
	defer free(cConfig)
	cRequest, err := cstring(request, "request")
	if err != nil {
		return errorResult(err)
	}
	defer free(cRequest)
	cOptions, err := optionsCString(o)
	if err != nil {
		return errorResult(err)
	}
	defer free(cOptions)
	var out *C.char
	status := C.fabric_run(cConfig, cRequest, cOptions, &out)
	return finish(status, out, 0)
}

func nativeStart(config string, o options) nativeResult {
	return callHandle(func(c, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_runtime_start(c, b, (*C.fabric_runtime)(h), out)
	}, config, o)
}

func nativeInvoke(handle uint64, request string) nativeResult {
	cRequest, err := cstring(request, "request")
	if err != nil {
		return errorResult(err)
	}
	defer free(cRequest)
	var out *C.char
	status := C.fabric_runtime_invoke(C.fabric_runtime(handle), cRequest, &out)
	return finish(status, out, 0)
}

func nativeStop(handle uint64) nativeResult {
	var out *C.char
	status := C.fabric_runtime_stop(C.fabric_runtime(handle), &out)
	return finish(status, out, 0)
}

func nativeStatus(handle uint64) nativeResult {
	var out *C.char
	status := C.fabric_runtime_status(C.fabric_runtime(handle), &out)
	return finish(status, out, 0)
}

func nativeResourceSnapshot(handle uint64) nativeResult {
	var out *C.char
	status := C.fabric_runtime_resource_snapshot(C.fabric_runtime(handle), &out)
	return finish(status, out, 0)
}

func nativeCheck(environment uint64, request string) nativeResult {
	cRequest, err := cstring(request, "check request")
	if err != nil {
		return errorResult(err)
	}
	defer free(cRequest)
	var out *C.char
	status := C.fabric_check(C.fabric_environment(environment), cRequest, &out)
	return finish(status, out, 0)
}

func nativeFree(handle uint64) {
	C.fabric_runtime_free(C.fabric_runtime(handle))
}

// headerStatuses maps each generated Status constant to the header's value, for the
// drift test (cgo is not available in _test.go files).
func headerStatuses() map[Status]int32 {
	return map[Status]int32{
		StatusOK:                  int32(C.FABRIC_STATUS_OK),
		StatusConfig:              int32(C.FABRIC_STATUS_CONFIG),
		StatusCapability:          int32(C.FABRIC_STATUS_CAPABILITY),
		StatusRuntime:             int32(C.FABRIC_STATUS_RUNTIME),
		StatusState:               int32(C.FABRIC_STATUS_STATE),
		StatusResourceUnavailable: int32(C.FABRIC_STATUS_RESOURCE_UNAVAILABLE),
		StatusResourceUnsupported: int32(C.FABRIC_STATUS_RESOURCE_UNSUPPORTED),
		StatusInvalidArgument:     int32(C.FABRIC_STATUS_INVALID_ARGUMENT),
		StatusInternal:            int32(C.FABRIC_STATUS_INTERNAL),
		StatusEnd:                 int32(C.FABRIC_STATUS_END),
		StatusTimeout:             int32(C.FABRIC_STATUS_TIMEOUT),
	}
}

// headerABIVersion is the header's FABRIC_ABI_VERSION, for the drift test.
func headerABIVersion() int { return int(C.FABRIC_ABI_VERSION) }

func nativeEnvironmentPrepare(config string, o options) nativeResult {
	return callHandle(func(c, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_environment_prepare(c, b, (*C.fabric_environment)(h), out)
	}, config, o)
}

func nativeEnvironmentAttach(config, reference string, o options) nativeResult {
	return callDocument(func(c, r, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_environment_attach(c, r, b, (*C.fabric_environment)(h), out)
	}, config, reference, "reference", o)
}

func nativeEnvironmentStart(environment uint64, config string, o options) nativeResult {
	return callHandle(func(c, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_environment_start_runtime(C.fabric_environment(environment), c, b, (*C.fabric_runtime)(h), out)
	}, config, o)
}

func nativeEnvironmentRelease(environment uint64) nativeResult {
	var out *C.char
	status := C.fabric_environment_release(C.fabric_environment(environment), &out)
	return finish(status, out, 0)
}

func nativeEnvironmentFree(environment uint64) {
	C.fabric_environment_free(C.fabric_environment(environment))
}

func nativeInvokeOpenAIStream(runtime uint64, request string) nativeResult {
	return callRequest(func(r *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_runtime_invoke_openai_stream(C.fabric_runtime(runtime), r, (*C.fabric_stream)(h), out)
	}, request)
}

func nativeInvokeStream(runtime uint64, request string) nativeResult {
	return callRequest(func(r *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_runtime_invoke_stream(C.fabric_runtime(runtime), r, (*C.fabric_stream)(h), out)
	}, request)
}

// nativeStreamNextBatch pulls every ready item (a JSON array in text); timeoutMs 0 never
// blocks, a negative value waits without limit.
func nativeStreamNextBatch(stream uint64, timeoutMs int64) nativeResult {
	var out *C.char
	status := C.fabric_stream_next_batch(C.fabric_stream(stream), C.int64_t(timeoutMs), 0, &out)
	return finish(status, out, 0)
}

func nativeStreamResult(stream uint64) nativeResult {
	var out *C.char
	status := C.fabric_stream_result(C.fabric_stream(stream), &out)
	return finish(status, out, 0)
}

func nativeStreamClose(stream uint64) {
	C.fabric_stream_close(C.fabric_stream(stream))
}

func nativeStreamFree(stream uint64) {
	C.fabric_stream_free(C.fabric_stream(stream))
}

// Non-blocking operations (docs/abi.md "Non-blocking calls"); see operations.go.

// nativeRunBegin begins a whole run reporting to queue; handle is the operation.
func nativeRunBegin(config, request string, o options, queue uint64) nativeResult {
	return callDocument(func(c, r, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_run_begin(c, r, b, C.fabric_completion_queue(queue), (*C.fabric_operation)(h), out)
	}, config, request, "request", o)
}

// nativeStartBegin begins planning config and starting a runtime reporting to queue;
// handle is the operation (the take issues the runtime handle in the identity's "handle").
func nativeStartBegin(config string, o options, queue uint64) nativeResult {
	return callHandle(func(c, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_runtime_start_begin(c, b, C.fabric_completion_queue(queue), (*C.fabric_operation)(h), out)
	}, config, o)
}

// nativeInvokeBegin begins one invocation reporting to queue; handle is the operation.
func nativeInvokeBegin(handle uint64, request string, queue uint64) nativeResult {
	return callRequest(func(r *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_runtime_invoke_begin(C.fabric_runtime(handle), r, C.fabric_completion_queue(queue), (*C.fabric_operation)(h), out)
	}, request)
}

// nativeStopBegin begins stopping a runtime reporting to queue; handle is the operation.
func nativeStopBegin(handle, queue uint64) nativeResult {
	var operation C.fabric_operation
	var out *C.char
	status := C.fabric_runtime_stop_begin(C.fabric_runtime(handle), C.fabric_completion_queue(queue), &operation, &out)
	return finish(status, out, uint64(operation))
}

// nativeQueueNew creates a completion queue; handle is the queue, text its descriptor.
func nativeQueueNew() (uint64, int, error) {
	var queue C.fabric_completion_queue
	var out *C.char
	status := C.fabric_completion_queue_new(&queue, &out)
	if result := finish(status, out, 0); Status(result.status) != StatusOK {
		_, err := result.decode()
		return 0, -1, err
	}
	var fd C.int32_t
	status = C.fabric_completion_queue_fd(queue, &fd, &out)
	if result := finish(status, out, 0); Status(result.status) != StatusOK {
		C.fabric_completion_queue_free(queue)
		_, err := result.decode()
		return 0, -1, err
	}
	return uint64(queue), int(fd), nil
}

// nativeQueueNext pops the next finished operation of a queue (never waits).
func nativeQueueNext(queue uint64) (uint64, bool) {
	var operation C.fabric_operation
	var out *C.char
	status := C.fabric_completion_queue_next(C.fabric_completion_queue(queue), &operation, &out)
	take(out)
	return uint64(operation), Status(status) == StatusOK
}

// nativeOperationTake takes a finished operation's outcome and frees its handle.
func nativeOperationTake(operation uint64) nativeResult {
	var out *C.char
	status := C.fabric_operation_take(C.fabric_operation(operation), &out)
	result := finish(status, out, 0)
	C.fabric_operation_free(C.fabric_operation(operation))
	return result
}

func nativeServicePrepare(config string, o options) nativeResult {
	return callHandle(func(c, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_service_prepare(c, b, (*C.fabric_service)(h), out)
	}, config, o)
}

func nativeServiceAttach(config, reference string, o options) nativeResult {
	return callDocument(func(c, r, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_service_attach(c, r, b, (*C.fabric_service)(h), out)
	}, config, reference, "reference", o)
}

func nativeServiceStart(service uint64, config string, o options) nativeResult {
	return callHandle(func(c, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_service_start_runtime(C.fabric_service(service), c, b, (*C.fabric_runtime)(h), out)
	}, config, o)
}

func nativeServiceRelease(service uint64) nativeResult {
	var out *C.char
	status := C.fabric_service_release(C.fabric_service(service), &out)
	return finish(status, out, 0)
}

func nativeServiceFree(service uint64) {
	C.fabric_service_free(C.fabric_service(service))
}
