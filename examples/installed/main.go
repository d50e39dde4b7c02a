// Command hello runs the scripted adapter shipped with the C SDK once.
// PKG_CONFIG_PATH=<prefix>/lib/pkgconfig go run .
package main

import (
	"context"
	"fmt"
	"os"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func main() {
	config := fabric.Config{
		Metadata: fabric.Metadata{Name: "hello"},
		Harness: &fabric.Harness{
			AdapterID: "fabric.scripted",
			Settings:  map[string]any{"replies": []any{"Hello! You said: {input}"}},
		},
	}
	f, err := fabric.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	result, err := f.Run(context.Background(), config, fabric.RunRequest{Input: "Hello, Fabric"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var out struct {
		Response string `json:"response"`
	}
	if err := result.DecodeOutput(&out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(result.Status, out.Response)
}
