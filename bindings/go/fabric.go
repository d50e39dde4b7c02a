// Package fabric is the Go binding of the Fabric core: plan, doctor and run agent
// harness configs, and drive runtimes with ordered invocations, over the C ABI
// (include/fabric.h, statically linked from target/debug/libfabric_ffi.a).
//
// Blocking calls take a context.Context. Cancelling it returns ctx.Err() promptly; the
// native call finishes in the background and leaves the runtime usable (the next Invoke
// waits for it first). Runtimes are closed with Close (or Stop); a finalizer is only a
// backstop for runtimes that were dropped without it.
//
//	f, err := fabric.New()
//	rt, err := f.StartRuntime(ctx, cfg)
//	defer rt.Close()
//	res, err := rt.Invoke(ctx, fabric.RunRequest{Input: "hello"})
package fabric

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Fabric is the entry point. It holds no resources; copies are fine.
type Fabric struct{}

// New checks the linked library's ABI version and returns a Fabric.
func New() (*Fabric, error) {
	if err := checkLibrary(); err != nil {
		return nil, err
	}
	return &Fabric{}, nil
}

// Option adjusts one call.
type Option func(*options)

type options struct {
	baseDir                  string
	expectedDescriptorSHA256 string
	streaming                bool
	launchCollector          *bool
	completionWaitTimeout    *float64
	collectorMemoryBudget    *uint64
	capture                  CallOptions
}

// WithBaseDir anchors the config's relative paths (default: the current directory).
func WithBaseDir(dir string) Option { return func(o *options) { o.baseDir = dir } }

// WithExpectedDescriptorSHA256 pins the adapter: planning fails with a *ConfigError
// (code descriptor_mismatch, stage plan) unless the plan's descriptor_sha256 equals sha;
// nothing is started.
func WithExpectedDescriptorSHA256(sha string) Option {
	return func(o *options) { o.expectedDescriptorSHA256 = sha }
}

// WithStreaming enables NeMo Relay ATOF streaming for StartRuntime (Runtime.InvokeStream):
// the config needs Relay telemetry (*ConfigError streaming_requires_relay). By default the
// core runs an embedded collector; WithLaunchCollector(false) uses the external collector
// named by the config's nemo-fabric-stream sink.
func WithStreaming() Option { return func(o *options) { o.streaming = true } }

// WithLaunchCollector chooses the embedded collector (true, the default) or an external
// one (false) for a streaming start; without WithStreaming it is a *ConfigError
// (launch_collector_requires_streaming).
func WithLaunchCollector(launch bool) Option {
	return func(o *options) { o.launchCollector = &launch }
}

// WithCompletionWaitTimeout sets completion_wait_timeout (seconds, above 0; upstream's Pi
// completion wait, validated and kept for compatibility).
func WithCompletionWaitTimeout(seconds float64) Option {
	return func(o *options) { o.completionWaitTimeout = &seconds }
}

// WithCollectorMemoryBudgetBytes sets the embedded collector's memory budget of a streaming
// start (bytes, at least 1048576, default 64 MiB; a smaller value is a *ConfigError
// invalid_value): queued records, records being received and remembered scopes together.
func WithCollectorMemoryBudgetBytes(bytes uint64) Option {
	return func(o *options) { o.collectorMemoryBudget = &bytes }
}

// WithModelCallCapture puts the core's model-call gateway between the harness and its
// models (capture_model_calls): every call is forwarded unchanged and recorded in the
// invocation's model-calls.jsonl (RunResult.ModelCalls; docs/model-calls.md).
func WithModelCallCapture() Option {
	return func(o *options) {
		capture := true
		o.capture.CaptureModelCalls = &capture
	}
}

// WithMaxModelCalls sets the per-invocation budget of forwarded model calls (needs
// WithModelCallCapture, else a *ConfigError invalid_value); a later call gets HTTP 429 and
// the result a budget_exceeded event.
func WithMaxModelCalls(n uint64) Option {
	return func(o *options) { o.capture.MaxModelCalls = &n }
}

// WithMaxTotalTokens sets the per-invocation budget of reported tokens (needs
// WithModelCallCapture); once reached, calls get HTTP 429.
func WithMaxTotalTokens(n uint64) Option {
	return func(o *options) { o.capture.MaxTotalTokens = &n }
}

// json is the options_json argument of the planning calls (schema sdk/call-options); the
// core enforces every option.
func (o options) json() (string, error) {
	native := CallOptions{BaseDir: o.baseDir, ExpectedDescriptorSHA256: o.expectedDescriptorSHA256}
	if o.streaming {
		streaming := true
		native.Streaming = &streaming
	}
	native.LaunchCollector = o.launchCollector
	native.CompletionWaitTimeout = o.completionWaitTimeout
	native.CollectorMemoryBudgetBytes = o.collectorMemoryBudget
	native.CaptureModelCalls = o.capture.CaptureModelCalls
	native.MaxModelCalls = o.capture.MaxModelCalls
	native.MaxTotalTokens = o.capture.MaxTotalTokens
	native.Binding = bindingIdentity()
	if strings.IndexByte(o.baseDir, 0) >= 0 {
		return "", newError(StatusInvalidArgument, &Info{ErrorInfo: ErrorInfo{Stage: StageConfig, Code: CodeInvalidArgument, Message: "base dir must not contain NUL bytes"}})
	}
	data, err := json.Marshal(native)
	if err != nil {
		return "", &ConfigError{Info{ErrorInfo: ErrorInfo{Stage: StageConfig, Code: CodeInvalidJSONValue, Message: "options cannot be encoded as JSON: " + err.Error()}}}
	}
	return string(data), nil
}

// modulePath is this package's module, the binding's name in RunResult.execution.
const modulePath = "github.com/NVIDIA/fabric-core/bindings/go"

// bindingIdentity is this module (its version as the main program's build recorded it,
// "unknown" in a build without module information or inside its own checkout) and the Go
// runtime, reported by the core in RunResult.execution.
var bindingIdentity = sync.OnceValue(func() *BindingIdentity {
	version := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == modulePath && dep.Version != "" && dep.Version != "(devel)" {
				version = dep.Version
			}
		}
	}
	return &BindingIdentity{Name: modulePath, Version: version, RuntimeName: "go", RuntimeVersion: runtime.Version()}
})

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

func configJSON(config any) (string, error) {
	switch value := config.(type) {
	case string:
		return value, nil
	case []byte:
		return string(value), nil
	case json.RawMessage:
		return string(value), nil
	}
	data, err := json.Marshal(config)
	if err != nil {
		return "", &ConfigError{Info{ErrorInfo: ErrorInfo{Stage: StageConfig, Code: CodeInvalidJSONValue, Message: "config cannot be encoded as JSON: " + err.Error()}}}
	}
	return string(data), nil
}

func requestJSON(request RunRequest) (string, error) {
	data, err := json.Marshal(request)
	if err != nil {
		return "", &ConfigError{Info{ErrorInfo: ErrorInfo{Stage: StageConfig, Code: CodeInvalidRequest, Message: "request cannot be encoded as JSON: " + err.Error()}}}
	}
	return string(data), nil
}

// await runs fn on its own goroutine and returns its result, or ctx.Err() as soon as ctx
// is done. An abandoned result is handed to abandon (if not nil) when it arrives.
func await(ctx context.Context, fn func() nativeResult, abandon func(nativeResult)) (nativeResult, error) {
	if err := ctx.Err(); err != nil {
		return nativeResult{}, err
	}
	return awaitDone(ctx, inGoroutine(fn), abandon)
}

// inGoroutine runs a blocking native call in a goroutine; its result arrives on the
// returned channel (buffered: nobody has to receive it).
func inGoroutine(fn func() nativeResult) <-chan nativeResult {
	done := make(chan nativeResult, 1)
	go func() { done <- fn() }()
	return done
}

// awaitDone waits for a result already on its way, or for ctx (abandon then gets the
// result when it arrives).
func awaitDone(ctx context.Context, done <-chan nativeResult, abandon func(nativeResult)) (nativeResult, error) {
	select {
	case result := <-done:
		return result, nil
	case <-ctx.Done():
		go func() {
			result := <-done
			if abandon != nil {
				abandon(result)
			}
		}()
		return nativeResult{}, ctx.Err()
	}
}

func decodeInto(result nativeResult, v any) error {
	text, err := result.decode()
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(text), v); err != nil {
		return &RuntimeError{Info{ErrorInfo: ErrorInfo{Stage: StageInvoke, Code: CodeInvalidNativeJSON, Message: "library returned JSON this package cannot decode: " + err.Error()}}}
	}
	return nil
}

// decoded is the document of a finished call decoded into a new T, or the call's error:
// the ending of every call that returns one model.
func decoded[T any](result nativeResult, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	out := new(T)
	if err := decodeInto(result, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Validate checks a config and returns its canonical JSON.
func (f *Fabric) Validate(ctx context.Context, config any, opts ...Option) (json.RawMessage, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	result, err := await(ctx, func() nativeResult { return nativeValidate(text, o) }, nil)
	if err != nil {
		return nil, err
	}
	out, err := result.decode()
	return json.RawMessage(out), err
}

// InspectAdapter inspects declared adapter support for a config from descriptor metadata
// alone (no discovery, no harness import, no task-local paths): the adapter's capability
// profile (AdapterID, DescriptorSHA256, Skills, MCP, ATIF).
//
// descriptor is the adapter's canonical descriptor (for example from the adapter catalog)
// as JSON text ([]byte, json.RawMessage, string) or a value encoded as JSON; nil permits
// basic execution with false capability claims but rejects requested skills, MCP or
// telemetry. targetDescriptor is required for a config that selects a registered workflow,
// else nil. Errors as the Python inspect_adapter: *ConfigError (invalid config or
// descriptor), *CapabilityError (`config_incompatible`, Metadata["path"] naming the field
// the adapter cannot implement).
func (f *Fabric) InspectAdapter(ctx context.Context, config any, descriptor, targetDescriptor any) (*AdapterCapabilityProfile, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	descriptorText, err := optionalJSON(descriptor, "descriptor")
	if err != nil {
		return nil, err
	}
	targetText, err := optionalJSON(targetDescriptor, "target descriptor")
	if err != nil {
		return nil, err
	}
	return decoded[AdapterCapabilityProfile](await(ctx, func() nativeResult { return nativeInspect(text, descriptorText, targetText) }, nil))
}

// optionalJSON is an optional JSON argument: nil, empty text and JSON null are absent.
func optionalJSON(value any, what string) (*string, error) {
	var text string
	switch v := value.(type) {
	case nil:
		return nil, nil
	case string:
		text = v
	case []byte:
		text = string(v)
	case json.RawMessage:
		text = string(v)
	default:
		data, err := json.Marshal(value)
		if err != nil {
			return nil, &ConfigError{Info{ErrorInfo: ErrorInfo{Stage: StageConfig, Code: CodeInvalidJSONValue, Message: what + " cannot be encoded as JSON: " + err.Error()}}}
		}
		text = string(data)
	}
	if text == "" || text == "null" {
		return nil, nil
	}
	return &text, nil
}

// GymObservations maps one rollout's RunResults (and the raw ATOF records of their
// invocations) to NeMo Gym's observation contract: the bundle for `ng_agent_observations`
// and the trajectory record (docs/gym.md). Blank ids and duplicate invocation ids are
// *ConfigError (`gym_id_blank`, `gym_invocation_id_duplicate`).
func (f *Fabric) GymObservations(ctx context.Context, request GymObservationsRequest) (*GymObservations, error) {
	text, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	return decoded[GymObservations](await(ctx, func() nativeResult { return nativeGymObservations(string(text)) }, nil))
}

// JoinModelCallObservations resolves the model-call references of a Gym bundle against the
// calls a model server captured for the same rollout (Gym's `join_model_call_observations`,
// docs/gym.md): ownership is never guessed, and what cannot be joined exactly is a gap. A
// bundle that breaks Gym's identity rules is a *ConfigError (its path under `bundle`).
func (f *Fabric) JoinModelCallObservations(ctx context.Context, bundle AgentObservationBundle, calls []ModelCallKeys) (*AgentObservationBundle, error) {
	text, err := json.Marshal(GymJoinModelCallsRequest{Bundle: bundle, Calls: calls})
	if err != nil {
		return nil, err
	}
	return decoded[AgentObservationBundle](await(ctx, func() nativeResult { return nativeGymJoinModelCalls(string(text)) }, nil))
}

// JoinAssistantMessageCalls joins the assistant messages a Gym trajectory's turns
// (`source_message_id`) and a bundle's compactions (`source_message_ids`) declare to the
// captured calls of the same rollout, by session, message and model-server ids, after
// resolving ownership as JoinModelCallObservations does (Gym's
// `join_assistant_message_calls`, docs/gym.md). trajectory may be nil (only compactions are
// joined; the result's Trajectory is then nil). A bundle or trajectory that breaks Gym's
// identity rules is a *ConfigError (its path under `bundle` or `trajectory`).
func (f *Fabric) JoinAssistantMessageCalls(ctx context.Context, bundle AgentObservationBundle, trajectory *TrajectoryRecord, calls []ModelCallKeys) (*GymJoinedAssistantMessages, error) {
	request := GymJoinAssistantMessagesRequest{Bundle: bundle, Trajectory: trajectory, Calls: calls}
	text, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	return decoded[GymJoinedAssistantMessages](await(ctx, func() nativeResult { return nativeGymJoinAssistantMessages(string(text)) }, nil))
}

// Plan resolves the adapter and checks compatibility.
func (f *Fabric) Plan(ctx context.Context, config any, opts ...Option) (*RunPlan, error) {
	return decoded[RunPlan](f.plan(ctx, config, opts))
}

// PlanJSON is Plan's complete plan JSON, as the core returned it.
func (f *Fabric) PlanJSON(ctx context.Context, config any, opts ...Option) (json.RawMessage, error) {
	result, err := f.plan(ctx, config, opts)
	if err != nil {
		return nil, err
	}
	text, err := result.decode()
	if err != nil {
		return nil, err
	}
	return json.RawMessage(text), nil
}

func (f *Fabric) plan(ctx context.Context, config any, opts []Option) (nativeResult, error) {
	text, err := configJSON(config)
	if err != nil {
		return nativeResult{}, err
	}
	o := collect(opts)
	return await(ctx, func() nativeResult { return nativePlan(text, o) }, nil)
}

// Doctor runs every preflight check and reports all findings.
func (f *Fabric) Doctor(ctx context.Context, config any, opts ...Option) (*DoctorReport, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	return decoded[DoctorReport](await(ctx, func() nativeResult { return nativeDoctor(text, o) }, nil))
}

// Run starts a runtime, invokes it once and stops it. A harness failure is a result
// with Status == RunStatusFailed. Cancelling ctx returns promptly; the run finishes (and
// its runtime is stopped) in the background.
func (f *Fabric) Run(ctx context.Context, config any, request RunRequest, opts ...Option) (*RunResult, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	req, err := requestJSON(request)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	done := operate(
		func(queue uint64) nativeResult { return nativeRunBegin(text, req, o, queue) },
		func() nativeResult { return nativeRun(text, req, o) },
	)
	return decoded[RunResult](awaitDone(ctx, done, nil))
}

// StartRuntime starts a runtime for ordered invocations. Close it with Close. If ctx is
// cancelled while the host starts, the runtime is stopped and freed in the background.
func (f *Fabric) StartRuntime(ctx context.Context, config any, opts ...Option) (*Runtime, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	done := operate(
		func(queue uint64) nativeResult { return nativeStartBegin(text, o, queue) },
		func() nativeResult { return nativeStart(text, o) },
	)
	return awaitRuntime(ctx, done)
}

// awaitRuntime waits for a native runtime start and wraps the started runtime. A start
// that finishes after ctx was cancelled is stopped and freed in the background; a runtime
// whose identity cannot be decoded is freed.
func awaitRuntime(ctx context.Context, done <-chan nativeResult) (*Runtime, error) {
	result, err := awaitDone(ctx, done, func(late nativeResult) {
		late = issuedHandle(late)
		if Status(late.status) == StatusOK && late.err == nil && late.handle != 0 {
			nativeStop(late.handle)
			nativeFree(late.handle)
		}
	})
	if err != nil {
		return nil, err
	}
	result = issuedHandle(result)
	info := RuntimeInfo{}
	if err := decodeInto(result, &info); err != nil {
		if result.handle != 0 && Status(result.status) == StatusOK {
			nativeFree(result.handle)
		}
		return nil, err
	}
	return newRuntime(result.handle, info), nil
}

// issuedHandle fills in the runtime handle that a start operation's take issued in its
// identity's "handle" (the blocking start returns it beside the identity instead).
func issuedHandle(result nativeResult) nativeResult {
	if result.handle != 0 || Status(result.status) != StatusOK || result.err != nil || !result.has {
		return result
	}
	var identity struct {
		Handle uint64 `json:"handle"`
	}
	if json.Unmarshal([]byte(result.text), &identity) == nil {
		result.handle = identity.Handle
	}
	return result
}

// Check checks a runtime's health. env is the environment the runtime was started in
// (Environment.StartRuntime), or nil for runtimes from StartRuntime. Every outcome
// (passed, failed, unknown, unsupported) is a *CheckReport; only an invalid request is an
// error (*ConfigError, code invalid_check_request; *StateError environment_released for a
// released env), besides ctx.Err(). Checks use their
// own connection to the adapter host, so they complete while an invocation is pending.
// In a provider environment the environment's runtime server answers: it selects the
// runtime by id for ScopeRuntime, and ScopeServer checks the server itself (without a
// provider environment ScopeServer is unsupported/unsupported_scope).
func (f *Fabric) Check(ctx context.Context, env *Environment, request CheckRequest) (*CheckReport, error) {
	data, err := json.Marshal(request)
	if err != nil {
		return nil, &ConfigError{Info{ErrorInfo: ErrorInfo{Stage: StageConfig, Code: CodeInvalidCheckRequest, Message: "check request cannot be encoded as JSON: " + err.Error()}}}
	}
	var handle uint64
	if env != nil {
		select {
		case <-env.released:
			return nil, &StateError{Info{Status: StatusState, ErrorInfo: ErrorInfo{Stage: StageConfig, Code: CodeEnvironmentReleased, Message: "environment was already released"}}}
		default:
		}
		handle = env.handle
	}
	result, err := await(ctx, func() nativeResult { return nativeCheck(handle, string(data)) }, nil)
	runtime.KeepAlive(env)
	return decoded[CheckReport](result, err)
}
