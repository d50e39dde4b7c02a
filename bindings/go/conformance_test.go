package fabric_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func conformanceFixture(mode string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "tests", "fixtures", "conformance", mode+".fabric-adapter.json")
}

func TestCheckAdapter(t *testing.T) {
	f, err := fabric.New()
	if err != nil {
		t.Fatal(err)
	}
	descriptor := conformanceFixture("non_json")
	report, err := f.CheckAdapter(context.Background(), fabric.ConformanceRequest{
		Descriptor: descriptor, Only: []string{"lifecycle"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, check := range report.Checks {
		if check.Status == "failed" {
			failed = append(failed, check.ID)
		}
	}
	if strings.Join(failed, ",") != "lifecycle.protocol" {
		t.Fatalf("failed checks %v, want lifecycle.protocol: %+v", failed, report)
	}
	_, err = f.CheckAdapter(context.Background(), fabric.ConformanceRequest{AdapterID: "no.such.adapter"})
	var configError *fabric.ConfigError
	if !errors.As(err, &configError) || configError.Code != "adapter_not_found" {
		t.Fatalf("want a ConfigError adapter_not_found, got %v", err)
	}
}

func TestCheckAdapterWithModelStub(t *testing.T) {
	f, err := fabric.New()
	if err != nil {
		t.Fatal(err)
	}
	// The model's base_url is unreachable: only the stub model servers answer it.
	fixtures, _ := json.Marshal(filepath.Dir(conformanceFixture("model_caller")))
	config := `{"schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "model-stub-check"},
		"harness": {"adapter_id": "test.conformance.model-caller"},
		"discovery": {"local_paths": [` + string(fixtures) + `]},
		"models": {"default": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}}}`
	deadline := 5.0
	report, err := f.CheckAdapter(context.Background(), fabric.ConformanceRequest{
		Descriptor: conformanceFixture("model_caller"), Config: []byte(config), Only: []string{"lifecycle"},
		ModelStub:           &fabric.StubModelScript{Replies: []fabric.StubModelReply{{Text: "answered by the stub"}}},
		StopDeadlineSeconds: &deadline,
	})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]fabric.ConformanceStatus{}
	for _, check := range report.Checks {
		status[check.ID] = check.Status
	}
	for _, id := range []string{"lifecycle.invoke", "lifecycle.target_failure", "lifecycle.malformed_target_output"} {
		if status[id] != "passed" {
			t.Fatalf("%s is %q, want passed: %+v", id, status[id], report)
		}
	}
	_, err = f.CheckAdapter(context.Background(), fabric.ConformanceRequest{
		Descriptor: conformanceFixture("model_caller"), Config: []byte(config),
		ModelStub: &fabric.StubModelScript{Replies: []fabric.StubModelReply{{Error: &fabric.StubModelError{Status: 200, Message: "x"}}}},
	})
	var configError *fabric.ConfigError
	if !errors.As(err, &configError) || configError.Code != "stub_model_script_invalid" {
		t.Fatalf("want a ConfigError stub_model_script_invalid, got %v", err)
	}
}
