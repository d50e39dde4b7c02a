package fabric_test

import (
	"context"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// Checks in a provider environment are answered by its runtime server: the server itself
// (scope server), the runtime it selects by id (passed, a failing level, stopped), also
// while an invocation holds the environment's provider.
func TestCheckThroughSubprocessEnvironment(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	config := func(health map[string]any) fabric.Config {
		c := scriptedConfig(t, "env-health", map[string]any{"replies": []string{"echo: {input}"}, "health": health})
		c.Environment = map[string]any{"provider": "subprocess", "settings": map[string]any{"root": t.TempDir()}}
		return c
	}
	env, err := f.PrepareEnvironment(ctx, config(map[string]any{}))
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	server, err := f.Check(ctx, env, fabric.CheckRequest{Scope: fabric.ScopeServer})
	if err != nil || !server.Passed() || len(server.Checks) != 1 || server.Checks[0].SourceID != "fabric:runtime_server" {
		t.Fatalf("server check: %+v %v", server, err)
	}
	rt, err := env.StartRuntime(ctx, config(map[string]any{}))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ready := fabric.CheckRequest{Scope: fabric.ScopeRuntime, RuntimeID: rt.ID(), Level: fabric.LevelReady, TimeoutSeconds: 1.5}
	done := make(chan error, 1)
	go func() {
		_, err := rt.Invoke(ctx, fabric.RunRequest{Input: "slow", Context: map[string]any{"scripted": map[string]any{"sleep_ms": 2000}}})
		done <- err
	}()
	waitBusy(t, rt)
	report, err := f.Check(ctx, env, ready)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the invocation finished before the check returned (%v)", err)
	default:
	}
	if !report.Passed() || report.Activity != "busy" || len(report.Checks) != 3 {
		t.Fatalf("check during invoke: %+v", report)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped, err := f.Check(ctx, env, ready)
	if err != nil || stopped.Outcome != fabric.OutcomeUnknown || stopped.Reason != "runtime_unavailable" {
		t.Fatalf("stopped: %+v %v", stopped, err)
	}
	failing, err := env.StartRuntime(ctx, config(map[string]any{"fail": "active"}))
	if err != nil {
		t.Fatal(err)
	}
	defer failing.Close()
	ready.RuntimeID = failing.ID()
	failed, err := f.Check(ctx, env, ready)
	if err != nil || failed.Outcome != fabric.OutcomeFailed || len(failed.Checks) != 2 {
		t.Fatalf("failing level: %+v %v", failed, err)
	}
	if _, err := failing.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
