package fabric_test

import (
	"context"
	"errors"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// The capture options reach the core: a budget without WithModelCallCapture is the core's
// invalid_value at options.max_model_calls, and with it the run starts (the scripted
// adapter's config has no model base_url, so nothing is recorded).
func TestModelCallCaptureOptionsReachTheCore(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	config := scriptedConfig(t, "capture", nil)
	_, err := f.Run(ctx, config, fabric.RunRequest{Input: "x"}, fabric.WithMaxModelCalls(1))
	var configErr *fabric.ConfigError
	if !errors.As(err, &configErr) || configErr.Code != "invalid_value" || configErr.Metadata["path"] != "options.max_model_calls" {
		t.Fatalf("want invalid_value at options.max_model_calls, got %v", err)
	}
	result, err := f.Run(ctx, config, fabric.RunRequest{Input: "x"},
		fabric.WithModelCallCapture(), fabric.WithMaxModelCalls(1), fabric.WithMaxTotalTokens(10))
	if err != nil {
		t.Fatal(err)
	}
	if result.Status != "succeeded" || result.ModelCalls != nil {
		t.Fatalf("status %q, model calls %v", result.Status, result.ModelCalls)
	}
}
