{{/*
The subgroup layout probe (backend/wgpu/subgroups.go): one workgroup of
.WorkgroupSize invocations writes, for each invocation, 1 where its subgroup
is where reduce.wgsl's subgroup path takes it to be, else 0. That path folds
a task's lanes with subgroup operations and continues the tree in
workgroup memory at a stride of the subgroup size, so it needs subgroups
that are aligned, consecutive runs of local_invocation_index, of a power
of two size that divides the workgroup. Vulkan guarantees that only with
full subgroups requested; GPUs lay 1-D workgroups out that way in practice,
and the probe checks the device at hand before the path is used.
*/}}
enable subgroups;

@group(0) @binding(0) var<storage, read_write> verdict: array<u32>;

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sid: u32,
        @builtin(subgroup_size) size: u32) {
    let power_of_two = size != 0u && (size & (size - 1u)) == 0u;
    let divides = power_of_two && {{.WorkgroupSize}}u % size == 0u;
    // The first invocation of the subgroup holds the run's first index.
    let first = subgroupBroadcastFirst(lid);
    let aligned = divides && sid == lid % size && first == lid - lid % size;
    verdict[lid] = select(0u, 1u, aligned);
}
