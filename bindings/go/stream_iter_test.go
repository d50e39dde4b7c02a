//go:build go1.23

package fabric_test

import (
	"context"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func TestOpenAIStreamRangeOverAll(t *testing.T) {
	ctx := context.Background()
	rt := streamingRuntime(t, "go-iter", map[string]any{"chunk_chars": 3})
	stream, err := rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	var chunks []fabric.Chunk
	for chunk, err := range stream.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, chunk)
	}
	if got := textOf(chunks); got != streamReply {
		t.Fatalf("%q", got)
	}
	if _, err := stream.Result(ctx); err != nil {
		t.Fatal(err)
	}

	// Leaving the loop early closes the stream; the turn runs to its end.
	early, err := rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, err := range early.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		seen++
		if seen == 2 {
			break
		}
	}
	result, err := early.Result(ctx)
	if err != nil || responseOf(t, result) != streamReply {
		t.Fatalf("result after break: %v", err)
	}
	if _, err := rt.Invoke(ctx, fabric.RunRequest{Input: "after"}); err != nil {
		t.Fatal(err)
	}
}
