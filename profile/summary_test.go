package profile_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/profile"
)

// TestRowsByHand: rows of a hand-made profile against sums worked out by
// hand, and two long names that differ only past the table's cut stay
// two rows told apart by their keys.
func TestRowsByHand(t *testing.T) {
	long := strings.Repeat("fused 256 true false false 2 bind 0 ", 3)
	a, b := long+"variant a", long+"variant b"
	us := time.Microsecond
	p := &profile.Profile{Device: "test device", Clock: hal.ClockDevice, ClockNote: "made by hand", HasKernels: true,
		Kernels: []profile.Event{
			{Name: a, Dur: 10 * us}, {Name: "copy", Dur: 3 * us}, {Name: a, Dur: 30 * us},
			{Name: b, Dur: 50 * us}, {Name: "copy", Dur: 7 * us},
		}}
	rows := p.KernelRows()
	require.Len(t, rows, 3)
	assert.Equal(t, profile.Row{Name: b, Calls: 1, Total: 50 * us, Mean: 50 * us, Min: 50 * us, Max: 50 * us, Share: 0.5}, rows[0])
	assert.Equal(t, profile.Row{Name: a, Calls: 2, Total: 40 * us, Mean: 20 * us, Min: 10 * us, Max: 30 * us, Share: 0.4}, rows[1])
	assert.Equal(t, profile.Row{Name: "copy", Calls: 2, Total: 10 * us, Mean: 5 * us, Min: 3 * us, Max: 7 * us, Share: 0.1}, rows[2])
	assert.Equal(t, 100*us, p.TotalKernelTime())

	var buf bytes.Buffer
	require.NoError(t, p.WriteTable(&buf))
	text := buf.String()
	t.Log("\n" + text)
	assert.NotEqual(t, profile.Key(a), profile.Key(b))
	assert.Contains(t, text, "#"+profile.Key(a))
	assert.Contains(t, text, "#"+profile.Key(b))
	assert.Contains(t, text, "device clock: made by hand")
	assert.Regexp(t, `(?m)^Total +5 +100\.000us +100\.0%$`, text)
	assert.Regexp(t, `(?m)^copy +2 +10\.000us +5\.000us +3\.000us +7\.000us +10\.0%$`, text)
}
