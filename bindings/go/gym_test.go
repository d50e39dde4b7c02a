package fabric_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func gymResult(invocation string) fabric.RunResult {
	var result fabric.RunResult
	text := `{"agent_name": "a", "harness": "h", "adapter_kind": "process", "runtime_id": "runtime-1",
		"invocation_id": "` + invocation + `", "request_id": "request-` + invocation + `",
		"status": "failed", "output": null, "error": {"stage": "invoke", "code": "timeout", "message": "m"}}`
	if err := json.Unmarshal([]byte(text), &result); err != nil {
		panic(err)
	}
	return result
}

func TestGymObservations(t *testing.T) {
	f, err := fabric.New()
	if err != nil {
		t.Fatal(err)
	}
	root := json.RawMessage(`{"kind": "scope", "scope_category": "start", "uuid": "root", "category": "agent",
		"timestamp": "2026-01-01T00:00:00Z", "metadata": {"nemo_fabric_request_id": "request-i1"}}`)
	llm := json.RawMessage(`{"kind": "scope", "scope_category": "end", "uuid": "l", "parent_uuid": "root",
		"category": "llm", "timestamp": "2026-01-01T00:00:01Z", "metadata": {"model_call_id": "mc-1"}}`)
	out, err := f.GymObservations(context.Background(), fabric.GymObservationsRequest{
		TaskID: "t", RolloutID: "r", Results: []fabric.RunResult{gymResult("i1")},
		ATOF: []json.RawMessage{root, llm},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.NgAgentObservations.Records) != 1 || out.Trajectory.TaskID != "t" {
		t.Fatalf("unexpected output: %+v", out)
	}
	var invocation struct {
		Kind       string           `json:"kind"`
		Status     string           `json:"status"`
		ErrorType  string           `json:"error_type"`
		ModelCalls []map[string]any `json:"model_calls"`
	}
	if err := json.Unmarshal(out.NgAgentObservations.Records[0], &invocation); err != nil {
		t.Fatal(err)
	}
	if invocation.Kind != "agent_invocation" || invocation.Status != "failed" || invocation.ErrorType != "timeout" {
		t.Fatalf("unexpected invocation: %+v", invocation)
	}
	if len(invocation.ModelCalls) != 1 || invocation.ModelCalls[0]["model_call_id"] != "mc-1" {
		t.Fatalf("unexpected model calls: %+v", invocation.ModelCalls)
	}

	_, err = f.GymObservations(context.Background(), fabric.GymObservationsRequest{
		TaskID: "t", RolloutID: "r", Results: []fabric.RunResult{gymResult("i"), gymResult("i")},
	})
	var configErr *fabric.ConfigError
	if !errors.As(err, &configErr) || configErr.Code != "gym_invocation_id_duplicate" {
		t.Fatalf("want a gym_invocation_id_duplicate ConfigError, got %v", err)
	}
}
