package main

import (
	"cmp"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/bench/schema"
)

// key identifies one measurement: a later file's result for the same key
// replaces an earlier one, so re-running one case and passing its file
// last updates the report.
type key struct {
	impl, device, caseName string
	threads                int
}

// merged is every result of the files given, indexed, with the cases in
// suite order.
type merged struct {
	files   []*schema.File
	results map[key]schema.Result
	cases   []string          // in suite order, peer-only cases next to their neighbours
	info    map[string]string // case → unit
	groups  map[string]string // case → group
	sizes   map[string]float64
}

// merge indexes files; the webtensor runs go first, so that their case
// order is the table's.
func merge(files []*schema.File) *merged {
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b *schema.File) int {
		return cmp.Compare(rank(a.Tool), rank(b.Tool))
	})
	m := &merged{files: files, results: map[key]schema.Result{}, info: map[string]string{},
		groups: map[string]string{}, sizes: map[string]float64{}}
	for _, f := range files {
		prev := -1
		for _, r := range f.Results {
			m.results[key{r.Impl, r.Device, r.Case, r.Threads}] = r
			i := slices.Index(m.cases, r.Case)
			if i < 0 {
				i = prev + 1
				m.cases = slices.Insert(m.cases, i, r.Case)
				m.info[r.Case], m.groups[r.Case], m.sizes[r.Case] = r.Unit, r.Group, r.Size
			}
			prev = i
		}
	}
	return m
}

func rank(tool string) int {
	if tool == "webtensor" {
		return 0
	}
	return 1
}

// column is one implementation on one kind of device: a table column or
// a chart series family.
type column struct {
	label string
	match func(r schema.Result) bool
}

// software reports whether r ran on a GPU API emulated on the CPU.
func software(r schema.Result) bool {
	return r.Backend != "cpu" && r.Backend != "cuda" && r.Type == "cpu"
}

func onCPU(impl string) column {
	return column{impl, func(r schema.Result) bool { return r.Impl == impl && r.Backend == "cpu" }}
}

// tfjsImpl is TensorFlow.js's WebGPU backend (bench/peers/tfjs), set
// beside webtensor's WebGPU rows on the same adapter (tfjsTables).
const tfjsImpl = "tfjs-webgpu"

var (
	oursCPU   = onCPU("webtensor")
	torchCPU  = onCPU("torch")
	numpyCPU  = onCPU("numpy")
	ortCPU    = onCPU("onnxruntime")
	oursSoft  = column{"webtensor webgpu (software)", func(r schema.Result) bool { return r.Impl == "webtensor" && software(r) }}
	oursGPU   = column{"webtensor webgpu", func(r schema.Result) bool { return r.Impl == "webtensor" && r.Backend != "cpu" && !software(r) }}
	torchCUDA = column{"torch cuda", func(r schema.Result) bool { return r.Impl == "torch" && r.Backend == "cuda" }}
)

// find returns the result of col for a case at a thread count (any count
// when threads is 0).
func (m *merged) find(col column, caseName string, threads int) (schema.Result, bool) {
	var found []schema.Result
	for k, r := range m.results {
		if k.caseName == caseName && (threads == 0 || k.threads == threads) && col.match(r) {
			found = append(found, r)
		}
	}
	if len(found) == 0 {
		return schema.Result{}, false
	}
	// Deterministic when several devices match: the highest thread count,
	// then the device name.
	slices.SortFunc(found, func(a, b schema.Result) int {
		return cmp.Or(cmp.Compare(b.Threads, a.Threads), strings.Compare(a.Device, b.Device))
	})
	return found[0], true
}

// threads lists the thread counts at which col has results, ascending.
func (m *merged) threads(col column) []int {
	var ts []int
	for _, r := range m.results {
		if col.match(r) && !slices.Contains(ts, r.Threads) {
			ts = append(ts, r.Threads)
		}
	}
	slices.Sort(ts)
	return ts
}

func (m *merged) any(col column) bool { return len(m.threads(col)) > 0 }
