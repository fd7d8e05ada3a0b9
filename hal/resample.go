package hal

import "fmt"

// MaxResampleRow bounds the entries of one row of ResampleTaps, so that a
// GPU invocation's loop over a row stays under llvmpipe's 65,535
// iterations. Interpolation's rows hold at most 4 entries forward and
// about 4·out/in backward.
const MaxResampleRow = 1 << 15

// ResampleTaps is a sparse matrix in compressed sparse row form, applied
// by Device.Resample along one axis: row j (output position j) holds the
// entries Offsets[j] … Offsets[j+1]−1, entry e reading input position
// Index[e] with weight Weight[e]. The arrays are small (a few per output
// position) and live on the host; a backend uploads them per call.
type ResampleTaps struct {
	Offsets []int32 // Rows()+1 non-decreasing values from 0 to len(Index)
	Index   []int32
	Weight  []float64
}

// Rows is the number of output positions.
func (t ResampleTaps) Rows() int { return max(len(t.Offsets)-1, 0) }

// Check reports a malformed table, or an index outside [0, in), as an
// ErrInvalid naming op.
func (t ResampleTaps) Check(op string, in int) error {
	if len(t.Offsets) == 0 || t.Offsets[0] != 0 || int(t.Offsets[len(t.Offsets)-1]) != len(t.Index) || len(t.Index) != len(t.Weight) {
		return fmt.Errorf("%s: taps with %d offsets, %d indices and %d weights are not a CSR table: %w", op, len(t.Offsets), len(t.Index), len(t.Weight), ErrInvalid)
	}
	for j := range t.Rows() {
		n := t.Offsets[j+1] - t.Offsets[j]
		if n < 0 || n > MaxResampleRow {
			return fmt.Errorf("%s: taps row %d has %d entries (at most %d): %w", op, j, n, MaxResampleRow, ErrInvalid)
		}
	}
	for e, i := range t.Index {
		if i < 0 || int(i) >= in {
			return fmt.Errorf("%s: taps entry %d reads position %d of an axis of %d: %w", op, e, i, in, ErrInvalid)
		}
	}
	return nil
}
