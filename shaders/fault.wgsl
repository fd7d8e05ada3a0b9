{{/*
The device fault word (backend/wgpu/internal/device/fault.go), shared by
the kernels that can meet bad data. A kernel that includes this block declares

    var<storage, read_write> fault: array<atomic<u32>, 4>;

and calls report_fault with its FAULT_ code when it meets an index outside
its axis. The codes are the host's faultOps (a test there keeps the two
lists equal).
*/}}
{{- define "nn_fault"}}
const FAULT_GATHER: u32 = 1u;
const FAULT_SCATTER_ADD: u32 = 2u;

// report_fault records (code, value, size, axis) in the fault word unless a
// fault is already recorded: the first fault wins and only its claimant
// writes the detail words, so the host never reads a mix of two faults.
fn report_fault(code: u32, value: i32, size: u32, axis: u32) {
    // A weak exchange may fail spuriously while the word is still 0; retry
    // a few times then, and give up at once when another fault won.
    for (var t = 0u; t < 8u; t++) {
        let r = atomicCompareExchangeWeak(&fault[0], 0u, code);
        if (r.exchanged) {
            atomicStore(&fault[1], bitcast<u32>(value));
            atomicStore(&fault[2], size);
            atomicStore(&fault[3], axis);
            return;
        }
        if (r.old_value != 0u) {
            return;
        }
    }
}
{{- end}}
