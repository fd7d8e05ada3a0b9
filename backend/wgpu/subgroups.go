//go:build cgo || (js && wasm)

package wgpu

import (
	"encoding/binary"
	"fmt"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
)

// subgroupsLaidOutInRuns runs shaders/subgroup_probe.wgsl once on a device
// with subgroups and reports whether its subgroups are the aligned,
// consecutive runs of local_invocation_index that reduce.wgsl's subgroup
// path needs (at the reductions' workgroup size). WGSL does not promise
// that layout; a device that breaks it, or where the probe cannot run,
// keeps the workgroup tree, which is right under any layout.
func (d *Device) subgroupsLaidOutInRuns() bool { return d.subgroupsLaidOutInRunsAt(d.workgroupSize()) }

// subgroupsInRunsAt is subgroupsLaidOutInRuns at workgroup size wg, probed
// once per device and size (a kernel sized by a knob asks for another
// size than the reductions'); false without subgroups.
func (d *Device) subgroupsInRunsAt(wg int) bool {
	if !d.rt.HasSubgroups() {
		return false
	}
	if wg == d.workgroupSize() {
		return d.reduce.subgroups
	}
	if v, ok := d.subgroupRuns.Load(wg); ok {
		return v.(bool)
	}
	v, _ := d.subgroupRuns.LoadOrStore(wg, d.subgroupsLaidOutInRunsAt(wg))
	return v.(bool)
}

// subgroupsLaidOutInRunsAt runs the probe at workgroup size wg.
func (d *Device) subgroupsLaidOutInRunsAt(wg int) bool {
	k, err := d.rt.Kernel(fmt.Sprintf("subgroup_probe wg%d", wg), 1, 1, func() (string, error) {
		return render("subgroup_probe.wgsl", struct{ WorkgroupSize int }{wg})
	})
	if err != nil {
		return false
	}
	// Outside the pool: a fresh device's memory is as its user predicts.
	buf, err := d.rt.Unpooled(int64(4 * wg))
	if err != nil {
		return false
	}
	defer d.rt.Discard(buf)
	var p params
	d.post(dispatch{k: k, buffers: []*device.Allocation{buf.Allocation()}, params: p, x: 1, y: 1, z: 1})
	verdict := make([]byte, 4*wg)
	if err := d.rt.Read(buf, verdict); err != nil {
		return false
	}
	for i := range wg {
		if binary.LittleEndian.Uint32(verdict[4*i:]) != 1 {
			return false
		}
	}
	return true
}
