package onnxpb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedIsCurrent regenerates onnx.pb.go from onnx.proto with the
// pinned protoc-gen-go and fails when the committed file differs. It
// needs protoc (Debian's protobuf-compiler) and skips without it.
func TestGeneratedIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating takes a while")
	}
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Skip("protoc not installed")
	}
	out := t.TempDir()
	plugin, _ := filepath.Abs("protoc-gen-go.sh")
	cmd := exec.Command("protoc", "--plugin=protoc-gen-go="+plugin, "--go_out="+out, "--go_opt=paths=source_relative",
		"--go_opt=Monnx.proto=github.com/webtensor/webtensor/onnx/internal/onnxpb", "onnx.proto")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, b)
	}
	fresh, err := os.ReadFile(filepath.Join(out, "onnx.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("onnx.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatal("onnx.pb.go is stale: run go generate ./onnx/internal/onnxpb")
	}
}
