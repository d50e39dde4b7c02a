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
	AgentName        string           `json:"agent_name"`
	Harness          string           `json:"harness"`
	AdapterKind      string           `json:"adapter_kind"`
	AdapterID        string           `json:"adapter_id,omitempty"`
	RuntimeID        string           `json:"runtime_id"`
	InvocationID     string           `json:"invocation_id"`
	RequestID        string           `json:"request_id"`
	Status           RunStatus        `json:"status"`
	Output           json.RawMessage  `json:"output,omitempty"`
	Error            *Info            `json:"error,omitempty"`
	Usage            *RunUsage        `json:"usage,omitempty"`
	Artifacts        ArtifactManifest `json:"artifacts"`
	Events           []Event          `json:"events,omitempty"`
	Telemetry        map[string]any   `json:"telemetry,omitempty"`
	Metadata         map[string]any   `json:"metadata,omitempty"`
	SystemStats      map[string]any   `json:"system_stats,omitempty"`
	ResourceSnapshot map[string]any   `json:"resource_snapshot,omitempty"`
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
