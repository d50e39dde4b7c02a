// Command stream streams a reply as native OpenAI chunks, takes the separate result, then
// leaves a second stream early (the turn still runs to its end).
// From bindings/go: go run ./examples/stream
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func main() {
	descriptor, _ := filepath.Abs("../../adapters/scripted/scripted.fabric-adapter.json")
	config := fabric.Config{
		Metadata: fabric.Metadata{Name: "stream"},
		Harness: &fabric.Harness{
			AdapterID: "fabric.scripted",
			Settings: map[string]any{
				"replies": []any{"Streaming, one small piece at a time."},
				"stream":  map[string]any{"chunk_chars": 6},
			},
		},
		Discovery: &fabric.Discovery{LocalPaths: []string{descriptor}},
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
	fmt.Println("streaming:", rt.SupportsOpenAIStreaming())

	stream, err := rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "hi"})
	if err != nil {
		return err
	}
	pieces := 0
	for {
		chunk, err := stream.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		fmt.Print(chunk.Choices[0].Delta.Content)
		pieces++
	}
	result, err := stream.Result(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("\n%d chunks, %s\n", pieces, result.Status)

	// Close drops the unread chunks and waits for the turn; it never cancels it.
	early, err := rt.InvokeOpenAIStream(ctx, fabric.RunRequest{Input: "again"})
	if err != nil {
		return err
	}
	first, err := early.Next(ctx)
	if err != nil {
		return err
	}
	fmt.Println("first:", first.Choices[0].Delta.Content)
	early.Close()
	whole, err := early.Result(ctx)
	if err != nil {
		return err
	}
	var output struct{ Response string }
	if err := whole.DecodeOutput(&output); err != nil {
		return err
	}
	fmt.Println("whole:", output.Response)
	return nil
}
