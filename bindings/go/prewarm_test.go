package fabric_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func hostPid(t *testing.T, result *fabric.RunResult) uint32 {
	t.Helper()
	for _, event := range result.Events {
		if event.Kind == "runtime_start" {
			if pid, ok := event.Metadata["host_pid"].(float64); ok {
				return uint32(pid)
			}
		}
	}
	t.Fatalf("no runtime_start event with host_pid: %+v", result.Events)
	return 0
}

func alive(pid uint32) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

func eventually(t *testing.T, what string, bound time.Duration, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("%s within %v", what, bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPrewarmClaimMismatchAndClose(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	config := scriptedConfig(t, "go-prewarm", map[string]any{"replies": []string{"echo: {input}"}})
	pool, err := f.Prewarm(ctx, config, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ready := pool.Info.ReadyPids
	if len(ready) != 2 || !alive(ready[0]) || !alive(ready[1]) {
		t.Fatalf("ready: %v", ready)
	}
	result, err := f.Run(ctx, config, fabric.RunRequest{Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if used := hostPid(t, result); !slices.Contains(ready, used) {
		t.Fatalf("host %d is not one of %v", used, ready)
	}
	eventually(t, "a replacement", 10*time.Second, func() bool {
		status, err := pool.Status()
		return err == nil && len(status.ReadyPids) == 2
	})
	status, err := pool.Status()
	if err != nil || status.Claimed != 1 {
		t.Fatalf("status %+v, %v", status, err)
	}
	waiting := status.ReadyPids
	other := scriptedConfig(t, "go-prewarm", map[string]any{"replies": []string{"other: {input}"}})
	result, err = f.Run(ctx, other, fabric.RunRequest{Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(waiting, hostPid(t, result)) {
		t.Fatal("another config took a prewarmed host")
	}
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	if final := pool.Final(); final == nil || !final.Closed || len(final.ReadyPids) != 0 || final.Claimed != 1 {
		t.Fatalf("final: %+v", final)
	}
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the waiting hosts end", 5*time.Second, func() bool {
		return !slices.ContainsFunc(waiting, alive)
	})
}

func TestPrewarmRefusesZeroHosts(t *testing.T) {
	f := newFabric(t)
	config := scriptedConfig(t, "go-prewarm-refused", nil)
	_, err := f.Prewarm(context.Background(), config, 0)
	var configError *fabric.ConfigError
	if !errors.As(err, &configError) || configError.Metadata["path"] != "hosts" {
		t.Fatalf("want a ConfigError naming hosts, got %v", err)
	}
}
