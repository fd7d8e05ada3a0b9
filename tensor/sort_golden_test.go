package tensor

// The Go calls of testdata/golden/sort.json (written by
// testdata/golden/gen_sort.py), which TestGolden runs with the other
// golden files: sorts and selections are exact (values and Int32
// indices), the scans accumulate (a bound scaled by the inputs'
// sensitivity, as the reductions).
func init() {
	both := func(v, i *Tensor) []*Tensor { return []*Tensor{v, i} }
	goldenOps["sort"] = goldenOp{"Sort", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return both(in[0].Sort(a.int("dim"), a.bool("descending"), a.bool("stable")))
	}}
	goldenOps["argsort"] = goldenOp{"Argsort", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(in[0].Argsort(a.int("dim"), a.bool("descending"), a.bool("stable")))
	}}
	goldenOps["topk"] = goldenOp{"TopK", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return both(in[0].TopK(a.int("k"), a.int("dim"), a.bool("largest"), a.bool("sorted")))
	}}
	goldenOps["kthvalue"] = goldenOp{"KthValue", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return both(in[0].KthValue(a.int("k"), a.int("dim"), a.bool("keepdim")))
	}}
	goldenOps["cumsum"] = goldenOp{"Cumsum", "accumulate", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(in[0].Cumsum(a.int("dim")))
	}}
	goldenOps["cumprod"] = goldenOp{"Cumprod", "accumulate", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(in[0].Cumprod(a.int("dim")))
	}}
	goldenOps["logcumsumexp"] = goldenOp{"LogCumSumExp", "composite", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(in[0].LogCumSumExp(a.int("dim")))
	}}
}
