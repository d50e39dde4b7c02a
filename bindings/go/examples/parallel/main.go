// Command parallel starts N runtimes of the scripted adapter and drives them from
// goroutines: each runtime gets -turns ordered invocations, all runtimes run at once.
//
//	cargo build --workspace
//	cd bindings/go && go run ./examples/parallel -n 8 -turns 5
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func main() {
	n := flag.Int("n", 4, "number of runtimes")
	turns := flag.Int("turns", 3, "invocations per runtime")
	descriptor := flag.String("descriptor", filepath.Join("..", "..", "adapters", "scripted", "scripted.fabric-adapter.json"),
		"scripted adapter descriptor")
	timeout := flag.Duration("timeout", 60*time.Second, "overall deadline")
	flag.Parse()

	if err := run(*n, *turns, *descriptor, *timeout); err != nil {
		var info *fabric.Info
		if errors.As(err, &info) {
			fmt.Fprintf(os.Stderr, "error: %s (stage %s, code %s)\n", info.Message, info.Stage, info.Code)
		} else {
			fmt.Fprintln(os.Stderr, "error:", err)
		}
		os.Exit(1)
	}
}

func run(n, turns int, descriptor string, timeout time.Duration) error {
	path, err := filepath.Abs(descriptor)
	if err != nil {
		return err
	}
	f, err := fabric.New()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	started := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			config := fabric.Config{
				Metadata:  fabric.Metadata{Name: fmt.Sprintf("parallel-%d", i)},
				Harness:   &fabric.Harness{AdapterID: "fabric.scripted", Settings: map[string]any{"replies": []any{"turn {turn}: {input}"}}},
				Discovery: &fabric.Discovery{LocalPaths: []string{path}},
			}
			rt, err := f.StartRuntime(ctx, config)
			if err != nil {
				errs <- err
				return
			}
			defer rt.Close()
			for turn := 1; turn <= turns; turn++ {
				result, err := rt.Invoke(ctx, fabric.RunRequest{Input: fmt.Sprintf("runtime %d", i)})
				if err != nil {
					errs <- err
					return
				}
				var out struct {
					Response string `json:"response"`
				}
				if err := result.DecodeOutput(&out); err != nil {
					errs <- err
					return
				}
				fmt.Printf("%s %s\n", rt.ID(), out.Response)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	fmt.Printf("%d runtimes x %d invocations in %v\n", n, turns, time.Since(started).Round(time.Millisecond))
	return nil
}
