package tensor

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The runtime policy lives in internal/placement and internal/recovery;
// of this package only placement.go (the placement API and the routing
// hook) and lost.go (the device-loss API and recovery's wrapping) may
// import them. Every other file reaches them through routed and its
// siblings, or through the backend interface of device.go.
func TestPolicyReachedOnlyThroughItsHooks(t *testing.T) {
	allowed := map[string][]string{
		"github.com/webtensor/webtensor/internal/placement": {"placement.go"},
		"github.com/webtensor/webtensor/internal/recovery":  {"lost.go"},
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string][]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if files, policy := allowed[path]; policy {
				seen[path] = append(seen[path], name)
				if !slices.Contains(files, name) {
					t.Errorf("%s imports %s: only %v may", name, path, files)
				}
			}
		}
	}
	for path, files := range allowed {
		if !slices.Equal(seen[path], files) {
			t.Errorf("%s is imported by %v, want %v (the hook moved: update this test and the package docs)", path, seen[path], files)
		}
	}
}
