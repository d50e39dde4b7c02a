package fabric

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// ModelCallRecords reads the invocation's captured model calls (a run started with
// capture_model_calls) from ModelCalls.Path, one ModelCallRecord per line of
// model-calls.jsonl; nil when none was recorded or capture was off.
func (r *RunResult) ModelCallRecords() ([]ModelCallRecord, error) {
	if r.ModelCalls == nil || r.ModelCalls.Path == "" {
		return nil, nil
	}
	text, err := os.ReadFile(r.ModelCalls.Path)
	if err != nil {
		return nil, err
	}
	var records []ModelCallRecord
	lines := bufio.NewScanner(bytes.NewReader(text))
	lines.Buffer(nil, len(text)+1)
	for number := 1; lines.Scan(); number++ {
		line := bytes.TrimSpace(lines.Bytes())
		if len(line) == 0 {
			continue
		}
		var record ModelCallRecord
		if err := json.Unmarshal(line, &record); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", r.ModelCalls.Path, number, err)
		}
		records = append(records, record)
	}
	return records, lines.Err()
}
