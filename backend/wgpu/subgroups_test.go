//go:build cgo

package wgpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSubgroupProbe: where the device has subgroups (lavapipe), the probe
// runs and finds Mesa's layout, aligned runs of local_invocation_index, so
// the reductions take their subgroup path; without subgroups (llvmpipe)
// they keep the tree, and the probe is not run.
func TestSubgroupProbe(t *testing.T) { forEachTestDevice(t, testSubgroupProbe) }

func testSubgroupProbe(t *testing.T, d *Device) {
	if !d.rt.HasSubgroups() {
		assert.False(t, d.reduce.subgroups, "reductions use subgroups the device lacks")
		return
	}
	assert.True(t, d.subgroupsLaidOutInRuns(), "probe on %s", d.info.Name)
	assert.True(t, d.reduce.subgroups, "reductions skip subgroups the probe allowed")
}
