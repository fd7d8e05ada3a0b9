package tensor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

var poolCases = []struct {
	name string
	g    poolGeometry
}{
	{"k2 default stride", poolGeometry{N: 2, C: 3, H: 6, W: 8, Opts: PoolOptions{Kernel: [2]int{2, 2}}}},
	{"k3 s2 p1", poolGeometry{N: 2, C: 2, H: 7, W: 9, Opts: PoolOptions{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}}},
	{"nonsquare ceil", poolGeometry{N: 1, C: 3, H: 8, W: 5, Opts: PoolOptions{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1},
		Padding: [2]int{1, 0}, CeilMode: true}}},
	{"ceil partial window", poolGeometry{N: 2, C: 1, H: 7, W: 7, Opts: PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, CeilMode: true}}},
	{"ceil with padding", poolGeometry{N: 1, C: 2, H: 6, W: 5, Opts: PoolOptions{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2},
		Padding: [2]int{1, 1}, CeilMode: true}}},
	{"stride larger than kernel", poolGeometry{N: 1, C: 2, H: 9, W: 8, Opts: PoolOptions{Kernel: [2]int{2, 3}, Stride: [2]int{3, 4}}}},
}

func TestMaxPool2d(t *testing.T) {
	cases := append(poolCases, []struct {
		name string
		g    poolGeometry
	}{
		{"dilation", poolGeometry{N: 2, C: 2, H: 9, W: 8, Opts: PoolOptions{Kernel: [2]int{3, 2}, Stride: [2]int{1, 2},
			Padding: [2]int{1, 1}, Dilation: [2]int{2, 3}}}},
		{"dilation ceil", poolGeometry{N: 1, C: 1, H: 10, W: 7, Opts: PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{3, 2},
			Dilation: [2]int{2, 2}, CeilMode: true}}},
	}...)
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				g := tc.g
				x, xs := nnInput(t, dev, nnRand(t), g.N, g.C, g.H, g.W)
				want, wantIdx, oh, ow := refMaxPool2d(xs, g)
				values, indices := MaxPool2d(x, g.Opts)
				defer indices.Release()
				require.Equal(t, []int{g.N, g.C, oh, ow}, values.Shape())
				require.Equal(t, []int{g.N, g.C, oh, ow}, indices.Shape())
				require.Equal(t, Int32, indices.DType())
				// A maximum is one of the inputs: exact.
				nnRequireClose(t, tc.name, want, nnRead(t, values), func(int) float64 { return 0 })
				idx, err := indices.Int32s()
				require.NoError(t, err)
				require.Equal(t, wantIdx, idx)
			})
		}
	})
}

func TestAvgPool2d(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, tc := range poolCases {
			for _, include := range []bool{true, false} {
				name := tc.name + map[bool]string{true: " count_include_pad", false: " exclude_pad"}[include]
				t.Run(name, func(t *testing.T) {
					g := tc.g
					x, xs := nnInput(t, dev, nnRand(t), g.N, g.C, g.H, g.W)
					want, oh, ow := refAvgPool2d(xs, g, include)
					y := AvgPool2d(x, g.Opts, include)
					require.Equal(t, []int{g.N, g.C, oh, ow}, y.Shape())
					nnRequireClose(t, name, want, nnRead(t, y), nnValueTol(want))
				})
			}
		}
	})
}

func TestPool2dUnbatched(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		g := poolGeometry{N: 1, C: 2, H: 5, W: 6, Opts: PoolOptions{Kernel: [2]int{2, 3}, Padding: [2]int{1, 1}}}
		x, xs := nnInput(t, dev, nnRand(t), g.C, g.H, g.W)
		wantMax, wantIdx, oh, ow := refMaxPool2d(xs, g)
		values, indices := MaxPool2d(x, g.Opts)
		require.Equal(t, []int{g.C, oh, ow}, values.Shape())
		require.Equal(t, []int{g.C, oh, ow}, indices.Shape())
		nnRequireClose(t, "max", wantMax, nnRead(t, values), func(int) float64 { return 0 })
		idx, err := indices.Int32s()
		indices.Release()
		require.NoError(t, err)
		require.Equal(t, wantIdx, idx)

		wantAvg, _, _ := refAvgPool2d(xs, g, false)
		y := AvgPool2d(x, g.Opts, false)
		require.Equal(t, []int{g.C, oh, ow}, y.Shape())
		nnRequireClose(t, "avg", wantAvg, nnRead(t, y), nnValueTol(wantAvg))
	})
}

func TestAdaptiveAvgPool2d(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, tc := range []struct {
			name       string
			shape      []int
			outH, outW int
		}{
			{"global", []int{2, 3, 5, 7}, 1, 1},
			{"divisible", []int{2, 2, 6, 9}, 2, 3},
			{"identity", []int{1, 2, 3, 4}, 3, 4},
			{"one axis", []int{1, 3, 4, 6}, 4, 1},
			{"unbatched global", []int{3, 4, 5}, 1, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				x, xs := nnInput(t, dev, nnRand(t), tc.shape...)
				h, w := tc.shape[len(tc.shape)-2], tc.shape[len(tc.shape)-1]
				planes := len(xs) / (h * w)
				want := make([]float64, planes*tc.outH*tc.outW)
				kh, kw := h/tc.outH, w/tc.outW
				for p := range planes {
					for i := range tc.outH {
						for j := range tc.outW {
							var sum float64
							for y := i * kh; y < (i+1)*kh; y++ {
								for x := j * kw; x < (j+1)*kw; x++ {
									sum += xs[(p*h+y)*w+x]
								}
							}
							want[(p*tc.outH+i)*tc.outW+j] = sum / float64(kh*kw)
						}
					}
				}
				y := AdaptiveAvgPool2d(x, tc.outH, tc.outW)
				wantShape := append(append([]int{}, tc.shape[:len(tc.shape)-2]...), tc.outH, tc.outW)
				require.Equal(t, wantShape, y.Shape())
				nnRequireClose(t, tc.name, want, nnRead(t, y), nnValueTol(want))
			})
		}
	})
}
