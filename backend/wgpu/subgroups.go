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
func (d *Device) subgroupsLaidOutInRuns() bool {
	wg := d.workgroupSize()
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
