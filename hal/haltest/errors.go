package haltest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// misuse is one call that breaks the contract.
type misuse struct {
	name   string
	kernel string // must be declared for float32 to try; "" for none
	want   error
	op     []string // the names the message may use for the op
	call   func() error
}

// errUnknownOp marks the misuses of op enums out of range.
var errUnknownOp = errors.New("ErrUnsupported or ErrInvalid")

// foreignBuffer is a hal.Buffer that no device made.
type foreignBuffer struct{ size int64 }

func (b foreignBuffer) Size() int64 { return b.size }

// testErrors checks that broken contracts come back as errors wrapping the
// documented sentinels, with a message naming the op, rather than panics
// or wrong results, and leave the device usable.
func testErrors(t *testing.T, s *suite) {
	f32, i32 := hal.Float32, hal.Int32
	// Every buffer holds exactly its view, so one element more overruns.
	z := func(dt hal.DType, shape ...int) hal.View { return s.exact(t, dt, shape...) }
	with := func(v hal.View, offset int, shape, strides []int) hal.View {
		v.Offset, v.Shape, v.Strides = offset, shape, strides
		return v
	}
	v4, w4, d4 := z(f32, 4), z(f32, 4), z(f32, 4)
	m23, m32, m22 := z(f32, 2, 3), z(f32, 3, 2), z(f32, 2, 2)
	img, cols := z(f32, 1, 1, 3, 3), z(f32, 1, 4, 4)
	out22 := z(f32, 1, 1, 2, 2)
	idx23 := z(i32, 2, 3)
	big := z(f32, 64)
	nine := make([]int, hal.MaxRank+1)
	for i := range nine {
		nine[i] = 1
	}
	rank9 := with(big, 0, nine, hal.RowMajorStrides(nine))
	alien := hal.View{Buf: foreignBuffer{size: 64}, DType: f32, Shape: []int{4}, Strides: []int{1}}
	freedBuf, err := s.dev.Alloc(64)
	require.NoError(t, err)
	s.dev.Free(freedBuf)
	freed := hal.Contiguous(freedBuf, f32, 4)
	badWin := probeWindow
	badWin.StrideH = 0
	wrongOut := probeWindow
	wrongOut.OutH = 3

	unary := []string{"unary", "exp"}
	binary := []string{"binary", "add"}
	cases := []misuse{
		// Shapes that do not match.
		{"shape/unary", hal.Exp.Kernel(), hal.ErrInvalid, unary, func() error { return s.dev.Unary(hal.Exp, v4, z(f32, 5), hal.Args{}) }},
		{"shape/binary", hal.Add.Kernel(), hal.ErrInvalid, binary, func() error { return s.dev.Binary(hal.Add, v4, w4, z(f32, 3)) }},
		{"shape/binary-transposed", hal.Add.Kernel(), hal.ErrInvalid, binary, func() error { return s.dev.Binary(hal.Add, m23, m32, m23) }},
		{"shape/where", hal.KernelWhere, hal.ErrInvalid, []string{"where"}, func() error { return s.dev.Where(v4, z(i32, 5), w4, d4) }},
		{"shape/copy", hal.KernelCopy, hal.ErrInvalid, []string{"copy"}, func() error { return s.dev.Copy(v4, m22) }},
		{"shape/reduce", hal.Sum.Kernel(), hal.ErrInvalid, []string{"reduce", "sum"}, func() error { return s.dev.Reduce(hal.Sum, z(f32, 3), m23, 1) }},
		{"shape/matmul-k", hal.KernelMatMul, hal.ErrInvalid, []string{"matmul"}, func() error { return s.dev.MatMul(m22, m23, z(f32, 4, 2), 1, 0) }},
		{"shape/matmul-batch", hal.KernelMatMul, hal.ErrInvalid, []string{"matmul"}, func() error {
			return s.dev.MatMul(z(f32, 2, 2, 2), z(f32, 3, 2, 3), z(f32, 2, 3, 2), 1, 0)
		}},
		{"shape/gather", hal.KernelGather, hal.ErrInvalid, []string{"gather"}, func() error { return s.dev.Gather(m23, z(f32, 2, 5), z(i32, 2, 4), 1) }},
		{"shape/gather-rank", hal.KernelGather, hal.ErrInvalid, []string{"gather"}, func() error { return s.dev.Gather(m23, z(f32, 6), idx23, 1) }},
		{"shape/gather-axis", hal.KernelGather, hal.ErrInvalid, []string{"gather"}, func() error { return s.dev.Gather(m23, m23, idx23, 2) }},
		{"shape/scatter-add", hal.KernelScatterAdd, hal.ErrInvalid, []string{"scatteradd"}, func() error {
			return s.dev.ScatterAdd(z(f32, 2, 5), idx23, z(f32, 2, 4), 1)
		}},
		{"shape/im2col", hal.KernelIm2Col, hal.ErrInvalid, []string{"im2col"}, func() error { return s.dev.Im2Col(z(f32, 1, 4, 5), img, probeWindow) }},
		{"shape/im2col-window", hal.KernelIm2Col, hal.ErrInvalid, []string{"im2col"}, func() error { return s.dev.Im2Col(cols, img, wrongOut) }},
		{"shape/col2im", hal.KernelCol2Im, hal.ErrInvalid, []string{"col2im"}, func() error { return s.dev.Col2Im(img, z(f32, 1, 3, 4), probeWindow) }},
		{"shape/pool", hal.PoolAvg.Kernel(), hal.ErrInvalid, []string{"pool"}, func() error {
			return s.dev.Pool2D(hal.PoolAvg, z(f32, 1, 1, 3, 2), hal.View{}, img, probeWindow, false)
		}},
		{"shape/grid-sample", hal.KernelGridSample, hal.ErrInvalid, []string{"gridsample"}, func() error {
			return s.dev.GridSample(out22, img, z(f32, 1, 2, 2, 3), hal.GridZeros, false)
		}},
		{"window/stride-0", hal.KernelIm2Col, hal.ErrInvalid, []string{"im2col"}, func() error { return s.dev.Im2Col(cols, img, badWin) }},
		{"window/pool-stride-0", hal.PoolMax.Kernel(), hal.ErrInvalid, []string{"pool"}, func() error {
			return s.dev.Pool2D(hal.PoolMax, out22, z(i32, 1, 1, 2, 2), img, badWin, false)
		}},

		// Dtypes that do not match.
		{"dtype/unary", hal.Exp.Kernel(), hal.ErrInvalid, unary, func() error { return s.dev.Unary(hal.Exp, z(i32, 4), v4, hal.Args{}) }},
		{"dtype/binary", hal.Add.Kernel(), hal.ErrInvalid, binary, func() error { return s.dev.Binary(hal.Add, v4, w4, z(i32, 4)) }},
		{"dtype/compare-dst", hal.Lt.Kernel(), hal.ErrInvalid, []string{"binary", "lt"}, func() error { return s.dev.Binary(hal.Lt, v4, w4, d4) }},
		{"dtype/where-cond", hal.KernelWhere, hal.ErrInvalid, []string{"where"}, func() error { return s.dev.Where(v4, w4, d4, z(f32, 4)) }},
		{"dtype/argmax-dst", hal.ArgMax.Kernel(), hal.ErrInvalid, []string{"reduce", "argmax"}, func() error { return s.dev.Reduce(hal.ArgMax, z(f32, 2), m23, 1) }},
		{"dtype/sum-dst", hal.Sum.Kernel(), hal.ErrInvalid, []string{"reduce", "sum"}, func() error { return s.dev.Reduce(hal.Sum, z(i32, 2), m23, 1) }},
		{"dtype/matmul", hal.KernelMatMul, hal.ErrInvalid, []string{"matmul"}, func() error { return s.dev.MatMul(m22, m23, z(i32, 3, 2), 1, 0) }},
		{"dtype/gather-index", hal.KernelGather, hal.ErrInvalid, []string{"gather"}, func() error { return s.dev.Gather(m23, m23, z(f32, 2, 3), 1) }},
		{"dtype/pool-indices", hal.PoolMax.Kernel(), hal.ErrInvalid, []string{"pool"}, func() error {
			return s.dev.Pool2D(hal.PoolMax, out22, z(f32, 1, 1, 2, 2), img, probeWindow, false)
		}},
		{"view/pool-avg-with-indices", hal.PoolAvg.Kernel(), hal.ErrInvalid, []string{"pool"}, func() error {
			return s.dev.Pool2D(hal.PoolAvg, out22, z(i32, 1, 1, 2, 2), img, probeWindow, false)
		}},
		{"dtype/invalid", hal.Exp.Kernel(), hal.ErrInvalid, unary, func() error {
			bad := v4
			bad.DType = hal.DType(42)
			return s.dev.Unary(hal.Exp, d4, bad, hal.Args{})
		}},

		// Views that break View.Check.
		{"view/outside-buffer", hal.Exp.Kernel(), hal.ErrInvalid, unary, func() error { return s.dev.Unary(hal.Exp, d4, with(v4, 1, []int{4}, []int{1}), hal.Args{}) }},
		{"view/stride-outside-buffer", hal.Exp.Kernel(), hal.ErrInvalid, unary, func() error { return s.dev.Unary(hal.Exp, m22, with(v4, 0, []int{2, 2}, []int{3, 1}), hal.Args{}) }},
		{"view/dst-outside-buffer", hal.Add.Kernel(), hal.ErrInvalid, binary, func() error { return s.dev.Binary(hal.Add, with(d4, 2, []int{4}, []int{1}), v4, w4) }},
		{"view/matmul-outside-buffer", hal.KernelMatMul, hal.ErrInvalid, []string{"matmul"}, func() error { return s.dev.MatMul(m22, with(m23, 1, []int{2, 3}, []int{3, 1}), m32, 1, 0) }},
		{"view/negative-offset", hal.Exp.Kernel(), hal.ErrInvalid, unary, func() error { return s.dev.Unary(hal.Exp, d4, with(big, -1, []int{4}, []int{1}), hal.Args{}) }},
		{"view/strides-count", hal.Exp.Kernel(), hal.ErrInvalid, unary, func() error { return s.dev.Unary(hal.Exp, d4, with(big, 0, []int{4}, []int{1, 1}), hal.Args{}) }},
		{"view/no-buffer", hal.Add.Kernel(), hal.ErrInvalid, binary, func() error {
			return s.dev.Binary(hal.Add, d4, v4, hal.View{DType: f32, Shape: []int{4}, Strides: []int{1}})
		}},
		{"view/rank-9", hal.Exp.Kernel(), hal.ErrUnsupported, unary, func() error { return s.dev.Unary(hal.Exp, rank9, rank9, hal.Args{}) }},
		{"view/rank-9-reduce", hal.Sum.Kernel(), hal.ErrUnsupported, []string{"reduce", "sum"}, func() error { return s.dev.Reduce(hal.Sum, z(f32), rank9, len(nine)) }},
		{"view/dst-not-contiguous", hal.Exp.Kernel(), hal.ErrInvalid, unary, func() error {
			return s.dev.Unary(hal.Exp, with(big, 0, []int{2, 2}, []int{1, 2}), m22, hal.Args{})
		}},
		{"view/random-dst-strided", hal.Uniform.Kernel(), hal.ErrInvalid, []string{"random"}, func() error {
			return s.dev.Random(with(big, 0, []int{4}, []int{2}), hal.Uniform, 0, 1, 0)
		}},
		{"view/fill-dst-overlapping", hal.KernelFill, hal.ErrInvalid, []string{"fill"}, func() error {
			return s.dev.Fill(with(big, 0, []int{4}, []int{0}), 1, 1)
		}},
		{"view/copy-dst-overlapping", hal.KernelCopy, hal.ErrInvalid, []string{"copy"}, func() error {
			return s.dev.Copy(with(big, 0, []int{2, 3}, []int{1, 1}), m23)
		}},

		// Aliasing the contract forbids: an elementwise dst may share a
		// buffer with an input only as the identical view; other kernels'
		// dst may not share one at all.
		{"alias/binary-shifted", hal.Add.Kernel(), hal.ErrInvalid, binary, func() error {
			return s.dev.Binary(hal.Add, with(big, 1, []int{4}, []int{1}), with(big, 0, []int{4}, []int{1}), w4)
		}},
		{"alias/unary-transposed", hal.Exp.Kernel(), hal.ErrInvalid, unary, func() error { return s.dev.Unary(hal.Exp, m22, with(m22, 0, []int{2, 2}, []int{1, 2}), hal.Args{}) }},
		{"alias/copy-converting", hal.KernelCopy, hal.ErrInvalid, []string{"copy"}, func() error {
			return s.dev.Copy(with(big, 0, []int{4}, []int{1}), hal.View{Buf: big.Buf, DType: i32, Shape: []int{4}, Strides: []int{1}})
		}},
		{"alias/matmul", hal.KernelMatMul, hal.ErrInvalid, []string{"matmul"}, func() error {
			return s.dev.MatMul(with(big, 0, []int{2, 2}, []int{2, 1}), with(big, 8, []int{2, 3}, []int{3, 1}), m32, 1, 0)
		}},
		{"alias/reduce", hal.Sum.Kernel(), hal.ErrInvalid, []string{"reduce", "sum"}, func() error {
			return s.dev.Reduce(hal.Sum, with(big, 10, []int{2}, []int{1}), with(big, 0, []int{2, 3}, []int{3, 1}), 1)
		}},
		{"alias/gather", hal.KernelGather, hal.ErrInvalid, []string{"gather"}, func() error {
			return s.dev.Gather(with(big, 20, []int{2, 3}, []int{3, 1}), with(big, 0, []int{2, 3}, []int{3, 1}), idx23, 1)
		}},
		{"alias/scatter-add", hal.KernelScatterAdd, hal.ErrInvalid, []string{"scatteradd"}, func() error {
			return s.dev.ScatterAdd(with(big, 0, []int{2, 3}, []int{3, 1}), idx23, with(big, 0, []int{2, 3}, []int{3, 1}), 1)
		}},
		{"alias/im2col", hal.KernelIm2Col, hal.ErrInvalid, []string{"im2col"}, func() error {
			return s.dev.Im2Col(with(big, 16, []int{1, 4, 4}, []int{16, 4, 1}), with(big, 0, []int{1, 1, 3, 3}, []int{9, 9, 3, 1}), probeWindow)
		}},

		// Buffers the device does not own, or no longer.
		{"buffer/foreign", hal.Add.Kernel(), hal.ErrInvalid, binary, func() error { return s.dev.Binary(hal.Add, d4, alien, w4) }},
		{"buffer/foreign-dst", hal.KernelMatMul, hal.ErrInvalid, []string{"matmul"}, func() error { return s.dev.MatMul(with(alien, 0, []int{2, 2}, []int{2, 1}), m23, m32, 1, 0) }},
		{"buffer/freed", hal.Exp.Kernel(), hal.ErrClosed, unary, func() error { return s.dev.Unary(hal.Exp, d4, freed, hal.Args{}) }},
		{"buffer/freed-dst", hal.KernelFill, hal.ErrClosed, []string{"fill"}, func() error { return s.dev.Fill(freed, 0, 0) }},
		{"buffer/foreign-write", "", hal.ErrInvalid, []string{"write"}, func() error { return s.dev.Write(alien.Buf, make([]byte, 4)) }},
		{"buffer/foreign-read", "", hal.ErrInvalid, []string{"read"}, func() error { return s.dev.Read(alien.Buf, make([]byte, 4)) }},
		{"buffer/freed-write", "", hal.ErrClosed, []string{"write"}, func() error { return s.dev.Write(freedBuf, make([]byte, 4)) }},
		{"buffer/freed-read", "", hal.ErrClosed, []string{"read"}, func() error { return s.dev.Read(freedBuf, make([]byte, 4)) }},
		{"buffer/write-too-long", "", hal.ErrInvalid, []string{"write"}, func() error { return s.dev.Write(v4.Buf, make([]byte, 17)) }},
		{"buffer/read-too-long", "", hal.ErrInvalid, []string{"read"}, func() error { return s.dev.Read(v4.Buf, make([]byte, 17)) }},
		{"buffer/alloc-negative", "", hal.ErrInvalid, []string{"alloc"}, func() error { _, err := s.dev.Alloc(-1); return err }},

		// Ops that do not exist.
		{"op/unary", "", errUnknownOp, []string{"unary"}, func() error { return s.dev.Unary(hal.UnaryOp(99), d4, v4, hal.Args{}) }},
		{"op/binary", "", errUnknownOp, []string{"binary"}, func() error { return s.dev.Binary(hal.BinaryOp(99), d4, v4, w4) }},
		{"op/reduce", "", errUnknownOp, []string{"reduce"}, func() error { return s.dev.Reduce(hal.ReduceOp(99), z(f32, 2), m23, 1) }},
		{"op/pool", "", errUnknownOp, []string{"pool"}, func() error { return s.dev.Pool2D(hal.PoolOp(99), out22, hal.View{}, img, probeWindow, false) }},
		{"op/random", "", errUnknownOp, []string{"random"}, func() error { return s.dev.Random(d4, hal.Distribution(99), 0, 0, 0) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.kernel != "" && !s.has(c.kernel, f32) {
				t.Skipf("%s is not declared for float32", c.kernel)
			}
			err := c.call()
			if c.want == errUnknownOp {
				// Either reading fits: the device cannot run it, or the
				// argument is outside the enum.
				if !assert.True(t, errIsOneOf(err, hal.ErrUnsupported, hal.ErrInvalid), "want ErrUnsupported or ErrInvalid, got %v", err) {
					return
				}
			} else if !assert.ErrorIs(t, err, c.want) {
				return
			}
			msg := normalize(err.Error())
			named := slices.ContainsFunc(c.op, func(op string) bool { return strings.Contains(msg, normalize(op)) })
			assert.True(t, named, "the message %q names none of %v", err.Error(), c.op)
		})
	}
	t.Run("free-foreign", func(t *testing.T) {
		s.dev.Free(foreignBuffer{size: 64}) // must not panic
	})
	t.Run("still-usable", func(t *testing.T) {
		// Argument errors are reported by the call, not left for Sync.
		require.NoError(t, s.dev.Sync())
		if !s.has(hal.Add.Kernel(), f32) {
			t.Skip("add is not declared for float32")
		}
		rng := newRand(t.Name())
		a := s.operand(t, f32, []int{4}, contiguous, bind(wide, rng, f32))
		dst := s.output(t, f32, []int{4}, contiguous)
		require.NoError(t, s.dev.Binary(hal.Add, dst.View, a.View, a.View))
		s.checkBinary(t, hal.Add, f32, s.result(t, dst), a.values(), a.values())
		assert.NoError(t, s.dev.Sync())
	})
}
