package fabric

import "encoding/json"

// Config is a FabricConfig (`fabric.agent/v1alpha1`). The core validates it strictly;
// blocks without a typed field here are plain JSON objects. Any value that marshals to a
// FabricConfig JSON object (a map, json.RawMessage, your own struct) is accepted too.
type Config struct {
	SchemaVersion string                 `json:"schema_version,omitempty"`
	Metadata      Metadata               `json:"metadata"`
	Harness       *Harness               `json:"harness,omitempty"`
	Workflow      map[string]any         `json:"workflow,omitempty"`
	Discovery     *Discovery             `json:"discovery,omitempty"`
	Runtime       *RuntimeConfig         `json:"runtime,omitempty"`
	Environment   map[string]any         `json:"environment,omitempty"`
	Models        map[string]ModelConfig `json:"models,omitempty"`
	Instructions  map[string]any         `json:"instructions,omitempty"`
	MCP           map[string]any         `json:"mcp,omitempty"`
	Skills        map[string]any         `json:"skills,omitempty"`
	Telemetry     map[string]any         `json:"telemetry,omitempty"`
	Relay         map[string]any         `json:"relay,omitempty"`
	Tools         map[string]any         `json:"tools,omitempty"`
	Provenance    map[string]any         `json:"provenance,omitempty"`
	// SystemStats selects invocation system stats: nil (omitted) collects every group at
	// the endpoints; SystemStatsDisabled (JSON null) turns them off; any other JSON object
	// (for example from SystemStatsConfig.JSON) is passed through.
	SystemStats json.RawMessage `json:"system_stats,omitempty"`
}

// SystemStatsDisabled is the explicit JSON null that disables invocation system stats.
var SystemStatsDisabled = json.RawMessage("null")

// SystemStatsConfig is the `system_stats` config block: Collect names metric groups
// (nil = all: process, cgroup.cpu, cgroup.memory, cgroup.pressure) and Sampling enables
// periodic sampling.
type SystemStatsConfig struct {
	Collect  []string             `json:"collect,omitempty"`
	Sampling *SystemStatsSampling `json:"sampling,omitempty"`
}

// SystemStatsSampling is `system_stats.sampling`.
type SystemStatsSampling struct {
	IntervalMS int `json:"interval_ms,omitempty"`
	MaxSamples int `json:"max_samples,omitempty"`
}

// JSON encodes the block for Config.SystemStats.
func (c SystemStatsConfig) JSON() json.RawMessage {
	data, _ := json.Marshal(c) // only strings and integers: cannot fail
	return data
}

// Metadata names the agent.
type Metadata struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Harness selects the adapter and passes its settings.
type Harness struct {
	AdapterID string         `json:"adapter_id,omitempty"`
	Settings  map[string]any `json:"settings,omitempty"`
}

// Discovery adds descriptor search paths.
type Discovery struct {
	LocalPaths []string `json:"local_paths,omitempty"`
}

// RuntimeConfig bounds a runtime.
type RuntimeConfig struct {
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
	MaxTurns       uint32  `json:"max_turns,omitempty"`
}

// ModelConfig is one model role.
type ModelConfig struct {
	Provider    string         `json:"provider"`
	Model       string         `json:"model"`
	APIKeyEnv   string         `json:"api_key_env,omitempty"`
	BaseURL     string         `json:"base_url,omitempty"`
	Temperature *float64       `json:"temperature,omitempty"`
	TopP        *float64       `json:"top_p,omitempty"`
	MaxTokens   *uint64        `json:"max_tokens,omitempty"`
	Settings    map[string]any `json:"settings,omitempty"`
}

// RunRequest is one invocation's request.
type RunRequest struct {
	Input            any            `json:"input"`
	RequestID        string         `json:"request_id,omitempty"`
	Context          map[string]any `json:"context,omitempty"`
	RelaySessionRoot string         `json:"relay_session_root,omitempty"`
	Overrides        map[string]any `json:"overrides,omitempty"`
}

// RunStatus is a result's status: succeeded, failed or cancelled.
type RunStatus string

const (
	StatusSucceeded RunStatus = "succeeded"
	StatusFailed    RunStatus = "failed"
	StatusCancelled RunStatus = "cancelled"
)

// RunResult is the result of one invocation. A harness failure is a result with
// Status == StatusFailed and Error set, not a Go error. Unknown fields are ignored.
type RunResult struct {
	AgentName    string           `json:"agent_name"`
	Harness      string           `json:"harness"`
	AdapterKind  string           `json:"adapter_kind"`
	AdapterID    string           `json:"adapter_id,omitempty"`
	RuntimeID    string           `json:"runtime_id"`
	InvocationID string           `json:"invocation_id"`
	RequestID    string           `json:"request_id"`
	Status       RunStatus        `json:"status"`
	Output       json.RawMessage  `json:"output,omitempty"`
	Error        *Info            `json:"error,omitempty"`
	Usage        *RunUsage        `json:"usage,omitempty"`
	Artifacts    ArtifactManifest `json:"artifacts"`
	Events       []Event          `json:"events,omitempty"`
	Telemetry    map[string]any   `json:"telemetry,omitempty"`
	Metadata     map[string]any   `json:"metadata,omitempty"`
	// SystemStats is nil when disabled (`system_stats: null`) or not collected.
	SystemStats      *InvocationSystemStats   `json:"system_stats,omitempty"`
	ResourceSnapshot *RuntimeResourceSnapshot `json:"resource_snapshot,omitempty"`
}

// DecodeOutput unmarshals the adapter's output into v.
func (r *RunResult) DecodeOutput(v any) error {
	return json.Unmarshal(r.Output, v)
}

// RunUsage is per-invocation usage; a nil counter means unknown, not zero.
type RunUsage struct {
	InputTokens             *uint64        `json:"input_tokens,omitempty"`
	CachedInputTokens       *uint64        `json:"cached_input_tokens,omitempty"`
	InputTokensIncludeCache *bool          `json:"input_tokens_include_cache,omitempty"`
	OutputTokens            *uint64        `json:"output_tokens,omitempty"`
	TotalTokens             *uint64        `json:"total_tokens,omitempty"`
	CostUSD                 *float64       `json:"cost_usd,omitempty"`
	Metadata                map[string]any `json:"metadata,omitempty"`
}

// ArtifactManifest lists artifacts under a root.
type ArtifactManifest struct {
	Root      string        `json:"root,omitempty"`
	Artifacts []ArtifactRef `json:"artifacts,omitempty"`
}

// ArtifactRef is one artifact.
type ArtifactRef struct {
	Name      string         `json:"name"`
	Kind      string         `json:"kind"`
	Path      string         `json:"path"`
	MediaType string         `json:"media_type,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// Event is one lifecycle event (runtime_start, invocation_start, ...).
type Event struct {
	EventID         string         `json:"event_id"`
	TimestampMillis uint64         `json:"timestamp_millis"`
	Kind            string         `json:"kind"`
	Message         string         `json:"message"`
	Metadata        map[string]any `json:"metadata,omitempty"`
}

// RuntimeInfo is what the core reports about a started runtime.
type RuntimeInfo struct {
	RuntimeID   string         `json:"runtime_id"`
	AgentName   string         `json:"agent_name"`
	Harness     string         `json:"harness,omitempty"`
	AdapterID   string         `json:"adapter_id,omitempty"`
	AdapterKind string         `json:"adapter_kind,omitempty"`
	Environment map[string]any `json:"environment,omitempty"`
	HostPID     int            `json:"host_pid,omitempty"`
	FabricHome  string         `json:"fabric_home,omitempty"`
}

// StopResult is a runtime's stop result; Error describes a stop problem, if any.
type StopResult struct {
	Artifacts ArtifactManifest `json:"artifacts"`
	Error     *Info            `json:"error,omitempty"`
	Events    []Event          `json:"events,omitempty"`
}

// RuntimeStatus is the core's view of a runtime.
type RuntimeStatus struct {
	RuntimeID       string `json:"runtime_id"`
	State           string `json:"state"`
	Invocations     uint64 `json:"invocations"`
	HostPID         int    `json:"host_pid,omitempty"`
	StartedAtMillis uint64 `json:"started_at_millis,omitempty"`
	FabricHome      string `json:"fabric_home,omitempty"`
	Failure         string `json:"failure,omitempty"`
}

// RunPlan is a resolved plan. Fields beyond these stay available in Raw.
type RunPlan struct {
	AgentName         string         `json:"agent_name"`
	BaseDir           string         `json:"base_dir"`
	AgentConfig       map[string]any `json:"agent_config"`
	Capabilities      map[string]any `json:"capabilities"`
	AdapterDescriptor *struct {
		Descriptor map[string]any   `json:"descriptor"`
		Provenance []map[string]any `json:"provenance,omitempty"`
	} `json:"adapter_descriptor,omitempty"`
	// Raw is the complete plan JSON.
	Raw json.RawMessage `json:"-"`
}

// DoctorReport lists every preflight finding; Status is the worst of the checks.
type DoctorReport struct {
	AgentName string        `json:"agent_name"`
	Status    string        `json:"status"` // pass, warn or fail
	Checks    []DoctorCheck `json:"checks"`
}

// DoctorCheck is one finding.
type DoctorCheck struct {
	Name     string         `json:"name"`
	Status   string         `json:"status"` // pass, warn or fail
	Code     string         `json:"code"`
	Message  string         `json:"message"`
	Path     string         `json:"path,omitempty"` // config path, e.g. harness.adapter_id
	Metadata map[string]any `json:"metadata,omitempty"`
}

// RuntimeResourceSnapshot is one reading of a runtime's process tree: the local adapter
// host and its descendants.
type RuntimeResourceSnapshot struct {
	RuntimeID string `json:"runtime_id"`
	// StartedAt is when the adapter host was started (RFC 3339 UTC).
	StartedAt string `json:"started_at"`
	// ObservedAt is when the values were read (RFC 3339 UTC).
	ObservedAt string `json:"observed_at"`
	// ResidentMemoryBytes sums the resident set sizes of the live processes.
	ResidentMemoryBytes uint64 `json:"resident_memory_bytes"`
	// ProcessCount counts live processes, the adapter host included.
	ProcessCount uint64 `json:"process_count"`
	// CPUTimeSeconds is CPU time since the host started, exited descendants included.
	CPUTimeSeconds float64 `json:"cpu_time_seconds"`
}

// ResourceObservation is an endpoint observation of invocation stats: Status is
// "available" (Snapshot set), "unavailable" or "unsupported" (Reason set) or
// "not_collected". Missing values are never zeros.
type ResourceObservation struct {
	Status   string                   `json:"status"`
	Snapshot *RuntimeResourceSnapshot `json:"snapshot,omitempty"`
	Reason   string                   `json:"reason,omitempty"`
}

// GaugeSummary holds the sampled reductions of one gauge; nil values are unknown.
type GaugeSummary struct {
	Observations     uint64   `json:"observations"`
	Final            *float64 `json:"final,omitempty"`
	SampledPeak      *float64 `json:"sampled_peak,omitempty"`
	Min              *float64 `json:"min,omitempty"`
	Max              *float64 `json:"max,omitempty"`
	TimeWeightedMean *float64 `json:"time_weighted_mean,omitempty"`
	CoveredSeconds   float64  `json:"covered_seconds"`
	CoveredFraction  float64  `json:"covered_fraction"`
}

// StatsDiagnostic is one sampling diagnostic (for example `sample_write_failed`).
type StatsDiagnostic struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Count   *uint64 `json:"count,omitempty"`
}

// SampledStats is periodic sampling during one invocation (`system_stats.sampled`).
type SampledStats struct {
	IntervalMS               uint64            `json:"interval_ms"`
	MaxSamples               uint64            `json:"max_samples"`
	RetainedSamples          uint64            `json:"retained_samples"`
	DroppedSamples           uint64            `json:"dropped_samples"`
	Truncated                bool              `json:"truncated"`
	CollectionSeconds        float64           `json:"collection_seconds"`
	LargestGapSeconds        float64           `json:"largest_gap_seconds"`
	SpanSeconds              float64           `json:"span_seconds"`
	ResidentMemoryBytes      *GaugeSummary     `json:"resident_memory_bytes,omitempty"`
	ProcessCount             *GaugeSummary     `json:"process_count,omitempty"`
	CgroupMemoryCurrentBytes *GaugeSummary     `json:"cgroup_memory_current_bytes,omitempty"`
	CPUTimeSeconds           map[string]any    `json:"cpu_time_seconds,omitempty"`
	Diagnostics              []StatsDiagnostic `json:"diagnostics,omitempty"`
	Samples                  *ArtifactRef      `json:"samples,omitempty"`
	Summary                  *ArtifactRef      `json:"summary,omitempty"`
}

// InvocationSystemStats are the process and cgroup measurements around one invocation.
// Unknown fields are ignored.
type InvocationSystemStats struct {
	// ElapsedSeconds is monotonic time of the adapter exchange only.
	ElapsedSeconds float64             `json:"elapsed_seconds"`
	Before         ResourceObservation `json:"before"`
	After          ResourceObservation `json:"after"`
	// CPUTimeSecondsEstimate is nil when either reading is missing, the identities differ
	// or the counter decreased.
	CPUTimeSecondsEstimate *float64 `json:"cpu_time_seconds_estimate,omitempty"`
	CollectedGroups        []string `json:"collected_groups,omitempty"`
	// Cgroup holds before/after/deltas of the adapter host's cgroup (Linux cgroup v2).
	Cgroup  map[string]any `json:"cgroup,omitempty"`
	Sampled *SampledStats  `json:"sampled,omitempty"`
}

// Health levels, check scopes and outcomes.
const (
	LevelLive   = "live"
	LevelActive = "active"
	LevelReady  = "ready"

	ScopeRuntime = "runtime"
	ScopeService = "service"
	ScopeServer  = "server"

	OutcomePassed      = "passed"
	OutcomeFailed      = "failed"
	OutcomeUnknown     = "unknown"
	OutcomeUnsupported = "unsupported"
)

// CheckRequest asks for a health check. Scope "runtime" needs RuntimeID, "service" needs
// ServiceID, "server" takes neither. Level defaults to "live"; TimeoutSeconds (the whole
// check's budget) defaults to 3 when zero.
type CheckRequest struct {
	Scope          string  `json:"scope"`
	RuntimeID      string  `json:"runtime_id,omitempty"`
	ServiceID      string  `json:"service_id,omitempty"`
	Level          string  `json:"level,omitempty"`
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
}

// CheckObservation is one observation that ran, in evaluation order.
type CheckObservation struct {
	Level   string `json:"level"`
	Outcome string `json:"outcome"`
	// Reason is a snake_case reason; empty when passed without comment.
	Reason string `json:"reason"`
	// SourceID is a fixed evidence-source id, e.g. `scripted:process`.
	SourceID   string `json:"source_id"`
	ObservedAt string `json:"observed_at"`
}

// CheckTarget names what was checked.
type CheckTarget struct {
	RuntimeID string `json:"runtime_id"`
	ServiceID string `json:"service_id"`
}

// CheckReport is a health report (`fabric.check/v1alpha1`). Every outcome is a report,
// not a Go error. Empty strings stand for JSON nulls.
type CheckReport struct {
	SchemaVersion string             `json:"schema_version"`
	Scope         string             `json:"scope"`
	Target        CheckTarget        `json:"target"`
	Level         string             `json:"level"`
	Outcome       string             `json:"outcome"`
	Reason        string             `json:"reason"`
	Checks        []CheckObservation `json:"checks"`
	StartedAt     string             `json:"started_at"`
	FinishedAt    string             `json:"finished_at"`
	ElapsedMS     uint64             `json:"elapsed_ms"`
	// Activity is "idle" or "busy" (a Fabric invocation pending); empty when unknown.
	Activity string `json:"activity"`
}

// Passed reports whether Outcome is "passed".
func (r *CheckReport) Passed() bool { return r.Outcome == OutcomePassed }
