package fabric_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// atofConfig is a config of the ATOF test adapter (tests/fixtures/atof-adapter), which
// posts ATOF records to the nemo-fabric-stream sink of its Relay config.
func atofConfig(t *testing.T, relay bool) map[string]any {
	t.Helper()
	fixture, err := filepath.Abs(filepath.Join("..", "..", "tests", "fixtures", "atof-adapter"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(fixture, "atof.fabric-adapter.json")
	config := map[string]any{
		"schema_version": "fabric.agent/v1alpha1",
		"metadata":       map[string]any{"name": "go-atof"},
		"harness":        map[string]any{"adapter_id": "test.fabric.atof"},
		"discovery":      map[string]any{"local_paths": []string{path}},
		"environment":    map[string]any{"artifacts": filepath.Join(dir, "artifacts")},
		"runtime":        map[string]any{"timeout_seconds": 60},
	}
	if relay {
		config["telemetry"] = map[string]any{"providers": map[string]any{"relay": map[string]any{}}}
		config["relay"] = map[string]any{"observability": map[string]any{"atof": map[string]any{"enabled": true}}}
	}
	return config
}

func TestInvokeStreamYieldsTheTurnsATOFRecords(t *testing.T) {
	ctx := context.Background()
	rt, err := newFabric(t).StartRuntime(ctx, atofConfig(t, true), fabric.WithStreaming())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Close() }()
	if !rt.SupportsStreaming() {
		t.Fatal("a streaming start must support InvokeStream")
	}
	for _, marks := range []int{3, 1} {
		stream, err := rt.InvokeStream(ctx, fabric.RunRequest{Input: fmt.Sprintf("records:%d", marks)})
		if err != nil {
			t.Fatal(err)
		}
		if stream.Info.Kind != "relay.atof.record" {
			t.Fatalf("kind %q", stream.Info.Kind)
		}
		var records []fabric.AtofRecord
		for {
			record, err := stream.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			records = append(records, record)
		}
		result, err := stream.Result(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if result.Status != fabric.StatusSucceeded || len(records) != marks+2 {
			t.Fatalf("status %s, %d records: %v", result.Status, len(records), records)
		}
		metadata, _ := records[0]["metadata"].(map[string]any)
		if metadata["nemo_fabric_request_id"] != result.RequestID {
			t.Fatalf("first record %v, request %s", records[0], result.RequestID)
		}
		for i, record := range records[1 : len(records)-1] {
			if record["name"] != fmt.Sprintf("step-%d", i) {
				t.Fatalf("record %d: %v", i, record)
			}
		}
	}
}

func TestStreamingNeedsRelayAndAStreamingRuntime(t *testing.T) {
	ctx := context.Background()
	f := newFabric(t)
	_, err := f.StartRuntime(ctx, atofConfig(t, false), fabric.WithStreaming())
	var config *fabric.ConfigError
	if !errors.As(err, &config) || config.Code != "streaming_requires_relay" {
		t.Fatalf("want streaming_requires_relay, got %v", err)
	}
	_, err = f.StartRuntime(ctx, atofConfig(t, true), fabric.WithLaunchCollector(false))
	if !errors.As(err, &config) || config.Code != "launch_collector_requires_streaming" {
		t.Fatalf("want launch_collector_requires_streaming, got %v", err)
	}
	_, err = f.StartRuntime(ctx, atofConfig(t, true), fabric.WithStreaming(), fabric.WithCollectorMemoryBudgetBytes(1024))
	if !errors.As(err, &config) || config.Code != "invalid_value" {
		t.Fatalf("want invalid_value for a budget under one record, got %v", err)
	}
	rt, err := f.StartRuntime(ctx, atofConfig(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Close() }()
	_, err = rt.InvokeStream(ctx, fabric.RunRequest{Input: "x"})
	var capability *fabric.CapabilityError
	if rt.SupportsStreaming() || !errors.As(err, &capability) || capability.Code != "streaming_unavailable" {
		t.Fatalf("want streaming_unavailable, got %v", err)
	}
}
