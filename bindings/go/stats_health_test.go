package fabric_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

const mib = 1024 * 1024

func TestResourceSnapshot(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	rt, err := f.StartRuntime(ctx, scriptedConfig(t, "snapshot", nil))
	if err != nil {
		t.Fatal(err)
	}
	snapshot, err := rt.ResourceSnapshot(ctx)
	if err != nil {
		rt.Close()
		t.Fatal(err)
	}
	if snapshot.RuntimeID != rt.ID() || snapshot.ProcessCount < 1 || snapshot.ResidentMemoryBytes == 0 || snapshot.CPUTimeSeconds < 0 || snapshot.ObservedAt == "" {
		t.Fatalf("unexpected snapshot %+v", snapshot)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = rt.ResourceSnapshot(ctx)
	var unavailable *fabric.ResourceUnavailableError
	if !errors.As(err, &unavailable) || unavailable.Code != "resource_observation_unavailable" {
		t.Fatalf("after stop: want *ResourceUnavailableError, got %T %v", err, err)
	}
	var runtimeErr *fabric.RuntimeError
	if !errors.As(err, &runtimeErr) {
		t.Fatal("resource errors are runtime errors too")
	}
}

func TestSystemStats(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	result, err := f.Run(ctx, scriptedConfig(t, "stats", nil), fabric.RunRequest{Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	stats := result.SystemStats
	if stats == nil || stats.Before.Status != "available" || stats.After.Snapshot == nil || stats.After.Snapshot.RuntimeID != result.RuntimeID {
		t.Fatalf("system_stats by default: %+v", stats)
	}
	if result.ResourceSnapshot == nil || result.ResourceSnapshot.RuntimeID != result.RuntimeID {
		t.Fatalf("resource_snapshot: %+v", result.ResourceSnapshot)
	}

	disabled := scriptedConfig(t, "no-stats", nil)
	disabled.SystemStats = fabric.SystemStatsDisabled
	encoded, _ := json.Marshal(disabled)
	var raw map[string]any
	if err := json.Unmarshal(encoded, &raw); err != nil {
		t.Fatal(err)
	}
	if value, present := raw["system_stats"]; !present || value != nil {
		t.Fatalf("SystemStatsDisabled must encode as null: %s", encoded)
	}
	result, err = f.Run(ctx, disabled, fabric.RunRequest{Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if result.SystemStats != nil {
		t.Fatalf("disabled stats still present: %+v", result.SystemStats)
	}

	sampled := scriptedConfig(t, "sampled", nil)
	sampled.SystemStats = fabric.SystemStatsConfig{Sampling: &fabric.SystemStatsSampling{IntervalMS: 10, MaxSamples: 10000}}.JSON()
	result, err = f.Run(ctx, sampled, fabric.RunRequest{
		Input:   "spike",
		Context: map[string]any{"scripted": map[string]any{"memory_mib": []int{80, 400, 80}, "step_ms": 300, "burn_cpu_ms": 300}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if result.Status != fabric.StatusSucceeded {
		t.Fatalf("sampled run: %+v", result.Error)
	}
	s := result.SystemStats
	if s == nil || s.Sampled == nil || s.Sampled.ResidentMemoryBytes == nil || s.Sampled.ResidentMemoryBytes.SampledPeak == nil {
		t.Fatalf("no sampled RSS: %+v", s)
	}
	if peak := *s.Sampled.ResidentMemoryBytes.SampledPeak; peak < 350*mib {
		t.Fatalf("sampled peak %.0f bytes, want >= 350 MiB", peak)
	}
	if s.CPUTimeSecondsEstimate == nil || *s.CPUTimeSecondsEstimate <= 0.1 {
		t.Fatalf("cpu estimate %v", s.CPUTimeSecondsEstimate)
	}
}

func TestCheck(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	rt, err := f.StartRuntime(ctx, scriptedConfig(t, "check", nil))
	if err != nil {
		t.Fatal(err)
	}
	id := rt.ID()
	report, err := f.Check(ctx, nil, fabric.CheckRequest{Scope: fabric.ScopeRuntime, RuntimeID: id, Level: fabric.LevelReady})
	if err != nil {
		rt.Close()
		t.Fatal(err)
	}
	if !report.Passed() || report.Reason != "" || len(report.Checks) != 3 || report.Checks[2].Level != fabric.LevelReady || report.Target.RuntimeID != id {
		t.Fatalf("ready check: %+v", report)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := f.Check(ctx, nil, fabric.CheckRequest{Scope: fabric.ScopeRuntime, RuntimeID: id, Level: fabric.LevelReady})
	if err != nil || after.Outcome != fabric.OutcomeUnknown || after.Reason != "runtime_unavailable" {
		t.Fatalf("after stop: %+v %v", after, err)
	}
	server, err := f.Check(ctx, nil, fabric.CheckRequest{Scope: fabric.ScopeServer})
	if err != nil || server.Outcome != fabric.OutcomeUnsupported || server.Reason != "unsupported_scope" {
		t.Fatalf("server scope: %+v %v", server, err)
	}
	_, err = f.Check(ctx, nil, fabric.CheckRequest{Scope: fabric.ScopeRuntime})
	var configErr *fabric.ConfigError
	if !errors.As(err, &configErr) || configErr.Code != "invalid_check_request" {
		t.Fatalf("missing runtime_id: want *ConfigError, got %T %v", err, err)
	}
}

func TestCheckDuringInvokeInEnvironment(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	config := scriptedConfig(t, "check-env", nil)
	env, err := f.PrepareEnvironment(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	rt, err := env.StartRuntime(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	done := make(chan error, 1)
	go func() {
		_, err := rt.Invoke(ctx, fabric.RunRequest{Input: "slow", Context: map[string]any{"scripted": map[string]any{"sleep_ms": 2000}}})
		done <- err
	}()
	waitBusy(t, rt)
	report, err := f.Check(ctx, env, fabric.CheckRequest{Scope: fabric.ScopeRuntime, RuntimeID: rt.ID(), Level: fabric.LevelReady, TimeoutSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the invocation finished before the check returned (%v)", err)
	default:
	}
	if !report.Passed() || report.Activity != "busy" {
		t.Fatalf("check during invoke: %+v", report)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = f.Check(ctx, env, fabric.CheckRequest{Scope: fabric.ScopeRuntime, RuntimeID: rt.ID()})
	var stateErr *fabric.StateError
	if !errors.As(err, &stateErr) || stateErr.Code != "environment_released" {
		t.Fatalf("released environment: want *StateError environment_released, got %T %v", err, err)
	}
}

// waitBusy polls the core's runtime state until the invocation is in flight (deadline 10 s).
func waitBusy(t *testing.T, rt *fabric.Runtime) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		status, err := rt.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if status.State == "busy" {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the invocation never became busy")
}
