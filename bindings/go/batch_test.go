package fabric_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// runBatch sends items through the scripted adapter and collects every line and the summary.
func runBatch(t *testing.T, items []any, settings fabric.BatchSettings) (map[string]fabric.BatchLine, *fabric.BatchSummary, error) {
	t.Helper()
	return batchWith(t, scriptedConfig(t, "go-batch", map[string]any{"when_exhausted": "echo"}), items, settings)
}

// batchWith sends items through config and collects every line and the summary.
func batchWith(t *testing.T, config any, items []any, settings fabric.BatchSettings) (map[string]fabric.BatchLine, *fabric.BatchSummary, error) {
	t.Helper()
	f := newFabric(t)
	feed := make(chan any)
	go func() {
		defer close(feed)
		for _, item := range items {
			feed <- item
		}
	}()
	b, err := f.Batch(context.Background(), config, feed, settings)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]fabric.BatchLine{}
	for done := range b.Lines() {
		if _, twice := lines[done.ID]; twice {
			t.Fatalf("id %s twice", done.ID)
		}
		lines[done.ID] = done
	}
	summary, err := b.Wait()
	return lines, summary, err
}

func u32(n uint32) *uint32   { return &n }
func f64(n float64) *float64 { return &n }

func TestBatchTwoHundredItemsAtConcurrency8(t *testing.T) {
	items := make([]any, 200)
	for i := range items {
		items[i] = map[string]any{"id": fmt.Sprintf("item-%d", i), "input": fmt.Sprintf("hello %d", i)}
	}
	lines, summary, err := runBatch(t, items, fabric.BatchSettings{Concurrency: u32(8)})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 200 || summary.Succeeded != 200 {
		t.Fatalf("%d lines, summary %+v", len(lines), summary)
	}
	for i := 0; i < 200; i++ {
		line, ok := lines[fmt.Sprintf("item-%d", i)]
		if !ok || line.Result == nil || !strings.Contains(string(line.Result.Output), fmt.Sprintf("hello %d", i)) {
			t.Fatalf("item-%d: %+v", i, line)
		}
	}
}

func TestBatchSleepItemsRunConcurrently(t *testing.T) {
	items := make([]any, 64)
	for i := range items {
		items[i] = map[string]any{"id": fmt.Sprint(i), "input": map[string]any{"scripted": map[string]any{"sleep_ms": 200}}}
	}
	began := time.Now()
	lines, _, err := runBatch(t, items, fabric.BatchSettings{Concurrency: u32(16)})
	if err != nil || len(lines) != 64 {
		t.Fatal(err, len(lines))
	}
	if wall := time.Since(began); wall > 6400*time.Millisecond {
		t.Fatalf("took %v", wall)
	}
}

func TestBatchRetriesCrashesAndTimesOutOneItem(t *testing.T) {
	items := []any{
		map[string]any{"id": "crash", "input": map[string]any{"scripted": map[string]any{"crash": true}}},
		map[string]any{"id": "slow", "input": map[string]any{"scripted": map[string]any{"sleep_ms": 20000}}},
		map[string]any{"id": "ok", "input": "x"},
	}
	lines, summary, err := runBatch(t, items, fabric.BatchSettings{Attempts: u32(3), TimeoutSeconds: f64(1.5), Concurrency: u32(3)})
	if err != nil {
		t.Fatal(err)
	}
	if crash := lines["crash"]; crash.Attempts != 3 || len(crash.AttemptLog) != 3 || crash.Error == nil || crash.Error.Code != fabric.CodeHostCrashed {
		t.Fatalf("crash: %+v", crash)
	}
	if slow := lines["slow"]; slow.Error == nil || slow.Error.Code != fabric.CodeBatchItemTimeout {
		t.Fatalf("slow: %+v", slow)
	}
	if ok := lines["ok"]; ok.Result == nil {
		t.Fatalf("ok: %+v", ok)
	}
	if summary.Retries != 2 {
		t.Fatalf("retries %d", summary.Retries)
	}
}

func TestBatchDuplicateIDNamesTheLine(t *testing.T) {
	items := []any{map[string]any{"id": "a", "input": 1}, "b", map[string]any{"request_id": "a", "input": 2}}
	_, _, err := runBatch(t, items, fabric.BatchSettings{Concurrency: u32(1)})
	var config *fabric.ConfigError
	if !errors.As(err, &config) || config.Code != fabric.CodeBatchItemDuplicate || !strings.Contains(config.Message, "line 3") {
		t.Fatalf("%v", err)
	}
}
