package resample

import (
	"math"
	"testing"
)

// Every output's weights sum to 1 (interpolation reproduces constants),
// indices stay inside the input, and the scale-factor rule differs from
// the size rule exactly where PyTorch's does.
func TestTaps(t *testing.T) {
	for _, m := range []Mode{Nearest, Linear, Cubic} {
		for _, ac := range []bool{false, true} {
			if m == Nearest && ac {
				continue
			}
			for _, sz := range [][2]int{{1, 1}, {1, 5}, {5, 1}, {7, 13}, {13, 7}, {4, 8}, {9, 9}} {
				for _, double := range []bool{false, true} {
					a := Axis{In: sz[0], Out: sz[1], Mode: m, AlignCorners: ac, Double: double}
					taps := Compute(a)
					for o := range a.Out {
						var sum float64
						for k := range taps.Index {
							if i := taps.Index[k][o]; i < 0 || int(i) >= a.In {
								t.Fatalf("%+v: output %d reads %d", a, o, i)
							}
							sum += taps.Weight[k][o]
						}
						if math.Abs(sum-1) > 1e-6 {
							t.Fatalf("%+v: output %d weights sum to %v", a, o, sum)
						}
					}
				}
			}
		}
	}
}

// Nearest is exact for out = in and out = 2·in, and otherwise floors
// dst·scale in float32 with scale = 1/scale_factor when one is given:
// in = 5, scale factor 1.7 gives out 8 and reads floor(o/1.7), where the
// size rule (5/8) would read floor(o·0.625).
func TestNearestScaleRule(t *testing.T) {
	bySize := Compute(Axis{In: 5, Out: 8, Mode: Nearest}).Index[0]
	byScale := Compute(Axis{In: 5, Out: 8, Mode: Nearest, Scale: 1.7}).Index[0]
	wantSize := []int32{0, 0, 1, 1, 2, 3, 3, 4}  // floor(o·0.625)
	wantScale := []int32{0, 0, 1, 1, 2, 2, 3, 4} // floor(o/1.7)
	for o := range 8 {
		if bySize[o] != wantSize[o] || byScale[o] != wantScale[o] {
			t.Fatalf("size rule %v (want %v), scale rule %v (want %v)", bySize, wantSize, byScale, wantScale)
		}
	}
	double := Compute(Axis{In: 3, Out: 6, Mode: Nearest}).Index[0]
	for o, i := range double {
		if int(i) != o/2 {
			t.Fatalf("out = 2·in: %v", double)
		}
	}
}

func TestResolveOutputSizes(t *testing.T) {
	axes, err := Resolve([]int{1, 2, 5, 6}, nil, []float64{1.7, 0.5}, "bilinear", false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if axes[0].Out != 8 || axes[1].Out != 3 || axes[0].Scale != 1.7 {
		t.Fatalf("%+v", axes)
	}
	axes, err = Resolve([]int{1, 2, 5, 6}, nil, []float64{1.7}, "bilinear", false, true, false)
	if err != nil || axes[0].Scale != 0 || axes[1].Out != 10 {
		t.Fatalf("recompute: %+v %v", axes, err)
	}
}
