package fabric_test

import (
	"context"
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
