//go:build cgo

package wgpu

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validateWithTint checks every WGSL source of sources (name → source)
// with Tint, the WGSL compiler Dawn embeds, when it is installed as the
// `tint` command, and reports whether it was. It lets the render tests
// validate kernels that no test device compiles (f16 on a device without
// shader-f16).
//
// Each check is a process of its own, tens of milliseconds even for a
// small kernel, so identical sources are checked once and the processes
// run GOMAXPROCS at a time.
func validateWithTint(t *testing.T, sources map[string]string) bool {
	t.Helper()
	tint, err := exec.LookPath("tint")
	if err != nil {
		return false
	}
	dir := t.TempDir()
	var names []string // the first name of each distinct source
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(sources)) {
		if !seen[sources[name]] {
			seen[sources[name]] = true
			names = append(names, name)
		}
	}
	failures := make([]string, len(names))
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, name := range names {
		path := filepath.Join(dir, fmt.Sprintf("kernel%d.wgsl", i))
		require.NoError(t, os.WriteFile(path, []byte(sources[name]), 0o644))
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			out, err := exec.Command(tint, "--format", "wgsl", "-o", os.DevNull, path).CombinedOutput()
			if err != nil {
				failures[i] = fmt.Sprintf("%v: %s", err, out)
			}
		})
	}
	wg.Wait()
	for i, name := range names {
		assert.Empty(t, failures[i], "tint rejects %s:\n%s", name, sources[name])
	}
	return true
}
