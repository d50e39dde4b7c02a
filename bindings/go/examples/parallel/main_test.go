package main

import (
	"path/filepath"
	"testing"
	"time"
)

func TestParallelExample(t *testing.T) {
	descriptor := filepath.Join("..", "..", "..", "..", "adapters", "scripted", "scripted.fabric-adapter.json")
	if err := run(3, 2, descriptor, 60*time.Second); err != nil {
		t.Fatal(err)
	}
}
