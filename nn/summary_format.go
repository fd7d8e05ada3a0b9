package nn

import (
	"fmt"
	"strconv"
	"strings"
)

// formatSummary lays out a ModelSummary as torchinfo does: the module
// tree with its output shapes and own parameter counts, then the totals.
//
//	Layer (type)         Output Shape  Param #
//	==========================================
//	Sequential           [2, 10]            --
//	├─(0): Linear        [2, 512]      401,920
//	…
func formatSummary(s *ModelSummary) string {
	names := make([]string, len(s.Rows))
	shapes := make([]string, len(s.Rows))
	params := make([]string, len(s.Rows))
	wName, wShape, wParams := len("Layer (type)"), len("Output Shape"), len("Param #")
	for i, r := range s.Rows {
		names[i] = treePrefix(s.Rows, i) + r.Type
		if r.Depth > 0 {
			names[i] = treePrefix(s.Rows, i) + "(" + r.Name + "): " + r.Type
		}
		shapes[i] = "--"
		if r.OutputShape != nil {
			shapes[i] = shapeList(r.OutputShape)
		}
		params[i] = "--"
		if r.Params > 0 {
			params[i] = thousands(r.Params)
		}
		wName = max(wName, runeLen(names[i]))
		wShape = max(wShape, len(shapes[i]))
		wParams = max(wParams, len(params[i]))
	}
	width := wName + 2 + wShape + 2 + wParams
	var b strings.Builder
	rule := strings.Repeat("=", width) + "\n"
	row := func(name, shape, param string) {
		b.WriteString(name + strings.Repeat(" ", wName-runeLen(name)+2))
		b.WriteString(shape + strings.Repeat(" ", wShape-len(shape)+2))
		b.WriteString(strings.Repeat(" ", wParams-len(param)) + param + "\n")
	}
	b.WriteString(rule)
	row("Layer (type)", "Output Shape", "Param #")
	b.WriteString(rule)
	for i := range s.Rows {
		row(names[i], shapes[i], params[i])
	}
	b.WriteString(rule)
	fmt.Fprintf(&b, "Input shape: %s\n", shapeList(s.InputShape))
	fmt.Fprintf(&b, "Total params: %s\n", thousands(s.Params))
	fmt.Fprintf(&b, "Trainable params: %s\n", thousands(s.Params))
	fmt.Fprintf(&b, "Non-trainable params (buffers): %s\n", thousands(s.Buffers))
	fmt.Fprintf(&b, "Params size: %s\n", byteSize(s.ParamBytes))
	fmt.Fprintf(&b, "Buffers size: %s\n", byteSize(s.BufferBytes))
	b.WriteString(rule)
	return b.String()
}

// treePrefix draws row i's place in the tree: a bar for each ancestor
// that has later siblings, then ├─ or └─.
func treePrefix(rows []SummaryRow, i int) string {
	d := rows[i].Depth
	if d == 0 {
		return ""
	}
	var b strings.Builder
	for level := 1; level < d; level++ {
		if hasLaterSibling(rows, ancestor(rows, i, level)) {
			b.WriteString("│ ")
		} else {
			b.WriteString("  ")
		}
	}
	if hasLaterSibling(rows, i) {
		b.WriteString("├─")
	} else {
		b.WriteString("└─")
	}
	return b.String()
}

// ancestor is the index of row i's ancestor at depth level.
func ancestor(rows []SummaryRow, i, level int) int {
	for j := i; j >= 0; j-- {
		if rows[j].Depth == level {
			return j
		}
	}
	return 0
}

func hasLaterSibling(rows []SummaryRow, i int) bool {
	for j := i + 1; j < len(rows); j++ {
		switch {
		case rows[j].Depth == rows[i].Depth:
			return true
		case rows[j].Depth < rows[i].Depth:
			return false
		}
	}
	return false
}

func runeLen(s string) int { return len([]rune(s)) }

func shapeList(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// thousands writes n with comma separators, as torchinfo and Keras do.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// byteSize writes a size in binary units.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, suffix := float64(n), []string{"KiB", "MiB", "GiB", "TiB"}
	i := -1
	for v >= unit && i < len(suffix)-1 {
		v /= unit
		i++
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " " + suffix[i]
}
