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

// Chunk is one native OpenAI `chat.completion.chunk` of an [OpenAIStream] (the generated
// [OpenAiChunk]).
type Chunk = OpenAiChunk

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
