package fabric_test

import (
	"context"
	"os"
	"testing"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// Run returns at the host's answer to stop; Settle waits for the host's own exit and the
// removal of its temporary FABRIC_HOME (what a Go program calls before exiting).
func TestSettleWaitsForTheHostRunLeftToTheBackground(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	f := newFabric(t)
	// The host answers stop, then keeps running for 0.5 s before exiting on its own.
	config := scriptedConfig(t, "go-settle", map[string]any{"replies": []string{"echo: {input}"}, "exit_delay_ms": 500})
	result, err := f.Run(context.Background(), config, fabric.RunRequest{Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	decodeOutput(t, result)
	home, _ := result.Metadata["fabric_home"].(string)
	if _, err := os.Stat(home); err != nil {
		t.Fatalf("the home %q should still be there while the host exits: %v", home, err)
	}
	began := time.Now()
	if left := fabric.Settle(5 * time.Second); left != 0 {
		t.Fatalf("%d stops still going", left)
	}
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Fatalf("Settle returned after %v, before the host's exit delay", took)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("the temporary FABRIC_HOME %q outlived Settle: %v", home, err)
	}
	if left := fabric.Settle(0); left != 0 {
		t.Fatalf("a second Settle sees %d stops", left)
	}
}
