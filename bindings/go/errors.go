package fabric

import (
	"encoding/json"
	"fmt"
)

// Status is a C ABI status code (numbers never change). The constants (StatusOK,
// StatusConfig, ...) are generated (generated.go).
type Status int32

// Info is the structured ErrorInfo every error of this package carries. Use errors.As
// with a *Info target to read it from any Fabric error, or with the class types below
// (*ConfigError, *RuntimeError, ...) to branch on the class.
type Info struct {
	ErrorInfo
	// Status is the C ABI status of the failed call (0 for errors made by this package).
	Status Status `json:"-"`
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

// errorClass is the class key of a failed call: the status's class, unless the code's
// registry entry overrides it (handle and lifecycle-state codes are state errors).
func errorClass(status Status, code string) string {
	if override := ErrorCodes[code].ClassOverride; override != "" {
		return override
	}
	return statusClasses[status]
}

// newError builds the class for a status from its ErrorInfo.
func newError(status Status, info *Info) error {
	info.Status = status
	switch errorClass(status, info.Code) {
	case "config":
		return &ConfigError{*info}
	case "capability":
		return &CapabilityError{*info}
	case "state":
		return &StateError{*info}
	case "resource_unavailable":
		return &ResourceUnavailableError{*info}
	case "resource_unsupported":
		return &ResourceUnsupportedError{*info}
	case "native_unavailable":
		return &NativeUnavailableError{*info}
	default: // "runtime" and statuses without a class
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
