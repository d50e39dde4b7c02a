package fabric

import "encoding/json"

// The result documents (RunResult, RuntimeInfo, CheckReport, ...) are declared in
// generated.go, generated from the Rust types by `cargo xtask codegen`. This
// file adds behaviour and the names earlier versions of this package used.

// Names earlier versions of this package used for generated types.
type (
	// Event is a FabricEvent.
	Event = FabricEvent
	// StopResult is a RuntimeStopResult.
	StopResult = RuntimeStopResult
	// RuntimeStatus is a RuntimeStatusInfo.
	RuntimeStatus = RuntimeStatusInfo
	// ResourceObservation is an Observation.
	ResourceObservation = Observation
)

// Names earlier versions of this package used for generated constants.
const (
	StatusSucceeded = RunStatusSucceeded
	StatusFailed    = RunStatusFailed
	StatusCancelled = RunStatusCancelled
)

// DecodeOutput unmarshals the adapter's output into v.
func (r *RunResult) DecodeOutput(v any) error {
	return json.Unmarshal(r.Output, v)
}

// Passed reports whether Outcome is "passed".
func (r *CheckReport) Passed() bool { return r.Outcome == CheckOutcomePassed }
