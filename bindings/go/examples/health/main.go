// Command health reads a runtime's resource snapshot, samples a memory spike and checks
// the runtime's health with the scripted adapter. From bindings/go: go run ./examples/health
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func main() {
	descriptor, _ := filepath.Abs("../../adapters/scripted/scripted.fabric-adapter.json")
	config := fabric.Config{
		Metadata:    fabric.Metadata{Name: "health"},
		Harness:     &fabric.Harness{AdapterID: "fabric.scripted"},
		Discovery:   &fabric.Discovery{LocalPaths: []string{descriptor}},
		SystemStats: fabric.SystemStatsConfig{Sampling: &fabric.SystemStatsSampling{IntervalMS: 10}}.JSON(),
	}
	if err := run(context.Background(), config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, config fabric.Config) error {
	f, err := fabric.New()
	if err != nil {
		return err
	}
	rt, err := f.StartRuntime(ctx, config)
	if err != nil {
		return err
	}
	defer rt.Close()

	snapshot, err := rt.ResourceSnapshot(ctx)
	if err != nil {
		return err
	}
	fmt.Println("processes:", snapshot.ProcessCount, "rss > 0:", snapshot.ResidentMemoryBytes > 0)

	spike := map[string]any{"scripted": map[string]any{"memory_mib": []int{80, 400, 80}, "step_ms": 200}}
	result, err := rt.Invoke(ctx, fabric.RunRequest{Input: "x", Context: spike})
	if err != nil {
		return err
	}
	stats := result.SystemStats
	peak := *stats.Sampled.ResidentMemoryBytes.SampledPeak
	fmt.Println("after:", stats.After.Status, "sampled peak >= 350 MiB:", peak >= 350*1024*1024)

	report, err := f.Check(ctx, nil, fabric.CheckRequest{Scope: fabric.ScopeRuntime, RuntimeID: rt.ID(), Level: fabric.LevelReady})
	if err != nil {
		return err
	}
	levels := []fabric.HealthLevel{}
	for _, check := range report.Checks {
		levels = append(levels, check.Level)
	}
	fmt.Println("check:", report.Outcome, levels)
	return nil
}
