//go:build cgo

package device

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/shaders"
)

// TestFaultCodesMatchTheShaders: the FAULT_ constants that the kernels
// report with (shaders/fault.wgsl) are faultOps, code for code, so that a
// fault is named after the op that raised it.
func TestFaultCodesMatchTheShaders(t *testing.T) {
	src, err := shaders.FS.ReadFile("fault.wgsl")
	if err != nil {
		t.Fatal(err)
	}
	consts := regexp.MustCompile(`const FAULT_(\w+): u32 = (\d+)u;`).FindAllStringSubmatch(string(src), -1)
	if len(consts) == 0 {
		t.Fatal("fault.wgsl declares no FAULT_ constant")
	}
	seen := map[uint32]bool{}
	for _, c := range consts {
		code, err := strconv.ParseUint(c[2], 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		op, ok := faultOps[uint32(code)]
		if !ok {
			t.Errorf("fault.wgsl: FAULT_%s = %d, which faultOps does not name", c[1], code)
			continue
		}
		if want := strings.ToUpper(op); c[1] != want {
			t.Errorf("fault.wgsl: code %d is FAULT_%s, faultOps names it %q (FAULT_%s)", code, c[1], op, want)
		}
		seen[uint32(code)] = true
	}
	for code, op := range faultOps {
		if !seen[code] {
			t.Errorf("faultOps names code %d (%s), which fault.wgsl does not declare", code, op)
		}
	}
}
