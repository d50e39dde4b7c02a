package fabric_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

const streamReply = "The quick brown fox jumps over the lazy dog."

func streamingRuntime(t *testing.T, name string, stream map[string]any) *fabric.Runtime {
	t.Helper()
	config := scriptedConfig(t, name, map[string]any{"replies": []any{streamReply}, "stream": stream})
	rt, err := newFabric(t).StartRuntime(context.Background(), config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

func textOf(chunks []fabric.Chunk) string {
	var b strings.Builder
	for _, chunk := range chunks {
		if len(chunk.Choices) > 0 {
			b.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	return b.String()
}

func responseOf(t *testing.T, result *fabric.RunResult) string {
	t.Helper()
	return decodeOutput(t, result).Response
}

func TestOpenAIStreamChunksThenResult(t *testing.T) {
	ctx := context.Background()
	rt := streamingRuntime(t, "go-stream", map[string]any{"chunk_chars": 5})
	if !rt.SupportsOpenAIStreaming() {
		t.Fatal("the scripted adapter claims streaming")
	}
	stream, err := rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if stream.Info.Kind != fabric.StreamKindOpenaiChatCompletionsChunkV1 {
		t.Fatalf("kind %q", stream.Info.Kind)
	}
	var chunks []fabric.Chunk
	for {
		chunk, err := stream.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if chunk.Object != "chat.completion.chunk" {
			t.Fatalf("object %q", chunk.Object)
		}
		chunks = append(chunks, chunk)
	}
	if got := textOf(chunks); got != streamReply || len(chunks) != (len(streamReply)+4)/5 {
		t.Fatalf("%d chunks %q", len(chunks), got)
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Fatalf("first delta %+v", chunks[0].Choices[0].Delta)
	}
	if _, err := stream.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after the end: %v", err)
	}
	result, err := stream.Result(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if result.InvocationID != stream.Info.InvocationID || responseOf(t, result) != streamReply {
		t.Fatalf("result %+v", result)
	}
	again, err := stream.Result(ctx)
	if err != nil || again != result {
		t.Fatalf("Result is not cached: %v", err)
	}
	next, err := rt.Invoke(ctx, fabric.RunRequest{Input: "next"})
	if err != nil || next.Status != fabric.StatusSucceeded {
		t.Fatalf("next turn: %v", err)
	}
}

func TestOpenAIStreamEarlyCloseDoesNotCancelTheTurn(t *testing.T) {
	ctx := context.Background()
	rt := streamingRuntime(t, "go-close", map[string]any{"chunk_chars": 1, "delay_ms": 5})
	stream, err := rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if err := stream.Close(); err != nil {
		t.Fatal(err)
	}
	if err := stream.Close(); err != nil {
		t.Fatal("Close is idempotent:", err)
	}
	if _, err := stream.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after Close: %v", err)
	}
	status, err := rt.Status(ctx)
	if err != nil || status.State != fabric.RuntimeStateIdle {
		t.Fatalf("runtime after Close: %+v %v", status, err)
	}
	result, err := stream.Result(ctx)
	if err != nil || responseOf(t, result) != streamReply {
		t.Fatalf("result after Close: %v", err)
	}
	if _, err := rt.Invoke(ctx, fabric.RunRequest{Input: "again"}); err != nil {
		t.Fatal(err)
	}
}

func TestOpenAIStreamContextCancellationClosesWithoutCancelling(t *testing.T) {
	rt := streamingRuntime(t, "go-cancel", map[string]any{"chunk_chars": 1, "delay_ms": 10})
	stream, err := rt.InvokeOpenAIStream(context.Background(), fabric.RunRequest{
		Input:   "hi",
		Context: map[string]any{"scripted": map[string]any{"sleep_ms": 2000}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := stream.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with a cancelled ctx: %v", err)
	}
	// Woken by ctx, not by the adapter: the turn still runs (it was not cancelled).
	status, err := rt.Status(context.Background())
	if err != nil || status.State != fabric.RuntimeStateBusy {
		t.Fatalf("runtime while the closed stream's turn runs: %+v %v", status, err)
	}
	if _, err := stream.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after cancellation: %v", err)
	}
	// The next turn waits for the closed stream's turn; its result is intact.
	next, err := rt.Invoke(context.Background(), fabric.RunRequest{Input: "after"})
	if err != nil || next.Status != fabric.StatusSucceeded {
		t.Fatalf("turn after cancellation: %v", err)
	}
	result, err := stream.Result(context.Background())
	if err != nil || responseOf(t, result) != streamReply {
		t.Fatalf("result after cancellation: %v", err)
	}
}

func TestOpenAIStreamOneActiveTurn(t *testing.T) {
	ctx := context.Background()
	rt := streamingRuntime(t, "go-busy", map[string]any{"delay_ms": 10})
	stream, err := rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	// Two concurrent attempts: both are state errors while the stream is open.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i == 0 {
				_, errs[i] = rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "again"})
			} else {
				_, errs[i] = rt.Invoke(ctx, fabric.RunRequest{Input: "again"})
			}
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		var state *fabric.StateError
		if !errors.As(err, &state) || state.Code != "runtime_busy" {
			t.Fatalf("want a runtime_busy *StateError, got %v", err)
		}
	}
	if rt.Failed() {
		t.Fatal("a state error does not fail the runtime")
	}
	if err := stream.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if result, err := second.Result(ctx); err != nil || result.Status != fabric.StatusSucceeded {
		t.Fatalf("second stream: %v", err)
	}
}

func TestOpenAIStreamProtocolErrorFailsTheRuntime(t *testing.T) {
	ctx := context.Background()
	rt := streamingRuntime(t, "go-gap", map[string]any{"fault": "gap", "chunk_chars": 4})
	stream, err := rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err = stream.Next(ctx)
		if err != nil {
			break
		}
	}
	var runtimeErr *fabric.RuntimeError
	if !errors.As(err, &runtimeErr) || runtimeErr.Code != "openai_stream_protocol_error" || runtimeErr.Stage != fabric.StageInvoke {
		t.Fatalf("want openai_stream_protocol_error, got %v", err)
	}
	if status, _ := runtimeErr.Metadata["http_status"].(float64); status != 400 {
		t.Fatalf("http_status %v", runtimeErr.Metadata["http_status"])
	}
	if !rt.Failed() {
		t.Fatal("a protocol error fails the runtime")
	}
}

func TestOpenAIStreamWithoutTheClaimIsACapabilityError(t *testing.T) {
	// The scripted descriptor without its streaming claim (same launcher).
	path := scriptedDescriptor(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var descriptor map[string]any
	if err := json.Unmarshal(data, &descriptor); err != nil {
		t.Fatal(err)
	}
	descriptor["capabilities"].(map[string]any)["streaming"] = false
	runner := descriptor["runner"].(map[string]any)
	runner["script"] = filepath.Join(filepath.Dir(path), runner["script"].(string))
	file := filepath.Join(t.TempDir(), "scripted.fabric-adapter.json")
	data, _ = json.Marshal(descriptor)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	config := scriptedConfig(t, "go-no-claim", map[string]any{"replies": []any{streamReply}})
	config.Discovery = &fabric.Discovery{LocalPaths: []string{file}}
	ctx := context.Background()
	rt, err := newFabric(t).StartRuntime(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.SupportsOpenAIStreaming() {
		t.Fatal("no claim, no streaming")
	}
	_, err = rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "hi"})
	var capability *fabric.CapabilityError
	if !errors.As(err, &capability) || capability.Code != "openai_streaming_unavailable" {
		t.Fatalf("want openai_streaming_unavailable, got %v", err)
	}
	if _, err := rt.Invoke(ctx, fabric.RunRequest{Input: "plain"}); err != nil || rt.Failed() {
		t.Fatalf("the runtime stays usable: %v", err)
	}
}
