package fabric

import (
	"context"
	"encoding/json"
	"io"
	"runtime"
	"sync"
)

var _ io.Closer = (*Environment)(nil)

// Environment is a prepared environment that several runtimes can share. Release it
// (runtimes already started keep running; new starts fail with *StateError), then Close.
type Environment struct {
	// Info is what the core reported when the environment was prepared (variable names
	// only, never their values).
	Info EnvironmentInfo

	handle      uint64
	releaseOnce sync.Once
	released    chan struct{}
	releaseInfo *EnvironmentInfo
	releaseErr  error
	closeOnce   sync.Once
}

// ID is the environment id (`environment-…`).
func (e *Environment) ID() string { return e.Info.EnvironmentID }

// PrepareEnvironment prepares the config's environment without starting an agent.
func (f *Fabric) PrepareEnvironment(ctx context.Context, config any, opts ...Option) (*Environment, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	return awaitEnvironment(ctx, func() nativeResult { return nativeEnvironmentPrepare(text, o) })
}

// AttachEnvironment attaches to the existing environment reference names (Provider = the
// config's environment.provider; the local provider takes resource.workspace, an existing
// directory). The environment stays the caller's: Release only detaches. Any environment's
// Info.Reference is a reference this accepts.
func (f *Fabric) AttachEnvironment(ctx context.Context, config any, reference EnvironmentReference, opts ...Option) (*Environment, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(reference)
	if err != nil {
		return nil, &ConfigError{Info{ErrorInfo: ErrorInfo{Stage: StageConfig, Code: CodeInvalidEnvironmentReference, Message: "reference cannot be encoded as JSON: " + err.Error()}}}
	}
	o := collect(opts)
	return awaitEnvironment(ctx, func() nativeResult { return nativeEnvironmentAttach(text, string(data), o) })
}

func awaitEnvironment(ctx context.Context, start func() nativeResult) (*Environment, error) {
	result, err := await(ctx, start, func(late nativeResult) {
		if Status(late.status) == StatusOK && late.err == nil && late.handle != 0 {
			nativeEnvironmentRelease(late.handle)
			nativeEnvironmentFree(late.handle)
		}
	})
	if err != nil {
		return nil, err
	}
	info := EnvironmentInfo{}
	if err := decodeInto(result, &info); err != nil {
		if result.handle != 0 && Status(result.status) == StatusOK {
			nativeEnvironmentFree(result.handle)
		}
		return nil, err
	}
	e := &Environment{Info: info, handle: result.handle, released: make(chan struct{})}
	runtime.SetFinalizer(e, func(dropped *Environment) { nativeEnvironmentFree(dropped.handle) })
	return e, nil
}

// StartRuntime starts a runtime inside this environment.
func (e *Environment) StartRuntime(ctx context.Context, config any, opts ...Option) (*Runtime, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	handle := e.handle
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	started, err := awaitRuntime(ctx, inGoroutine(func() nativeResult { return nativeEnvironmentStart(handle, text, o) }))
	runtime.KeepAlive(e)
	return started, err
}

// Release releases the environment once; every call returns the same result.
func (e *Environment) Release(ctx context.Context) (*EnvironmentInfo, error) {
	e.releaseOnce.Do(func() {
		go func() {
			result := nativeEnvironmentRelease(e.handle)
			info := &EnvironmentInfo{}
			e.releaseErr = decodeInto(result, info)
			if e.releaseErr == nil {
				e.releaseInfo = info
			}
			close(e.released)
		}()
	})
	select {
	case <-e.released:
		return e.releaseInfo, e.releaseErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close releases the environment (waiting for it) and frees its handle. Idempotent.
func (e *Environment) Close() error {
	_, err := e.Release(context.Background())
	e.closeOnce.Do(func() {
		runtime.SetFinalizer(e, nil)
		nativeEnvironmentFree(e.handle)
	})
	return err
}
