// Command bench measures warm invocations of the scripted adapter through the Go binding
// and prints one JSON line: median, p90, mean and min in microseconds. Used by
// bench/bindings/run.sh.
//
//	cd bindings/go && go run ./examples/bench -n 2000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func main() {
	n := flag.Int("n", 2000, "measured invocations")
	warmup := flag.Int("warmup", 200, "unmeasured invocations first")
	descriptor := flag.String("descriptor", filepath.Join("..", "..", "adapters", "scripted", "scripted.fabric-adapter.json"), "scripted adapter descriptor")
	flag.Parse()
	if err := run(*n, *warmup, *descriptor); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(n, warmup int, descriptor string) error {
	path, err := filepath.Abs(descriptor)
	if err != nil {
		return err
	}
	f, err := fabric.New()
	if err != nil {
		return err
	}
	ctx := context.Background()
	rt, err := f.StartRuntime(ctx, fabric.Config{
		Metadata:  fabric.Metadata{Name: "bench-go"},
		Harness:   &fabric.Harness{AdapterID: "fabric.scripted"},
		Discovery: &fabric.Discovery{LocalPaths: []string{path}},
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	request := fabric.RunRequest{Input: "ping"}
	for i := 0; i < warmup; i++ {
		if _, err := rt.Invoke(ctx, request); err != nil {
			return err
		}
	}
	invoke := func() error {
		result, err := rt.Invoke(ctx, request)
		if err != nil {
			return err
		}
		if result.Status != fabric.RunStatusSucceeded {
			return fmt.Errorf("status %s", result.Status)
		}
		return nil
	}
	// A non-blocking native call: what the binding itself costs per call.
	status := func() error {
		_, err := rt.Status(ctx)
		return err
	}
	// Decoding one RunResult's JSON (re-encoded from a real result, about the size the C
	// ABI hands over) into the binding's types: the binding's own share of an invoke.
	sample, err := rt.Invoke(ctx, request)
	if err != nil {
		return err
	}
	text, err := json.Marshal(sample)
	if err != nil {
		return err
	}
	decode := func() error {
		return json.Unmarshal(text, &fabric.RunResult{})
	}
	for _, m := range []struct {
		name string
		call func() error
	}{{"warm_invoke_us", invoke}, {"status_call_us", status}, {"result_decode_us", decode}} {
		summary, err := measure(n, m.call)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		summary["binding"] = "go"
		summary["measure"] = m.name
		if err := json.NewEncoder(os.Stdout).Encode(summary); err != nil {
			return err
		}
	}
	return nil
}

// tasks is the number of tasks started between two lastPid readings, or nil.
func tasks(before, after int64) any {
	if before < 0 || after < 0 {
		return nil
	}
	return after - before
}

// cpuSeconds is this process's CPU time (user+sys, all threads).
func cpuSeconds() float64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return float64(usage.Utime.Nano()+usage.Stime.Nano()) / 1e9
}

// lastPid is the last task id (process or thread) allocated in this PID namespace, or -1:
// counted only when this program is PID 1 of its own namespace (bench/runner.py runs it
// so; bench/python/meter.py explains the count).
func lastPid() int64 {
	if os.Getpid() != 1 {
		return -1
	}
	text, err := os.ReadFile("/proc/sys/kernel/ns_last_pid")
	if err != nil {
		return -1
	}
	pid, err := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
	if err != nil {
		return -1
	}
	return pid
}

func measure(n int, call func() error) (map[string]any, error) {
	before := lastPid()
	cpu := cpuSeconds()
	samples := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		started := time.Now()
		err := call()
		elapsed := time.Since(started)
		if err != nil {
			return nil, err
		}
		samples = append(samples, float64(elapsed.Nanoseconds())/1000)
	}
	sort.Float64s(samples)
	sum := 0.0
	for _, s := range samples {
		sum += s
	}
	return map[string]any{
		"n":               n,
		"median_us":       samples[len(samples)/2],
		"p90_us":          samples[len(samples)*9/10],
		"mean_us":         sum / float64(len(samples)),
		"min_us":          samples[0],
		"cpu_per_call_us": (cpuSeconds() - cpu) / float64(n) * 1e6,
		"tasks":           tasks(before, lastPid()),
	}, nil
}
