package fabric

import (
	"context"
	"io"
	"runtime"
	"sync"
)

var _ io.Closer = (*Runtime)(nil)

// Runtime is one started runtime: ordered invocations, then Close. Safe for concurrent
// use; a second Invoke while one is running fails with *StateError (code runtime_busy).
type Runtime struct {
	// Info is what the core reported at start.
	Info RuntimeInfo

	handle uint64

	mu     sync.Mutex
	orphan chan struct{} // closed when an invocation abandoned by its context finishes
	failed bool
	// stopStarted is set when Stop begins (before the native stop finishes).
	stopStarted bool

	stopOnce   sync.Once
	stopDone   chan struct{}
	stopResult *RuntimeStopResult
	stopErr    error

	closeOnce sync.Once

	// streams are the OpenAI streams whose handles are not freed yet.
	streams map[*OpenAIStream]struct{}
}

func newRuntime(handle uint64, info RuntimeInfo) *Runtime {
	r := &Runtime{Info: info, handle: handle, stopDone: make(chan struct{}), streams: map[*OpenAIStream]struct{}{}}
	runtime.SetFinalizer(r, func(dropped *Runtime) { nativeFree(dropped.handle) })
	return r
}

// ID is the runtime id (`runtime-…`).
func (r *Runtime) ID() string { return r.Info.RuntimeID }

// Failed reports whether a runtime error made this runtime terminal.
func (r *Runtime) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// Invoke runs one invocation. Errors: *StateError (busy, stopped or failed runtime),
// *ConfigError (invalid request), *RuntimeError (no result; the runtime is then failed),
// or ctx.Err() when ctx is done first — the invocation then finishes in the background
// and the next Invoke waits for it.
func (r *Runtime) Invoke(ctx context.Context, request RunRequest) (*RunResult, error) {
	req, err := requestJSON(request)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closedLocked() {
		r.mu.Unlock()
		return nil, &StateError{Info{ErrorInfo: ErrorInfo{Stage: StageInvoke, Code: CodeRuntimeStopped, Message: "cannot invoke a stopped runtime"}}}
	}
	orphan := r.orphan
	r.mu.Unlock()
	if orphan != nil {
		select {
		case <-orphan:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// A non-blocking operation on the process's completion queue (operations.go): no OS
	// thread waits and nothing spins while the adapter works (docs/go.md, "Concurrency").
	handle := r.handle
	done := operate(
		func(queue uint64) nativeResult { return nativeInvokeBegin(handle, req, queue) },
		func() nativeResult { return nativeInvoke(handle, req) },
	)
	var result nativeResult
	select {
	case result = <-done:
	case <-ctx.Done():
		finished := make(chan struct{})
		r.mu.Lock()
		r.orphan = finished
		r.mu.Unlock()
		go func() {
			late := <-done
			r.absorb(late)
			close(finished)
		}()
		return nil, ctx.Err()
	}
	runtime.KeepAlive(r)
	out := &RunResult{}
	if err := decodeInto(result, out); err != nil {
		r.absorb(result)
		return nil, err
	}
	return out, nil
}

// absorb records a runtime failure (a runtime-class error leaves the runtime terminal).
func (r *Runtime) absorb(result nativeResult) {
	if result.err != nil || Status(result.status) != StatusRuntime {
		return
	}
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
}

func (r *Runtime) closedLocked() bool {
	select {
	case <-r.stopDone:
		return true
	default:
		return false
	}
}

// Status returns the core's view of this runtime.
func (r *Runtime) Status(ctx context.Context) (*RuntimeStatusInfo, error) {
	return decoded[RuntimeStatusInfo](await(ctx, func() nativeResult { return nativeStatus(r.handle) }, nil))
}

// ResourceSnapshot reads the runtime's process tree now (memory, process count, CPU
// time). It does not wait for a pending invocation. Errors: *ResourceUnavailableError
// (stopped or stopping runtime, exited host, a tree that could not be read consistently),
// *ResourceUnsupportedError (no reader for this adapter kind or OS), or ctx.Err().
func (r *Runtime) ResourceSnapshot(ctx context.Context) (*RuntimeResourceSnapshot, error) {
	r.mu.Lock()
	stopped := r.closedLocked() || r.stopStarted
	r.mu.Unlock()
	if stopped {
		return nil, &ResourceUnavailableError{Info{
			Status: StatusResourceUnavailable,
			ErrorInfo: ErrorInfo{
				Stage:   StageInvoke,
				Code:    CodeResourceObservationUnavailable,
				Message: "the runtime is stopped or stopping; its process tree is gone",
			},
		}}
	}
	result, err := await(ctx, func() nativeResult { return nativeResourceSnapshot(r.handle) }, nil)
	runtime.KeepAlive(r)
	return decoded[RuntimeResourceSnapshot](result, err)
}

// Stop stops the runtime once; every call returns the same result. An open OpenAIStream is
// closed first (its turn runs to its end). If ctx is done first, Stop returns ctx.Err()
// and the stop completes in the background.
func (r *Runtime) Stop(ctx context.Context) (*RuntimeStopResult, error) {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		r.stopStarted = true
		streams := make([]*OpenAIStream, 0, len(r.streams))
		for s := range r.streams {
			streams = append(streams, s)
		}
		r.mu.Unlock()
		go func() {
			for _, s := range streams {
				s.finishForStop()
			}
			handle := r.handle
			result := <-operate(
				func(queue uint64) nativeResult { return nativeStopBegin(handle, queue) },
				func() nativeResult { return nativeStop(handle) },
			)
			stop := &RuntimeStopResult{}
			r.stopErr = decodeInto(result, stop)
			if r.stopErr == nil {
				r.stopResult = stop
			}
			close(r.stopDone)
		}()
	})
	select {
	case <-r.stopDone:
		return r.stopResult, r.stopErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops the runtime (waiting for it) and frees its handle. Idempotent.
func (r *Runtime) Close() error {
	_, err := r.Stop(context.Background())
	r.closeOnce.Do(func() {
		runtime.SetFinalizer(r, nil)
		nativeFree(r.handle)
	})
	return err
}
