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

// gymAssistantFixture is tests/fixtures/gym-join-assistant.json: a bundle, a trajectory
// whose turns declare their messages, the captured calls and the joined documents (one
// rule of docs/gym.md per turn or call).
type gymAssistantFixture struct {
	Bundle     fabric.AgentObservationBundle     `json:"bundle"`
	Trajectory fabric.TrajectoryRecord           `json:"trajectory"`
	Calls      []fabric.ModelCallKeys            `json:"calls"`
	Joined     fabric.GymJoinedAssistantMessages `json:"joined"`
}

func loadGymAssistantFixture(t *testing.T) gymAssistantFixture {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "tests", "fixtures", "gym-join-assistant.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixture gymAssistantFixture
	if err := json.Unmarshal(text, &fixture); err != nil {
		t.Fatal(err)
	}
	return fixture
}

func turnCallIDs(t *testing.T, record *fabric.TrajectoryRecord, invocation string, turnNo int64) []string {
	t.Helper()
	for _, turn := range record.Turns {
		if turn.InvocationID == invocation && int64(turn.TurnNo) == turnNo {
			ids := []string{}
			for _, reference := range turn.ModelCalls {
				ids = append(ids, reference.ModelCallID)
			}
			return ids
		}
	}
	t.Fatalf("no turn %s/%d", invocation, turnNo)
	return nil
}

func TestJoinAssistantMessageCalls(t *testing.T) {
	fixture := loadGymAssistantFixture(t)
	f, err := fabric.New()
	if err != nil {
		t.Fatal(err)
	}
	joined, err := f.JoinAssistantMessageCalls(context.Background(), fixture.Bundle, &fixture.Trajectory, fixture.Calls)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(joined)
	want, _ := json.Marshal(fixture.Joined)
	if !reflect.DeepEqual(plainJSON(t, got), plainJSON(t, want)) {
		t.Fatalf("joined documents differ from the fixture:\n got %s\nwant %s", got, want)
	}
	if ids := turnCallIDs(t, joined.Trajectory, "root", 1); !reflect.DeepEqual(ids, []string{"mc-retry-1", "mc-retry-2"}) {
		t.Fatalf("a message's attempts: %v", ids)
	}
	if ids := turnCallIDs(t, joined.Trajectory, "root", 5); len(ids) != 0 {
		t.Fatalf("a model-server mismatch joined %v", ids)
	}

	withoutTrajectory, err := f.JoinAssistantMessageCalls(context.Background(), fixture.Bundle, nil, fixture.Calls)
	if err != nil {
		t.Fatal(err)
	}
	if withoutTrajectory.Trajectory != nil {
		t.Fatalf("a trajectory came back without one given")
	}

	broken := fixture.Trajectory
	broken.Turns = append([]fabric.TrajectoryTurn(nil), fixture.Trajectory.Turns...)
	broken.Turns[1].TurnNo = 1
	_, err = f.JoinAssistantMessageCalls(context.Background(), fixture.Bundle, &broken, fixture.Calls)
	var configErr *fabric.ConfigError
	if !errors.As(err, &configErr) || configErr.Code != "gym_turn_invalid" {
		t.Fatalf("want a gym_turn_invalid ConfigError, got %v", err)
	}
}
