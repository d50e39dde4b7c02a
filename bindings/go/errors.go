package fabric

import (
	"encoding/json"
	"fmt"
)

// Status is a C ABI status code (numbers never change).
type Status int32

const (
	StatusOK                  Status = 0
	StatusConfig              Status = 1
	StatusCapability          Status = 2
	StatusRuntime             Status = 3
	StatusState               Status = 4
	StatusResourceUnavailable Status = 5
	StatusResourceUnsupported Status = 6
	StatusInvalidArgument     Status = 7
	StatusInternal            Status = 8
)

// Info is the structured ErrorInfo every error of this package carries. Use errors.As
// with a *Info target to read it from any Fabric error, or with the class types below
// (*ConfigError, *RuntimeError, ...) to branch on the class.
type Info struct {
	// Status is the C ABI status of the failed call (0 for errors made by this package).
	Status    Status         `json:"-"`
	Stage     string         `json:"stage"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Retryable bool           `json:"retryable"`
	Details   map[string]any `json:"metadata,omitempty"`
}

func (i *Info) Error() string {
	return fmt.Sprintf("%s (stage %s, code %s)", i.Message, i.Stage, i.Code)
}

// ConfigError: invalid config, request, override or argument.
type ConfigError struct{ Info }

// CapabilityError: the selected adapter does not support the requested operation.
// errors.As also matches it as a *RuntimeError.
type CapabilityError struct{ Info }

// RuntimeError: start, invocation or stop failed before a normalized result.
type RuntimeError struct{ Info }

// StateError: an invalid lifecycle transition (overlapping invokes, invoking a stopped
// runtime). errors.As also matches it as a *RuntimeError.
type StateError struct{ Info }

// NativeUnavailableError: the linked library has another ABI version.
// errors.As also matches it as a *RuntimeError.
type NativeUnavailableError struct{ Info }

// ResourceUnavailableError: a resource observation could not be read.
type ResourceUnavailableError struct{ Info }

// ResourceUnsupportedError: no resource reader exists here.
type ResourceUnsupportedError struct{ Info }

func (e *ConfigError) Unwrap() error              { return &e.Info }
func (e *CapabilityError) Unwrap() error          { return &e.Info }
func (e *RuntimeError) Unwrap() error             { return &e.Info }
func (e *StateError) Unwrap() error               { return &e.Info }
func (e *NativeUnavailableError) Unwrap() error   { return &e.Info }
func (e *ResourceUnavailableError) Unwrap() error { return &e.Info }
func (e *ResourceUnsupportedError) Unwrap() error { return &e.Info }

func asRuntime(info Info, target any) bool {
	if t, ok := target.(**RuntimeError); ok {
		*t = &RuntimeError{Info: info}
		return true
	}
	return false
}

// As lets errors.As(err, &runtimeErr) match state errors, as in the Python SDK.
func (e *StateError) As(target any) bool { return asRuntime(e.Info, target) }

// As lets errors.As(err, &runtimeErr) match capability errors, as in the Python SDK.
func (e *CapabilityError) As(target any) bool { return asRuntime(e.Info, target) }

// As lets errors.As(err, &runtimeErr) match native-unavailable errors.
func (e *NativeUnavailableError) As(target any) bool { return asRuntime(e.Info, target) }

// As lets errors.As(err, &runtimeErr) match resource errors.
func (e *ResourceUnavailableError) As(target any) bool { return asRuntime(e.Info, target) }

// As lets errors.As(err, &runtimeErr) match resource errors.
func (e *ResourceUnsupportedError) As(target any) bool { return asRuntime(e.Info, target) }

var handleCodes = map[string]bool{
	"null_handle": true, "stale_handle": true, "unknown_handle": true, "wrong_handle_kind": true,
}

// newError builds the class for a status from its ErrorInfo.
func newError(status Status, info *Info) error {
	info.Status = status
	switch status {
	case StatusConfig:
		return &ConfigError{*info}
	case StatusCapability:
		return &CapabilityError{*info}
	case StatusRuntime, StatusInternal:
		return &RuntimeError{*info}
	case StatusState:
		return &StateError{*info}
	case StatusResourceUnavailable:
		return &ResourceUnavailableError{*info}
	case StatusResourceUnsupported:
		return &ResourceUnsupportedError{*info}
	case StatusInvalidArgument:
		if handleCodes[info.Code] {
			return &StateError{*info}
		}
		return &ConfigError{*info}
	default:
		return &RuntimeError{*info}
	}
}

// errorFromNative decodes the ErrorInfo JSON of a failed call.
func errorFromNative(result nativeResult) error {
	info := &Info{}
	if result.has {
		if err := json.Unmarshal([]byte(result.text), info); err != nil {
			info = &Info{}
		}
	}
	if info.Message == "" {
		info.Message = fmt.Sprintf("native call failed with status %d", result.status)
	}
	return newError(Status(result.status), info)
}

// errorResult carries an error made before the native call (e.g. a NUL byte).
func errorResult(err error) nativeResult {
	return nativeResult{err: err}
}

// decode turns a finished call into its text or its error.
func (r nativeResult) decode() (string, error) {
	if r.err != nil {
		return "", r.err
	}
	if Status(r.status) != StatusOK {
		return "", errorFromNative(r)
	}
	return r.text, nil
}
