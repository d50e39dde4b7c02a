package fabric_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// gymJoinFixture is tests/fixtures/gym-join.json: a bundle, the captured calls of its
// rollout and the joined bundle (nemo-gym's own join agrees, bindings/python/tests/test_gym_join.py).
type gymJoinFixture struct {
	Bundle fabric.AgentObservationBundle `json:"bundle"`
	Calls  []fabric.ModelCallKeys        `json:"calls"`
	Joined json.RawMessage               `json:"joined"`
}

// plainJSON decodes a document into generic values, so key order and spacing do not count.
func plainJSON(t *testing.T, text []byte) any {
	t.Helper()
	var value any
	if err := json.Unmarshal(text, &value); err != nil {
		t.Fatal(err)
	}
	return value
}

func TestJoinModelCallObservations(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "tests", "fixtures", "gym-join.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixture gymJoinFixture
	if err := json.Unmarshal(text, &fixture); err != nil {
		t.Fatal(err)
	}
	f, err := fabric.New()
	if err != nil {
		t.Fatal(err)
	}
	joined, err := f.JoinModelCallObservations(context.Background(), fixture.Bundle, fixture.Calls)
	if err != nil {
		t.Fatal(err)
	}
	var expected fabric.AgentObservationBundle
	if err := json.Unmarshal(fixture.Joined, &expected); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(joined)
	want, _ := json.Marshal(expected)
	if !reflect.DeepEqual(plainJSON(t, got), plainJSON(t, want)) {
		t.Fatalf("joined bundle differs from the fixture:\n got %s\nwant %s", got, want)
	}

	twice := json.RawMessage(`{"kind": "agent_invocation", "invocation_id": "a", "status": "completed"}`)
	_, err = f.JoinModelCallObservations(context.Background(),
		fabric.AgentObservationBundle{Source: "s", Records: []json.RawMessage{twice, twice}}, nil)
	var configErr *fabric.ConfigError
	if !errors.As(err, &configErr) || configErr.Code != "gym_invocation_id_duplicate" ||
		configErr.Metadata["path"] != "bundle.records[1].invocation_id" {
		t.Fatalf("want a gym_invocation_id_duplicate ConfigError under bundle, got %v", err)
	}
}
