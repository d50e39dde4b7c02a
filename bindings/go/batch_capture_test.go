package fabric_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// chatStub is an OpenAI-compatible Chat Completions endpoint on loopback that keeps every
// request body it answered.
type chatStub struct {
	mu       sync.Mutex
	requests []map[string]any
}

func (s *chatStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var request map[string]any
	_ = json.Unmarshal(body, &request)
	s.mu.Lock()
	s.requests = append(s.requests, request)
	n := len(s.requests)
	s.mu.Unlock()
	w.Header().Set("content-type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-%d","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"go answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`, n)
}

// A batch with Call.CaptureModelCalls: each item's RunResult carries its model_calls, whose
// records are the calls the stub answered, and the summary totals them.
func TestBatchCapturesEachItemsModelCalls(t *testing.T) {
	stub := &chatStub{}
	server := httptest.NewServer(stub)
	defer server.Close()
	fixtures, err := filepath.Abs(filepath.Join("..", "..", "tests", "fixtures", "capture"))
	if err != nil {
		t.Fatal(err)
	}
	config := map[string]any{
		"schema_version": "fabric.agent/v1alpha1",
		"metadata":       map[string]any{"name": "go-batch-capture"},
		"harness":        map[string]any{"adapter_id": "test.capture.model-caller", "settings": map[string]any{"calls": 2}},
		"discovery":      map[string]any{"local_paths": []string{fixtures}},
		"models":         map[string]any{"default": map[string]any{"provider": "openai", "model": "m", "base_url": server.URL + "/v1"}},
	}
	items := []any{
		map[string]any{"id": "a", "input": "task a"},
		map[string]any{"id": "b", "input": "task b"},
	}
	capture := true
	lines, summary, err := batchWith(t, config, items, fabric.BatchSettings{
		Concurrency: u32(2),
		Call:        &fabric.CallOptions{CaptureModelCalls: &capture},
	})
	if err != nil {
		t.Fatal(err)
	}
	if summary.Succeeded != 2 || summary.ModelCalls == nil || summary.ModelCalls.Invocations != 2 || summary.ModelCalls.Calls != 4 {
		t.Fatalf("summary %+v (model calls %+v)", summary, summary.ModelCalls)
	}
	for id, line := range lines {
		if line.Result == nil || line.Result.ModelCalls == nil || line.Result.ModelCalls.Count != 2 {
			t.Fatalf("%s: %+v", id, line)
		}
		records, err := line.Result.ModelCallRecords()
		if err != nil || len(records) != 2 {
			t.Fatalf("%s: %d records, %v", id, len(records), err)
		}
		for index, record := range records {
			var request struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(record.Request, &request); err != nil || len(request.Messages) == 0 {
				t.Fatalf("%s record %d: request %s (%v)", id, index, record.Request, err)
			}
			if record.CallIndex != uint64(index) || record.InvocationID != line.Result.InvocationID || request.Messages[0].Content != "task "+id {
				t.Fatalf("%s record %d: %+v", id, index, record)
			}
		}
	}
	if len(stub.requests) != 4 {
		t.Fatalf("the stub answered %d calls", len(stub.requests))
	}
}
