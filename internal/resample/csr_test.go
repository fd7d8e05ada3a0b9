package resample

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// dense is the table as a rows × in matrix.
func dense(t hal.ResampleTaps, in int) [][]float64 {
	m := make([][]float64, t.Rows())
	for j := range m {
		m[j] = make([]float64, in)
		for e := t.Offsets[j]; e < t.Offsets[j+1]; e++ {
			m[j][t.Index[e]] += t.Weight[e]
		}
	}
	return m
}

// Forward is the taps' matrix, Transposed its transpose (every mode, up
// and down, odd sizes), and both are well-formed CSR tables.
func TestForwardAndTransposed(t *testing.T) {
	for _, mode := range []Mode{Nearest, Linear, Cubic} {
		for _, io := range [][2]int{{5, 13}, {13, 5}, {1, 4}, {7, 7}, {3, 1}} {
			t.Run(fmt.Sprintf("%d/%dto%d", mode, io[0], io[1]), func(t *testing.T) {
				a := Axis{In: io[0], Out: io[1], Mode: mode}
				taps := Compute(a)
				fw, tr := taps.Forward(), taps.Transposed(a.In)
				require.NoError(t, fw.Check("forward", a.In))
				require.NoError(t, tr.Check("transposed", a.Out))
				f, b := dense(fw, a.In), dense(tr, a.Out)
				for o := range a.Out {
					var sum float64
					for k := range taps.Index {
						if int(taps.Index[k][o]) == 0 {
							sum += taps.Weight[k][o]
						}
					}
					require.InDelta(t, sum, f[o][0], 1e-12)
					for i := range a.In {
						require.Equal(t, f[o][i], b[i][o], "entry (%d, %d)", o, i)
					}
				}
			})
		}
	}
}

// Split keeps every row within the limit and the parts sum to the table.
func TestSplit(t *testing.T) {
	a := Axis{In: 3, Out: 50, Mode: Cubic}
	tr := Compute(a).Transposed(a.In)
	parts := Split(tr, 7)
	require.Greater(t, len(parts), 1)
	sum := make([][]float64, a.In)
	for i := range sum {
		sum[i] = make([]float64, a.Out)
	}
	for _, p := range parts {
		require.NoError(t, p.Check("part", a.Out))
		for j := range p.Rows() {
			require.LessOrEqual(t, int(p.Offsets[j+1]-p.Offsets[j]), 7)
		}
		for i, row := range dense(p, a.Out) {
			for o, v := range row {
				sum[i][o] += v
			}
		}
	}
	require.Equal(t, dense(tr, a.Out), sum)
	require.Len(t, Split(tr, 1000), 1)
}
