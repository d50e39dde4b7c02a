package fabric_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// The capture options reach the core: a budget without WithModelCallCapture is the core's
// invalid_value at options.max_model_calls, and with it the run starts (the scripted
// adapter's config has no model base_url, so nothing is recorded).
func TestModelCallCaptureOptionsReachTheCore(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	config := scriptedConfig(t, "capture", nil)
	_, err := f.Run(ctx, config, fabric.RunRequest{Input: "x"}, fabric.WithMaxModelCalls(1))
	var configErr *fabric.ConfigError
	if !errors.As(err, &configErr) || configErr.Code != "invalid_value" || configErr.Metadata["path"] != "options.max_model_calls" {
		t.Fatalf("want invalid_value at options.max_model_calls, got %v", err)
	}
	result, err := f.Run(ctx, config, fabric.RunRequest{Input: "x"},
		fabric.WithModelCallCapture(), fabric.WithMaxModelCalls(1), fabric.WithMaxTotalTokens(10))
	if err != nil {
		t.Fatal(err)
	}
	if result.Status != "succeeded" || result.ModelCalls != nil {
		t.Fatalf("status %q, model calls %v", result.Status, result.ModelCalls)
	}
}

// RunResult.ModelCallRecords reads model-calls.jsonl, one record a line, with Gym's members
// typed (call_index, started_at as Unix seconds, tokens_*); no summary reads as no records.
func TestModelCallRecordsReadTheRecordsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model-calls.jsonl")
	line := func(index int, tokens int) string {
		return fmt.Sprintf(`{"model_call_id":"model-call-%d","call_index":%d,"runtime_id":"r","invocation_id":"i",`+
			`"client_session_id":"i","model_role":"default","model":"m","dialect":"chat","method":"POST",`+
			`"path":"/chat/completions","model_ref":{"type":"responses_api_models","name":"default"},`+
			`"base_url":"http://127.0.0.1:9/v1","started_at":1700000000.25,"completed_at":1700000000.5,`+
			`"request":{"messages":[]},"status_code":200,"response":{"id":"c"},"streamed":false,"chunks":1,`+
			`"latency_total_ms":250.0,"tokens_total":%d,"token_ids":[7,8]}`, index, index, tokens)
	}
	if err := os.WriteFile(path, []byte(line(0, 3)+"\n\n"+line(1, 5)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	result := fabric.RunResult{ModelCalls: &fabric.ModelCallsSummary{Count: 2, Path: path}}
	records, err := result.ModelCallRecords()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 2 || records[1].CallIndex != 1 || records[1].ModelCallID != "model-call-1" ||
		records[0].StartedAt != 1700000000.25 || *records[1].TokensTotal != 5 || records[0].Dialect != "chat" {
		t.Fatalf("records %+v", records)
	}
	none, err := (&fabric.RunResult{}).ModelCallRecords()
	if err != nil || none != nil {
		t.Fatalf("no summary: %v %v", none, err)
	}
	if err := os.WriteFile(path, []byte("{not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := result.ModelCallRecords(); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a bad line: %v", err)
	}
}
