package fabric_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}

func slowRequest(input string, ms int) fabric.RunRequest {
	return fabric.RunRequest{Input: input, Context: map[string]any{"scripted": map[string]any{"sleep_ms": ms}}}
}

// Run is a non-blocking operation on the process's completion queue: many at once
// complete (no OS thread each), and no descriptor is left behind.
func TestConcurrentRunsThroughTheCompletionQueue(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	config := scriptedConfig(t, "ops-runs", map[string]any{"when_exhausted": "echo"})
	if _, err := f.Run(ctx, config, fabric.RunRequest{Input: "warm"}); err != nil {
		t.Fatal(err) // the completion queue exists from here on
	}
	before := openFDs(t)
	for round := 0; round < 2; round++ {
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				want := fmt.Sprintf("%d-%d", round, i)
				result, err := f.Run(ctx, config, slowRequest(want, 5))
				if err != nil {
					errs[i] = err
					return
				}
				if got := decodeOutput(t, result).Response; got != want {
					errs[i] = fmt.Errorf("response %q, want %q", got, want)
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// Hosts are reaped in the background after their stop; give their descriptors a moment.
	deadline := time.Now().Add(10 * time.Second)
	for openFDs(t) > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if after := openFDs(t); after > before {
		t.Fatalf("descriptors %d -> %d: runs must not leave descriptors behind", before, after)
	}
	// A run whose config cannot be planned fails through the operation.
	broken := scriptedConfig(t, "ops-broken", nil)
	broken.Harness.AdapterID = "fabric.no-such-adapter"
	if _, err := f.Run(ctx, broken, fabric.RunRequest{Input: "x"}); err == nil {
		t.Fatal("a run of an unknown adapter succeeded")
	}
}

// A cancelled Run returns at once; the run finishes (and stops its runtime) in the core.
func TestCancelledRunFinishesInTheCore(t *testing.T) {
	f := newFabric(t)
	config := scriptedConfig(t, "ops-run-cancel", map[string]any{"when_exhausted": "echo"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	started := time.Now()
	if _, err := f.Run(ctx, config, slowRequest("abandoned", 400)); err != context.DeadlineExceeded {
		t.Fatalf("err %v, want DeadlineExceeded", err)
	}
	if elapsed := time.Since(started); elapsed > 300*time.Millisecond {
		t.Fatalf("cancellation took %v", elapsed)
	}
	result, err := f.Run(context.Background(), config, fabric.RunRequest{Input: "next"})
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeOutput(t, result).Response; got != "next" {
		t.Fatalf("response %q", got)
	}
}

// A cancelled context returns at once; the operation finishes in the core and the next
// Invoke waits for it.
func TestCancelledInvocationFinishesInTheCore(t *testing.T) {
	f := newFabric(t)
	rt, err := f.StartRuntime(context.Background(), scriptedConfig(t, "ops-cancel", map[string]any{"when_exhausted": "echo"}))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	started := time.Now()
	if _, err := rt.Invoke(ctx, slowRequest("abandoned", 400)); err != context.DeadlineExceeded {
		t.Fatalf("err %v, want DeadlineExceeded", err)
	}
	if elapsed := time.Since(started); elapsed > 300*time.Millisecond {
		t.Fatalf("cancellation took %v", elapsed)
	}
	result, err := rt.Invoke(context.Background(), fabric.RunRequest{Input: "next"})
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeOutput(t, result).Response; got != "next" {
		t.Fatalf("response %q", got)
	}
	status, err := rt.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if status.State != "idle" || status.Invocations != 2 {
		t.Fatalf("status %+v", status)
	}
}
