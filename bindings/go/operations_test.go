package fabric_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	requireProc(t, err)
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

// childPIDs lists this process's live child processes (adapter hosts are forked by the core).
func childPIDs(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	requireProc(t, err)
	var found []int
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		text := string(stat)
		fields := strings.Fields(text[strings.LastIndex(text, ")")+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			found = append(found, pid)
		}
	}
	return found
}

// StartRuntime and Stop are operations on the completion queue too: many runtimes start and
// stop at once, and a start whose context is cancelled while its host starts returns at
// once; the runtime it produced is stopped and freed in the background.
func TestStartAndStopThroughTheCompletionQueue(t *testing.T) {
	f := newFabric(t)
	config := scriptedConfig(t, "ops-start", map[string]any{"when_exhausted": "echo"})
	runtimes := make([]*fabric.Runtime, 8)
	errs := make([]error, len(runtimes))
	var wg sync.WaitGroup
	for i := range runtimes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtimes[i], errs[i] = f.StartRuntime(context.Background(), config)
		}()
	}
	wg.Wait()
	for i, rt := range runtimes {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		result, err := rt.Invoke(context.Background(), fabric.RunRequest{Input: fmt.Sprint(i)})
		if err != nil || decodeOutput(t, result).Response != fmt.Sprint(i) {
			t.Fatalf("invoke %d: %v", i, err)
		}
	}
	for _, rt := range runtimes {
		stop, err := rt.Stop(context.Background())
		if err != nil || stop == nil {
			t.Fatalf("stop: %v", err)
		}
		rt.Close()
	}

	slow := scriptedConfig(t, "ops-start-cancel", map[string]any{"when_exhausted": "echo", "start_delay_ms": 300})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := f.StartRuntime(ctx, slow); err != context.DeadlineExceeded {
		t.Fatalf("err %v, want DeadlineExceeded", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(childPIDs(t)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := childPIDs(t); len(left) > 0 {
		t.Fatalf("hosts left behind: %v", left)
	}
}
