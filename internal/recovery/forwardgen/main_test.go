package main

import (
	"os"
	"path/filepath"
	"testing"
)

// forward.go must be what forwardgen writes from today's hal.Device: a
// method added to hal.Device without go generate fails here (and the
// build, since recovery.Device must implement hal.Device).
func TestForwardersUpToDate(t *testing.T) {
	want, err := generate(filepath.Join("..", "..", "..", "hal"), "..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", generatedFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s is stale: run go generate ./internal/recovery", generatedFile)
	}
}
