package fabric_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func kv(t *testing.T, r *fabric.Runtime, op map[string]any) any {
	t.Helper()
	result, err := r.Invoke(context.Background(), fabric.RunRequest{Input: "kv", Context: map[string]any{"scripted_kv": op}})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Response any `json:"response"`
	}
	if err := result.DecodeOutput(&out); err != nil {
		t.Fatal(err)
	}
	return out.Response
}

func TestTwoRuntimesShareOneService(t *testing.T) {
	ctx := context.Background()
	f := newFabric(t)
	config := scriptedConfig(t, "kv", nil)
	dir := t.TempDir()
	service, err := f.PrepareService(ctx, config, fabric.WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer service.Close()
	if service.Status() != fabric.ServiceStatusActive || service.Handle().Ownership != "fabric_owned" {
		t.Fatalf("service %+v", service.Info)
	}
	first, err := service.StartRuntime(ctx, config, fabric.WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	second, err := service.StartRuntime(ctx, config, fabric.WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if first.Info.ServiceID != service.ID() {
		t.Fatalf("runtime service id %q, want %q", first.Info.ServiceID, service.ID())
	}
	if got := kv(t, first, map[string]any{"op": "incr", "key": "n"}); got != float64(1) {
		t.Fatalf("first incr = %v", got)
	}
	if got := kv(t, second, map[string]any{"op": "incr", "key": "n"}); got != float64(2) {
		t.Fatalf("second incr = %v", got)
	}
	if _, err := second.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := kv(t, first, map[string]any{"op": "get", "key": "n"}); got != float64(2) {
		t.Fatalf("after stop = %v", got)
	}
	_, err = service.Release(ctx)
	var runtimeErr *fabric.RuntimeError
	if !errors.As(err, &runtimeErr) || runtimeErr.Code != fabric.CodeServiceInUse || runtimeErr.Stage != "stop" {
		t.Fatalf("release in use: %v", err)
	}
	if service.Status() != fabric.ServiceStatusActive {
		t.Fatalf("status after refusal %s", service.Status())
	}
	_, err = service.StartRuntime(ctx, scriptedConfig(t, "other", nil), fabric.WithBaseDir(dir))
	var configErr *fabric.ConfigError
	if !errors.As(err, &configErr) || configErr.Code != "service_binding_mismatch" {
		t.Fatalf("mismatch: %v", err)
	}
	if _, err := first.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := service.Release(ctx)
	if err != nil || info.Status != fabric.ServiceStatusReleased {
		t.Fatalf("release: %v %+v", err, info)
	}
	report, err := f.Check(ctx, nil, fabric.CheckRequest{Scope: "service", ServiceID: service.ID()})
	if err != nil || report.Outcome != "unknown" || report.Reason != "service_unavailable" {
		t.Fatalf("check after release: %v %+v", err, report)
	}
	_, err = service.StartRuntime(ctx, config, fabric.WithBaseDir(dir))
	if !errors.As(err, &configErr) || configErr.Code != "service_not_active" {
		t.Fatalf("start on released: %v", err)
	}
}

func TestAttachDetachesAndNeedsTheCapability(t *testing.T) {
	ctx := context.Background()
	f := newFabric(t)
	config := scriptedConfig(t, "kv", nil)
	dir := t.TempDir()
	owner, err := f.PrepareService(ctx, config, fabric.WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	attached, err := f.AttachService(ctx, config, fabric.ServiceReference{
		AdapterID: "fabric.scripted", ServiceType: "scripted_kv", Connection: owner.Handle().Connection,
	}, fabric.WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	writer, err := attached.StartRuntime(ctx, config, fabric.WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	kv(t, writer, map[string]any{"op": "set", "key": "k", "value": "v"})
	writer.Close()
	if err := attached.Close(); err != nil {
		t.Fatal(err)
	}
	reader, err := owner.StartRuntime(ctx, config, fabric.WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if got := kv(t, reader, map[string]any{"op": "get", "key": "k"}); got != "v" {
		t.Fatalf("get = %v", got)
	}
	atof, _ := filepath.Abs(filepath.Join("..", "..", "tests", "fixtures", "atof-adapter"))
	_, err = f.PrepareService(ctx, fabric.Config{
		Metadata:  fabric.Metadata{Name: "plain"},
		Harness:   &fabric.Harness{AdapterID: "test.fabric.atof"},
		Discovery: &fabric.Discovery{LocalPaths: []string{atof}},
	}, fabric.WithBaseDir(dir))
	var capability *fabric.CapabilityError
	if !errors.As(err, &capability) || capability.Code != "service_unsupported" {
		t.Fatalf("unsupported: %v", err)
	}
}
