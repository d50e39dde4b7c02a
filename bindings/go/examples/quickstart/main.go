// Command quickstart runs the scripted adapter once, then holds a runtime for a
// two-turn conversation. From bindings/go: go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func main() {
	descriptor, _ := filepath.Abs("../../adapters/scripted/scripted.fabric-adapter.json")
	config := fabric.Config{
		Metadata: fabric.Metadata{Name: "quickstart"},
		Harness: &fabric.Harness{
			AdapterID: "fabric.scripted",
			Settings:  map[string]any{"replies": []any{"you said {input}", "before that you said {previous_input}"}},
		},
		Discovery: &fabric.Discovery{LocalPaths: []string{descriptor}},
	}
	if err := run(context.Background(), config); err != nil {
		var info *fabric.Info
		if errors.As(err, &info) {
			fmt.Fprintf(os.Stderr, "%v (stage %s, code %s)\n", info.Message, info.Stage, info.Code)
		} else {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, config fabric.Config) error {
	f, err := fabric.New()
	if err != nil {
		return err
	}
	plan, err := f.Plan(ctx, config)
	if err != nil {
		return err
	}
	fmt.Println("adapter:", plan.AdapterDescriptor.Descriptor["adapter_id"])

	var out struct {
		Response string `json:"response"`
	}
	once, err := f.Run(ctx, config, fabric.RunRequest{Input: "hello"})
	if err != nil {
		return err
	}
	if err := once.DecodeOutput(&out); err != nil {
		return err
	}
	fmt.Println("run:", once.Status, out.Response)

	rt, err := f.StartRuntime(ctx, config)
	if err != nil {
		return err
	}
	defer rt.Close() // stops the adapter host and frees the handle
	for _, input := range []string{"first", "second"} {
		result, err := rt.Invoke(ctx, fabric.RunRequest{Input: input})
		if err != nil {
			return err
		}
		if err := result.DecodeOutput(&out); err != nil {
			return err
		}
		fmt.Printf("turn %s: %s\n", input, out.Response)
	}
	return nil
}
