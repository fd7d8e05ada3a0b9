//go:build cgo

package wgpu

import "testing"

func TestReadLanes(t *testing.T) {
	all := [4]bool{true, true, true, true}
	for _, c := range []struct {
		expr string
		want [4]bool
	}{
		{"a / cf.x", [4]bool{true}},
		{"clamp(a, cf.x, cf.y)", [4]bool{true, true}},
		{"select(a, cf.zw, cu.x == 1u)", [4]bool{false, false, true, true}},
		{"f(cf)", all},
		{"cf[1] * a", all},
		{"cfa.x + a", [4]bool{}},
		{"my_cf.y + a", [4]bool{}},
		{"a.x + b", [4]bool{}},
		{"cf.r + cf.a", [4]bool{true, false, false, true}},
	} {
		if got := readLanes(c.expr, "cf"); got != c.want {
			t.Errorf("readLanes(%q, cf) = %v, want %v", c.expr, got, c.want)
		}
	}
}
