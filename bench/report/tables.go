package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/bench/schema"
)

// markdown renders the report: the runs, the CPU tables (one per thread
// count), the GPU table when there are GPU results, the acceptance
// ratios and the charts (paths relative to the markdown file).
func (m *merged) markdown(charts []string) string {
	var b strings.Builder
	m.runs(&b)
	m.cpuTables(&b)
	m.onnxTables(&b)
	m.gpuTable(&b)
	m.tfjsTables(&b)
	m.acceptance(&b)
	if len(charts) > 0 {
		b.WriteString("\n#### Charts\n\n")
		for _, c := range charts {
			name := strings.TrimSuffix(c[strings.LastIndex(c, "/")+1:], ".svg")
			fmt.Fprintf(&b, "![%s](%s)\n", name, c)
		}
	}
	return b.String()
}

func (m *merged) runs(b *strings.Builder) {
	b.WriteString("#### Runs\n\n")
	for _, f := range m.files {
		mc := f.Machine
		parts := []string{fmt.Sprintf("%s, %d logical CPUs, %s/%s", mc.CPU, mc.Cores, mc.OS, mc.Arch)}
		for _, kv := range [][2]string{{"Go", mc.Go}, {"Python", mc.Python}, {"PyTorch", mc.Torch},
			{"NumPy", mc.NumPy}, {"BLAS", mc.BLAS}, {"CUDA", mc.CUDA}, {"GPU", mc.GPU}} {
			if kv[1] != "" {
				parts = append(parts, kv[0]+" "+kv[1])
			}
		}
		var devs []string
		for _, d := range mc.Devices {
			devs = append(devs, fmt.Sprintf("%s = %s (%s, %s)", d.Name, d.Adapter, d.Backend, d.Type))
		}
		fmt.Fprintf(b, "- **%s**, %s: %s", f.Tool, f.Started.Format("2006-01-02 15:04 MST"), strings.Join(parts, "; "))
		if len(devs) > 0 {
			fmt.Fprintf(b, "; devices: %s", strings.Join(devs, ", "))
		}
		b.WriteString("\n")
	}
}

// cell is a result's median in its unit, "error" for a failed case and
// empty where the column has no such case.
func cell(r schema.Result, ok bool) string {
	switch {
	case !ok:
		return ""
	case r.Error != "":
		return "error"
	}
	return schema.Format(r.Median)
}

// ratio is a's speed over b's: above 1, a is faster, whatever the unit.
func ratio(a, b schema.Result, aok, bok bool) (float64, bool) {
	if !aok || !bok || a.Speed() == 0 || b.Speed() == 0 {
		return 0, false
	}
	return a.Speed() / b.Speed(), true
}

func ratioCell(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return fmt.Sprintf("%.2f×", v)
}

// bestPeer is the faster of torch and numpy on the CPU for a case.
func (m *merged) bestPeer(caseName string, threads int) (schema.Result, bool) {
	t, tok := m.find(torchCPU, caseName, threads)
	n, nok := m.find(numpyCPU, caseName, threads)
	switch {
	case tok && nok:
		if n.Speed() > t.Speed() {
			return n, true
		}
		return t, true
	case nok:
		return n, true
	}
	return t, tok
}

func (m *merged) cpuTables(b *strings.Builder) {
	counts := m.threads(oursCPU)
	for _, t := range m.threads(torchCPU) {
		if !slices.Contains(counts, t) {
			counts = append(counts, t)
		}
	}
	slices.Sort(counts)
	soft := m.any(oursSoft)
	for _, t := range counts {
		fmt.Fprintf(b, "\n#### CPU, %d thread%s\n\n", t, plural(t))
		b.WriteString("| Case | Unit | webtensor | PyTorch | NumPy | ÷ PyTorch | ÷ best peer |")
		if soft {
			b.WriteString(" webtensor webgpu (software) |")
		}
		b.WriteString("\n|---|---|--:|--:|--:|--:|--:|")
		if soft {
			b.WriteString("--:|")
		}
		b.WriteString("\n")
		for _, c := range m.cases {
			if m.isONNX(c) {
				continue // in the ONNX tables
			}
			ours, ook := m.find(oursCPU, c, t)
			torch, tok := m.find(torchCPU, c, t)
			numpy, nok := m.find(numpyCPU, c, t)
			sw, sok := m.find(oursSoft, c, 0)
			if !ook && !tok && !nok && !sok {
				continue
			}
			peer, pok := m.bestPeer(c, t)
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |", c, m.info[c], cell(ours, ook), cell(torch, tok),
				cell(numpy, nok), ratioCell(ratio(ours, torch, ook, tok)), ratioCell(ratio(ours, peer, ook, pok)))
			if soft {
				fmt.Fprintf(b, " %s |", cell(sw, sok))
			}
			b.WriteString("\n")
		}
	}
}

// isONNX reports whether a case runs an exported model (bench/cases_onnx.go).
func (m *merged) isONNX(c string) bool { return strings.HasPrefix(m.groups[c], "onnx-") }

// onnxTables set webtensor's inference latency for the exported models
// beside PyTorch eager and ONNX Runtime on the CPU, one table per thread
// count, with the software WebGPU adapter's where it ran.
func (m *merged) onnxTables(b *strings.Builder) {
	var counts []int
	for _, col := range []column{oursCPU, torchCPU, ortCPU} {
		for _, t := range m.threads(col) {
			if !slices.Contains(counts, t) {
				counts = append(counts, t)
			}
		}
	}
	slices.Sort(counts)
	soft := m.any(oursSoft)
	for _, t := range counts {
		var rows strings.Builder
		for _, c := range m.cases {
			if !m.isONNX(c) {
				continue
			}
			ours, ook := m.find(oursCPU, c, t)
			torch, tok := m.find(torchCPU, c, t)
			ort, rok := m.find(ortCPU, c, t)
			if !ook && !tok && !rok {
				continue
			}
			fmt.Fprintf(&rows, "| %s | %s | %s | %s | %s | %s | %s |", c, m.info[c], cell(ours, ook), cell(torch, tok),
				cell(ort, rok), ratioCell(ratio(ours, torch, ook, tok)), ratioCell(ratio(ours, ort, ook, rok)))
			if soft {
				sw, sok := m.find(oursSoft, c, 0)
				fmt.Fprintf(&rows, " %s |", cell(sw, sok))
			}
			rows.WriteString("\n")
		}
		if rows.Len() == 0 {
			continue
		}
		fmt.Fprintf(b, "\n#### ONNX models, CPU, %d thread%s\n\n", t, plural(t))
		b.WriteString("| Case | Unit | webtensor | PyTorch eager | ONNX Runtime | ÷ PyTorch | ÷ ONNX Runtime |")
		if soft {
			b.WriteString(" webtensor webgpu (software) |")
		}
		b.WriteString("\n|---|---|--:|--:|--:|--:|--:|")
		if soft {
			b.WriteString("--:|")
		}
		b.WriteString("\n")
		b.WriteString(rows.String())
	}
}

func (m *merged) gpuTable(b *strings.Builder) {
	if !m.any(oursGPU) && !m.any(torchCUDA) {
		b.WriteString("\n#### GPU\n\nNo GPU results in these runs: see the GPU section for the script.\n")
		return
	}
	b.WriteString("\n#### GPU\n\nThe last two columns give a GB/s row as a fraction of the same side's device-to-device copy (copy/N). " +
		"A `fusion=off` row (every op its own kernel) is set against PyTorch's row of the same case.\n\n" +
		"| Case | Unit | webtensor webgpu | PyTorch CUDA | ÷ PyTorch | webgpu ÷ copy | CUDA ÷ copy |\n|---|---|--:|--:|--:|--:|--:|\n")
	for _, c := range m.cases {
		ours, ook := m.find(oursGPU, c, 0)
		// PyTorch has no fusion to turn off: its row is the peer of both.
		torch, tok := m.find(torchCUDA, strings.TrimSuffix(c, fusionOff), 0)
		if !ook && !tok {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", c, m.info[c], cell(ours, ook), cell(torch, tok),
			ratioCell(ratio(ours, torch, ook, tok)), ratioCell(m.ofCopy(ours, ook)), ratioCell(m.ofCopy(torch, tok)))
	}
}

// tfjsTables set webtensor's WebGPU rows beside TensorFlow.js's WebGPU
// backend (bench/peers/tfjs) on the same adapter, one table per adapter
// that tfjs ran on: a WebGPU API (the result's backend: vulkan, opengles)
// of the same adapter type, so that lavapipe pairs with lavapipe and
// llvmpipe's OpenGL ES with itself. Only the cases tfjs has are rows.
func (m *merged) tfjsTables(b *strings.Builder) {
	type adapter struct{ backend, typ string }
	var adapters []adapter
	names := map[adapter]string{}
	for _, c := range m.cases {
		for _, r := range m.results {
			a := adapter{r.Backend, r.Type}
			if r.Case == c && r.Impl == tfjsImpl && !slices.Contains(adapters, a) {
				adapters = append(adapters, a)
				names[a] = r.Adapter
			}
		}
	}
	slices.SortFunc(adapters, func(x, y adapter) int { return strings.Compare(x.backend+x.typ, y.backend+y.typ) })
	for _, a := range adapters {
		same := func(impl string) column {
			return column{impl, func(r schema.Result) bool {
				return r.Impl == impl && r.Backend == a.backend && r.Type == a.typ
			}}
		}
		ourCol, tfjsCol := same("webtensor"), same(tfjsImpl)
		fmt.Fprintf(b, "\n#### WebGPU (%s, adapter type %s) vs TensorFlow.js\n\n", a.backend, a.typ)
		fmt.Fprintf(b, "TensorFlow.js's WebGPU backend on %s through its own Dawn (npm webgpu); "+
			"above 1, webtensor is faster.\n\n", names[a])
		b.WriteString("| Case | Unit | webtensor | tfjs-webgpu | ÷ tfjs |\n|---|---|--:|--:|--:|\n")
		for _, c := range m.cases {
			theirs, tok := m.find(tfjsCol, c, 0)
			if !tok {
				continue
			}
			ours, ook := m.find(ourCol, c, 0)
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", c, m.info[c], cell(ours, ook), cell(theirs, tok),
				ratioCell(ratio(ours, theirs, ook, tok)))
		}
	}
}

// ofCopy is r's GB/s as a fraction of the device-to-device copy of the
// same implementation, device and threads: the copy of the same element
// count where there is one, else the largest (what the bench's of_copy
// holds; peers.py writes none). ok is false for another unit, a copy
// row, or no copy.
func (m *merged) ofCopy(r schema.Result, ok bool) (float64, bool) {
	if !ok || r.Unit != schema.GBs || r.Group == "copy" || r.Error != "" || r.Median <= 0 {
		return 0, false
	}
	var ref schema.Result
	for _, c := range m.results {
		if c.Group != "copy" || c.Impl != r.Impl || c.Device != r.Device || c.Threads != r.Threads ||
			r.Impl == "webtensor" && c.Variant != r.Variant || c.Error != "" || c.Median <= 0 {
			continue // a peer's variants (out=) are its best way, each case its own
		}
		if ref.Median == 0 || c.Size == r.Size || ref.Size != r.Size && c.Size > ref.Size {
			ref = c
		}
	}
	if ref.Median == 0 {
		return 0, false
	}
	return r.Median / ref.Median, true
}

// criterion is one of the acceptance ratios: ours over a peer's
// case (which may differ, as for elementwise against a device copy),
// against a target; peer nil means the faster CPU peer.
type criterion struct {
	what           string
	ours           column
	oursCase       string
	peer           *column
	peerCase       string
	target         float64
	perThreadCount bool
}

func criteria() []criterion {
	torch, cuda := torchCPU, torchCUDA
	cs := []criterion{
		{"SGEMM 1024 vs PyTorch", oursCPU, "matmul/1024", &torch, "matmul/1024", 0.8, true},
		{"SGEMM 2048 vs PyTorch", oursCPU, "matmul/2048", &torch, "matmul/2048", 0.8, true},
	}
	for _, c := range []string{"add/16M", "relu/16M", "softmax/4096x1024", "sum/16M"} {
		cs = append(cs, criterion{c + " vs faster of PyTorch, NumPy", oursCPU, c, nil, c, 0.9, true})
	}
	cs = append(cs,
		criterion{"MLP step vs PyTorch", oursCPU, "mlp-step/784-512-512-10-b128", &torch, "mlp-step/784-512-512-10-b128", 1, true},
		// The ONNX importer's issue: CPU inference at batch 32.
		criterion{"ONNX ResNet-18 b32 vs PyTorch eager (within 1.5×)", oursCPU, "onnx/resnet18-b32", &torch, "onnx/resnet18-b32", 1 / 1.5, true},
		criterion{"ONNX transformer b32 vs PyTorch eager (within 1.5×)", oursCPU, "onnx/transformer-b32", &torch, "onnx/transformer-b32", 1 / 1.5, true},
	)
	// The GPU speed issue's goals, against PyTorch CUDA on the same GPU
	// (TF32 off): elementwise ops with each op its own kernel.
	gpu := func(what, ours, peer string, target float64) criterion {
		return criterion{"GPU " + what + " vs PyTorch CUDA", oursGPU, ours, &cuda, peer, target, false}
	}
	for _, c := range []string{"add/4M", "add/16M", "relu/4M", "relu/16M"} {
		cs = append(cs, gpu(c+fusionOff, c+fusionOff, c, 0.85))
	}
	cs = append(cs,
		gpu("sum/16M", "sum/16M", "sum/16M", 0.8),
		gpu("softmax/4096x1024", "softmax/4096x1024", "softmax/4096x1024", 0.8),
		gpu("SGEMM 1024 (TF32 off)", "matmul/1024", "matmul/1024", 0.6),
		gpu("SGEMM 4096 (TF32 off)", "matmul/4096", "matmul/4096", 0.75),
		gpu("bmm 64×256³", "bmm/64x256", "bmm/64x256", 0.6),
	)
	for _, c := range []string{"conv2d/n8-64to64-56x56-k3", "conv2d/n8-128to128-28x28-k3", "conv2d/n8-256to256-14x14-k3"} {
		cs = append(cs, gpu(c, c, c, 0.8))
	}
	cs = append(cs,
		gpu("MLP step", "mlp-step/784-512-512-10-b128", "mlp-step/784-512-512-10-b128", 0.85),
		gpu("CNN step", "cnn-step/1x28x28-b64", "cnn-step/1x28x28-b64", 0.5),
		// sum/1M under 15 µs: 4 MiB in 15 µs is 279.6 GB/s, an absolute goal.
		criterion{"GPU sum/1M under 15 µs (GB/s ≥ 4 MiB / 15 µs)", oursGPU, "sum/1M", nil, "", 4 << 20 / 15e-6 / 1e9, false},
	)
	return cs
}

// fusionOff marks the row of a case measured with WEBTENSOR_FUSION=0.
const fusionOff = " fusion=off"

func (m *merged) acceptance(b *strings.Builder) {
	var rows []string
	for _, c := range criteria() {
		counts := []int{0}
		if c.perThreadCount {
			counts = m.threads(c.ours)
		}
		for _, t := range counts {
			ours, ook := m.find(c.ours, c.oursCase, t)
			var peer schema.Result
			var pok bool
			switch {
			case c.peerCase == "":
				// An absolute goal: ours in its unit against the target.
				pok = true
			case c.peer == nil:
				peer, pok = m.bestPeer(c.peerCase, t)
			default:
				peer, pok = m.find(*c.peer, c.peerCase, t)
			}
			var v float64
			ok := ook && pok
			if c.peerCase == "" {
				v, ok = ours.Median, ok && ours.Error == "" && ours.Median > 0
			} else {
				v, ok = ratio(ours, peer, ook, pok)
			}
			if !ok {
				continue
			}
			met := "no"
			if v >= c.target {
				met = "yes"
			}
			threads := "–"
			if t > 0 {
				threads = fmt.Sprint(t)
			}
			if c.peerCase == "" {
				rows = append(rows, fmt.Sprintf("| %s | %s | %.4g | ≥ %.4g | %s |", c.what, threads, v, c.target, met))
				continue
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %.2f× | ≥ %.2f× | %s |", c.what, threads, v, c.target, met))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n#### Acceptance ratios\n\nSpeed of webtensor over the peer (above 1: webtensor is faster).\n\n")
	b.WriteString("| Criterion | Threads | Ratio | Target | Met |\n|---|--:|--:|--:|---|\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
