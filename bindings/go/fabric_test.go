package fabric_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func scriptedDescriptor(t testing.TB) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "adapters", "scripted", "scripted.fabric-adapter.json"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(filepath.Dir(path), "..", "..", "target", "debug", "fabric-adapter-scripted")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is missing; run 'cargo build --workspace' first", bin)
	}
	return path
}

func scriptedConfig(t testing.TB, name string, settings map[string]any) fabric.Config {
	return fabric.Config{
		SchemaVersion: "fabric.agent/v1alpha1",
		Metadata:      fabric.Metadata{Name: name},
		Harness:       &fabric.Harness{AdapterID: "fabric.scripted", Settings: settings},
		Discovery:     &fabric.Discovery{LocalPaths: []string{scriptedDescriptor(t)}},
		Runtime:       &fabric.RuntimeConfig{TimeoutSeconds: 30},
	}
}

type echoOutput struct {
	Response string `json:"response"`
	Turn     int    `json:"turn"`
}

func decodeOutput(t testing.TB, result *fabric.RunResult) echoOutput {
	t.Helper()
	if result.Status != fabric.StatusSucceeded {
		t.Fatalf("status %s, error %+v", result.Status, result.Error)
	}
	var out echoOutput
	if err := result.DecodeOutput(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func newFabric(t testing.TB) *fabric.Fabric {
	t.Helper()
	f, err := fabric.New()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPlan(t *testing.T) {
	f := newFabric(t)
	plan, err := f.Plan(context.Background(), scriptedConfig(t, "plan", nil))
	if err != nil {
		t.Fatal(err)
	}
	if plan.AgentName != "plan" || plan.AdapterDescriptor == nil || plan.AdapterDescriptor.Descriptor["adapter_id"] != "fabric.scripted" {
		t.Fatalf("unexpected plan: %+v", plan)
	}
	raw, err := f.PlanJSON(context.Background(), scriptedConfig(t, "plan", nil))
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(raw, &decoded); err != nil || decoded["agent_name"] != "plan" {
		t.Fatalf("plan JSON: %s", raw)
	}
}

func TestPlanConfigError(t *testing.T) {
	f := newFabric(t)
	config := map[string]any{"metadata": map[string]any{"name": "bad"}, "surprise": true}
	_, err := f.Plan(context.Background(), config)
	var configErr *fabric.ConfigError
	if !errors.As(err, &configErr) {
		t.Fatalf("want *ConfigError, got %T %v", err, err)
	}
	var info *fabric.Info
	if !errors.As(err, &info) || info.Code == "" || info.Stage == "" || info.Status != fabric.StatusConfig {
		t.Fatalf("want structured info, got %+v", info)
	}
	var runtimeErr *fabric.RuntimeError
	if errors.As(err, &runtimeErr) {
		t.Fatal("a config error is not a runtime error")
	}
	if _, err := f.Plan(context.Background(), "{}\x00"); !errors.As(err, &configErr) || configErr.Code != "invalid_argument" {
		t.Fatalf("NUL byte: got %v", err)
	}
}

func TestExpectedDescriptorSHA256(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	config := scriptedConfig(t, "pinned", nil)
	plan, err := f.Plan(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.DescriptorSHA256) != 64 {
		t.Fatalf("plan fingerprint: %q", plan.DescriptorSHA256)
	}
	if _, err := f.Plan(ctx, config, fabric.WithExpectedDescriptorSHA256(plan.DescriptorSHA256)); err != nil {
		t.Fatalf("matching fingerprint: %v", err)
	}
	other := strings.Repeat("0", 64)
	check := func(what string, err error) {
		t.Helper()
		var configErr *fabric.ConfigError
		if !errors.As(err, &configErr) || configErr.Code != "descriptor_mismatch" || configErr.Stage != "plan" {
			t.Fatalf("%s: want *ConfigError descriptor_mismatch at plan, got %T %v", what, err, err)
		}
		if configErr.Metadata["expected_sha256"] != other || configErr.Metadata["actual_sha256"] != plan.DescriptorSHA256 {
			t.Fatalf("%s: details %v", what, configErr.Metadata)
		}
	}
	_, err = f.Run(ctx, config, fabric.RunRequest{Input: "x"}, fabric.WithExpectedDescriptorSHA256(other))
	check("run", err)
	rt, err := f.StartRuntime(ctx, config, fabric.WithExpectedDescriptorSHA256(other))
	if rt != nil {
		rt.Close()
	}
	check("start", err)
}

func TestDoctor(t *testing.T) {
	f := newFabric(t)
	good, err := f.Doctor(context.Background(), scriptedConfig(t, "doctor", nil))
	if err != nil {
		t.Fatal(err)
	}
	if good.AgentName != "doctor" || good.Status == "fail" || len(good.Checks) == 0 {
		t.Fatalf("unexpected report %+v", good)
	}
	config := scriptedConfig(t, "doctor-missing", nil)
	config.Harness = &fabric.Harness{AdapterID: "fabric.no-such-adapter"}
	bad, err := f.Doctor(context.Background(), config)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, check := range bad.Checks {
		if check.Code == "adapter_not_found" && check.Path == "harness.adapter_id" {
			found = true
		}
	}
	if bad.Status != "fail" || !found {
		t.Fatalf("want an adapter_not_found finding, got %+v", bad)
	}
}

func TestValidate(t *testing.T) {
	f := newFabric(t)
	canonical, err := f.Validate(context.Background(), fabric.Config{Metadata: fabric.Metadata{Name: "canon"}, Harness: &fabric.Harness{AdapterID: "fabric.scripted"}})
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(canonical, &decoded); err != nil || decoded["schema_version"] != "fabric.agent/v1alpha1" {
		t.Fatalf("canonical config: %s", canonical)
	}
}

func TestRun(t *testing.T) {
	f := newFabric(t)
	result, err := f.Run(context.Background(), scriptedConfig(t, "run", nil), fabric.RunRequest{Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if out := decodeOutput(t, result); out.Response != "hello" {
		t.Fatalf("response %q", out.Response)
	}
	if result.AgentName != "run" || result.RuntimeID == "" || result.InvocationID == "" {
		t.Fatalf("ids missing: %+v", result)
	}
	// Software evidence: the core's inventory, the executable's and the scripted host's.
	if result.Execution == nil || len(result.Execution.Inventories) != 3 {
		t.Fatalf("execution: %+v", result.Execution)
	}
	core := result.Execution.Inventories[0]
	if core.ContextRef != "ctx-1" || core.Entries[0].Name != "fabric-core" || core.Entries[0].Version.Value == "" {
		t.Fatalf("core inventory: %+v", core)
	}
	if sdk := core.Entries[1]; sdk.Name != "github.com/NVIDIA/fabric-core/bindings/go" || sdk.Version.Status == "" {
		t.Fatalf("binding entry: %+v", sdk)
	}
	if goRuntime := core.Entries[2]; goRuntime.Name != "go" || goRuntime.Version.Value != runtime.Version() {
		t.Fatalf("go runtime entry: %+v", goRuntime)
	}
	if result.Execution.Coverage.Status != "complete" {
		t.Fatalf("coverage: %+v", result.Execution.Coverage)
	}
}

func TestTwoTurnRuntime(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	rt, err := f.StartRuntime(ctx, scriptedConfig(t, "two-turn", map[string]any{
		"replies": []any{"first: {input}", "second: {input} after {previous_input}"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	first, err := rt.Invoke(ctx, fabric.RunRequest{Input: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if out := decodeOutput(t, first); out.Response != "first: alpha" {
		t.Fatalf("first: %q", out.Response)
	}
	second, err := rt.Invoke(ctx, fabric.RunRequest{Input: "beta"})
	if err != nil {
		t.Fatal(err)
	}
	if out := decodeOutput(t, second); out.Response != "second: beta after alpha" || out.Turn != 2 {
		t.Fatalf("second: %+v", out)
	}
	status, err := rt.Status(ctx)
	if err != nil || status.Invocations != 2 {
		t.Fatalf("status %+v, %v", status, err)
	}
	stop, err := rt.Stop(ctx)
	if err != nil || stop == nil {
		t.Fatalf("stop: %v", err)
	}
	again, err := rt.Stop(ctx)
	if err != nil || again != stop {
		t.Fatal("stop is not idempotent")
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = rt.Invoke(ctx, fabric.RunRequest{Input: "late"})
	var stateErr *fabric.StateError
	if !errors.As(err, &stateErr) {
		t.Fatalf("invoke after close: want *StateError, got %v", err)
	}
}

func TestFailedResult(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	rt, err := f.StartRuntime(ctx, scriptedConfig(t, "failed", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	result, err := rt.Invoke(ctx, fabric.RunRequest{Input: "x", Context: map[string]any{
		"scripted": map[string]any{"fail": map[string]any{"code": "target_refused", "message": "no"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if result.Status != fabric.StatusFailed || result.Error == nil || result.Error.Code != "target_refused" || result.Error.Stage != "invoke" {
		t.Fatalf("want failed result, got %+v", result)
	}
	next, err := rt.Invoke(ctx, fabric.RunRequest{Input: "still alive"})
	if err != nil || decodeOutput(t, next).Response != "still alive" {
		t.Fatalf("runtime unusable after a failed turn: %v", err)
	}
}

func TestRuntimeError(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	rt, err := f.StartRuntime(ctx, scriptedConfig(t, "crash", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	_, err = rt.Invoke(ctx, fabric.RunRequest{Input: "x", Context: map[string]any{"scripted": map[string]any{"crash": true}}})
	var runtimeErr *fabric.RuntimeError
	if !errors.As(err, &runtimeErr) || runtimeErr.Stage != "invoke" || runtimeErr.Code == "" {
		t.Fatalf("want *RuntimeError at invoke, got %T %v", err, err)
	}
	var stateErr *fabric.StateError
	if errors.As(err, &stateErr) {
		t.Fatal("a crash is not a state error")
	}
	if !rt.Failed() {
		t.Fatal("runtime should be failed")
	}
	_, err = rt.Invoke(ctx, fabric.RunRequest{Input: "again"})
	if !errors.As(err, &stateErr) {
		t.Fatalf("invoke on a failed runtime: want *StateError, got %v", err)
	}
	if !errors.As(err, &runtimeErr) {
		t.Fatal("a state error is also a *RuntimeError")
	}
}

func TestOverlappingInvokeIsStateError(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	rt, err := f.StartRuntime(ctx, scriptedConfig(t, "overlap", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = rt.Invoke(ctx, fabric.RunRequest{Input: "x", Context: map[string]any{"scripted": map[string]any{"sleep_ms": 500}}})
		}(i)
	}
	wg.Wait()
	busy := 0
	for _, err := range errs {
		var stateErr *fabric.StateError
		switch {
		case err == nil:
		case errors.As(err, &stateErr) && stateErr.Code == "runtime_busy":
			busy++
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if busy != 1 {
		t.Fatalf("want exactly one runtime_busy, got %v", errs)
	}
}

func TestCancelReturnsPromptlyAndKeepsRuntimeUsable(t *testing.T) {
	f := newFabric(t)
	rt, err := f.StartRuntime(context.Background(), scriptedConfig(t, "cancel", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	started := time.Now()
	_, err = rt.Invoke(ctx, fabric.RunRequest{Input: "slow", Context: map[string]any{"scripted": map[string]any{"sleep_ms": 1500}}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want DeadlineExceeded, got %v", err)
	}
	if elapsed := time.Since(started); elapsed > time.Second {
		t.Fatalf("cancellation took %v", elapsed)
	}
	next, err := rt.Invoke(context.Background(), fabric.RunRequest{Input: "after"})
	if err != nil {
		t.Fatal(err)
	}
	if out := decodeOutput(t, next); out.Response != "after" || out.Turn != 2 {
		t.Fatalf("after cancellation: %+v", out)
	}
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	if _, err := rt.Invoke(done, fabric.RunRequest{Input: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

func TestConcurrentRuntimes(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	const count = 4
	const sleepMs = 600
	runtimes := make([]*fabric.Runtime, count)
	for i := range runtimes {
		rt, err := f.StartRuntime(ctx, scriptedConfig(t, "parallel", nil))
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		runtimes[i] = rt
	}
	started := time.Now()
	results := make([]*fabric.RunResult, count)
	errs := make([]error, count)
	var wg sync.WaitGroup
	for i, rt := range runtimes {
		wg.Add(1)
		go func(i int, rt *fabric.Runtime) {
			defer wg.Done()
			results[i], errs[i] = rt.Invoke(ctx, fabric.RunRequest{Input: i, Context: map[string]any{"scripted": map[string]any{"sleep_ms": sleepMs}}})
		}(i, rt)
	}
	wg.Wait()
	elapsed := time.Since(started)
	ids := map[string]bool{}
	for i := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if out := decodeOutput(t, results[i]); out.Turn != 1 {
			t.Fatalf("runtime %d saw turn %d", i, out.Turn)
		}
		ids[results[i].RuntimeID] = true
	}
	if len(ids) != count {
		t.Fatalf("runtime ids not distinct: %v", ids)
	}
	if limit := time.Duration(sleepMs*count*8/10) * time.Millisecond; elapsed > limit {
		t.Fatalf("invocations ran serially: %v > %v", elapsed, limit)
	}
}

func TestFinalizerFreesDroppedRuntime(t *testing.T) {
	f := newFabric(t)
	rt, err := f.StartRuntime(context.Background(), scriptedConfig(t, "dropped", nil))
	if err != nil {
		t.Fatal(err)
	}
	pid := int(rt.Info.HostPID)
	if pid <= 0 {
		t.Fatalf("no host pid: %+v", rt.Info)
	}
	rt = nil
	_ = rt
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if !processAlive(pid) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("host %d still running after the runtime was dropped", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func processAlive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// A zombie (state Z) has exited.
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == ')' {
			return i+2 < len(data) && data[i+2] != 'Z'
		}
	}
	return true
}

func TestEnvironmentHostsRuntimesUntilReleased(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	config := scriptedConfig(t, "environment", nil)
	env, err := f.PrepareEnvironment(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if env.ID() == "" || env.Info.Released {
		t.Fatalf("unexpected environment %+v", env.Info)
	}
	var runtimes []*fabric.Runtime
	for i := 0; i < 2; i++ {
		rt, err := env.StartRuntime(ctx, config)
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		if rt.Info.Environment.EnvironmentID != env.ID() {
			t.Fatalf("runtime not in the environment: %+v", rt.Info.Environment)
		}
		runtimes = append(runtimes, rt)
	}
	released, err := env.Release(ctx)
	if err != nil || !released.Released {
		t.Fatalf("release: %+v %v", released, err)
	}
	_, err = env.StartRuntime(ctx, config)
	var stateErr *fabric.StateError
	if !errors.As(err, &stateErr) || stateErr.Code != "environment_released" {
		t.Fatalf("start after release: want environment_released, got %v", err)
	}
	if result, err := runtimes[0].Invoke(ctx, fabric.RunRequest{Input: "still running"}); err != nil || decodeOutput(t, result).Response != "still running" {
		t.Fatalf("runtime after release: %v", err)
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
}

// Request overrides reach the adapter as request.extensions (upstream 0.5.0 semantics),
// checked against the scripted adapter's run_request schema.
func TestRequestOverridesBecomeExtensions(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	config := scriptedConfig(t, "overrides", map[string]any{"replies": []any{"zero", "one"}})
	result, err := f.Run(ctx, config, fabric.RunRequest{Input: "x", Overrides: map[string]any{"temperature": 0.5, "reply_index": 1}})
	if err != nil {
		t.Fatal(err)
	}
	var output struct {
		Response string
		Metadata map[string]any
	}
	if err := json.Unmarshal(result.Output, &output); err != nil {
		t.Fatal(err)
	}
	if output.Response != "one" || output.Metadata["temperature"] != 0.5 {
		t.Fatalf("overrides did not reach the adapter: %v", result.Output)
	}
	_, err = f.Run(ctx, config, fabric.RunRequest{Input: "x", Overrides: map[string]any{"temperature": "s3cret"}})
	var runtimeErr *fabric.RuntimeError
	if !errors.As(err, &runtimeErr) || runtimeErr.Code != "request_extension_invalid" || runtimeErr.Stage != "invoke" {
		t.Fatalf("want *RuntimeError request_extension_invalid at invoke, got %T %v", err, err)
	}
	if runtimeErr.Metadata["path"] != "request.extensions.temperature" || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("path or value: %v %v", runtimeErr.Metadata, err)
	}
}
