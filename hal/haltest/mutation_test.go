package haltest

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/cpu"
	"github.com/webtensor/webtensor/hal"
)

// The mutation check: the suite, with the tolerances a WGSL device gets,
// must still fail a deliberately broken kernel, and must pass one that is
// off by no more than WGSL allows. Each mutant is the CPU backend with one
// kernel's float32 results spoiled after the fact, reporting a Vulkan
// backend (so the suite holds it to WGSL's rules) or the CPU's (IEEE).
// The suite's own test for that kernel runs in a child process
// (TestBrokenKernel), since a failing subtest cannot be undone in this
// one.

// mutant is one deliberately broken kernel.
type mutant struct {
	kernel  string // the kernel key spoiled and tested
	backend string // what Info reports: "vulkan" (WGSL) or "cpu" (IEEE)
	spoil   func(x float64) float64
	fails   bool // whether the suite must fail it
}

// byULPs moves a float32 result k ulps away from zero, leaving zeros,
// NaN and ±Inf alone.
func byULPs(k int32) func(float64) float64 {
	return func(x float64) float64 {
		if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return x
		}
		return float64(math.Float32frombits(uint32(int32(math.Float32bits(float32(x))) + k)))
	}
}

// byFactor scales a result by (1 + rel).
func byFactor(rel float64) func(float64) float64 {
	return func(x float64) float64 { return x * (1 + rel) }
}

var mutants = map[string]mutant{
	// Within WGSL's 2.5 ulp (a correctly rounded quotient moved by 2):
	// what a GPU may do, so it passes there, and fails the CPU's IEEE.
	"div-2ulp-wgsl": {kernel: hal.Div.Kernel(), backend: "vulkan", spoil: byULPs(2)},
	"div-2ulp-ieee": {kernel: hal.Div.Kernel(), backend: "cpu", spoil: byULPs(2), fails: true},
	// Beyond it, however little.
	"div-4ulp-wgsl":     {kernel: hal.Div.Kernel(), backend: "vulkan", spoil: byULPs(4), fails: true},
	"div-1e-4-wgsl":     {kernel: hal.Div.Kernel(), backend: "vulkan", spoil: byFactor(1e-4), fails: true},
	"recip-4ulp-wgsl":   {kernel: hal.Reciprocal.Kernel(), backend: "vulkan", spoil: byULPs(-4), fails: true},
	"add-2ulp-wgsl":     {kernel: hal.Add.Kernel(), backend: "vulkan", spoil: byULPs(2), fails: true},
	"exp-16ulp-wgsl":    {kernel: hal.Exp.Kernel(), backend: "vulkan", spoil: byULPs(16), fails: true},
	"tan-1e-5-wgsl":     {kernel: hal.Tan.Kernel(), backend: "vulkan", spoil: byFactor(1e-5), fails: true},
	"sqrt-8ulp-wgsl":    {kernel: hal.Sqrt.Kernel(), backend: "vulkan", spoil: byULPs(8), fails: true},
	"softmax-1e-5-wgsl": {kernel: hal.KernelSoftmax, backend: "vulkan", spoil: byFactor(1e-5), fails: true},
	"matmul-1e-3-wgsl":  {kernel: hal.KernelMatMul, backend: "vulkan", spoil: byFactor(1e-3), fails: true},
	"avgpool-1e-5-wgsl": {kernel: hal.PoolAvg.Kernel(), backend: "vulkan", spoil: byFactor(1e-5), fails: true},
}

// brokenDevice is a device whose mutant's kernel spoils its float32
// results.
type brokenDevice struct {
	hal.Device
	m mutant
}

func (d brokenDevice) Info() hal.Info {
	info := d.Device.Info()
	info.Backend = d.m.backend
	return info
}

func (d brokenDevice) after(kernel string, dst hal.View, err error) error {
	if err != nil || kernel != d.m.kernel || dst.DType != hal.Float32 {
		return err
	}
	raw := make([]byte, dst.Buf.Size())
	if err := d.Read(dst.Buf, raw); err != nil {
		return err
	}
	vals := decode(dst.DType, raw)
	forEach(dst.Shape, dst.Strides, dst.Offset, func(_, pos int) { vals[pos] = d.m.spoil(vals[pos]) })
	return d.Write(dst.Buf, encode(dst.DType, vals))
}

func (d brokenDevice) Unary(op hal.UnaryOp, dst, src hal.View, a hal.Args) error {
	return d.after(op.Kernel(), dst, d.Device.Unary(op, dst, src, a))
}

func (d brokenDevice) Binary(op hal.BinaryOp, dst, a, b hal.View) error {
	return d.after(op.Kernel(), dst, d.Device.Binary(op, dst, a, b))
}

func (d brokenDevice) MatMul(dst, a, b hal.View, alpha, beta float64) error {
	return d.after(hal.KernelMatMul, dst, d.Device.MatMul(dst, a, b, alpha, beta))
}

func (d brokenDevice) Softmax(dst, src hal.View, log bool) error {
	return d.after(hal.KernelSoftmax, dst, d.Device.Softmax(dst, src, log))
}

func (d brokenDevice) LayerNorm(dst, src hal.View, eps float64) error {
	return d.after(hal.KernelLayerNorm, dst, d.Device.LayerNorm(dst, src, eps))
}

func (d brokenDevice) Pool2D(op hal.PoolOp, dst, indices, src hal.View, w hal.Window, includePad bool) error {
	return d.after(op.Kernel(), dst, d.Device.Pool2D(op, dst, indices, src, w, includePad))
}

// brokenEnv names the mutant TestBrokenKernel runs.
const brokenEnv = "HALTEST_MUTANT"

// TestBrokenKernel runs the suite's test of one kernel in float32 on a
// mutant; it is TestMutations' child and skips on its own.
func TestBrokenKernel(t *testing.T) {
	name := os.Getenv(brokenEnv)
	if name == "" {
		t.Skip("run by TestMutations")
	}
	m, ok := mutants[name]
	require.True(t, ok, "no mutant %q", name)
	dev := brokenDevice{Device: cpu.New(), m: m}
	s := &suite{dev: dev, caps: dev.Capabilities(), arith: ArithmeticOf(dev.Info()), big: map[string]operand{}}
	t.Cleanup(func() {
		for _, f := range s.cleanups {
			f()
		}
	})
	spec, ok := kernelSpecs()[m.kernel]
	require.True(t, ok, "no test for %s", m.kernel)
	t.Run(m.kernel, func(t *testing.T) { spec.test(t, s, hal.Float32) })
}

// TestMutations runs TestBrokenKernel on every mutant and checks that the
// suite fails exactly the ones it must.
func TestMutations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for name, m := range mutants {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenKernel$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), brokenEnv+"="+name)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("running the child: %v", err)
			}
			if m.fails {
				assert.Error(t, err, "the suite passed the broken %s (%s):\n%s", m.kernel, name, tail(out))
				assert.Contains(t, string(out), "out of tolerance", "it failed for another reason:\n%s", tail(out))
			} else {
				assert.NoError(t, err, "the suite failed %s, which is within %s's latitude:\n%s", name, m.backend, tail(out))
				assert.Contains(t, string(out), "--- PASS: TestBrokenKernel/"+m.kernel, "the kernel's test did not run:\n%s", tail(out))
			}
		})
	}
}

// tail is the last lines of a child's output, for failure messages.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}
