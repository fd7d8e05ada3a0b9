// Package einsum parses Einstein-summation equations with PyTorch's
// grammar and lowers them onto a handful of primitive operations (permute,
// reshape, strided slice, sum, batched matrix product) that package tensor
// and package graph both provide. Keeping the planner here, apart from
// either executor, means the eager op and its differentiable twin cannot
// disagree about what an equation means or in which order operands are
// contracted.
//
// The grammar is torch.einsum's: subscripts are the letters a–z and A–Z,
// operands are separated by commas, "..." stands for the broadcast
// dimensions, an optional "->" names the output (without it the output is
// the ellipsis dimensions followed by the labels that occur exactly once,
// upper case before lower case). A label repeated within an operand takes
// a diagonal; labels that do not reach the output are summed; dimensions of
// size 1 broadcast against the label's size in other operands; ellipsis
// dimensions missing from an explicit output are summed.
//
// For three or more operands the contraction order is chosen greedily, as
// opt_einsum's "greedy" strategy: at each step the pair whose contraction
// shrinks the total size the most (ties: fewest multiply-adds) goes first.
package einsum

import (
	"fmt"
	"slices"
	"strings"
)

// numLetters is the number of letter labels; ellipsis dimensions get the
// labels from numLetters up, the leftmost broadcast dimension first.
const numLetters = 52

// Plan is a parsed equation checked against operand shapes, with its
// contraction order.
type Plan struct {
	Equation string
	// Inputs holds each operand's label per axis (ellipsis expanded).
	Inputs [][]int
	// Output is the result's label per axis.
	Output []int
	// Sizes maps each label to its (broadcast) size.
	Sizes map[int]int
	// Path is the contraction order in opt_einsum's convention: each step
	// contracts two positions of the current operand list, removes them and
	// appends the result at the end.
	Path [][2]int
}

// Error is a malformed equation or an equation that does not fit its
// operands; it names both.
type Error struct {
	Equation string
	Shapes   [][]int
	Msg      string
}

func (e *Error) Error() string {
	return fmt.Sprintf("equation %q with operand shapes %v: %s", e.Equation, e.Shapes, e.Msg)
}

func labelOf(c byte) (int, bool) {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A'), true
	case c >= 'a' && c <= 'z':
		return 26 + int(c-'a'), true
	}
	return 0, false
}

// LabelName returns the equation letter of a label, or "…k" for the k-th
// ellipsis dimension.
func LabelName(l int) string {
	switch {
	case l < 26:
		return string(rune('A' + l))
	case l < numLetters:
		return string(rune('a' + l - 26))
	}
	return fmt.Sprintf("…%d", l-numLetters)
}

// term is one side of the equation for one operand: its labels, with -1
// marking where the ellipsis stands.
type term struct {
	labels   []int
	ellipsis bool
}

const ellipsisMark = -1

func parseTerm(s string) (term, error) {
	var t term
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
		case c == '.':
			if !strings.HasPrefix(s[i:], "...") {
				return t, fmt.Errorf("a lone '.' in %q; an ellipsis is \"...\"", s)
			}
			if t.ellipsis {
				return t, fmt.Errorf("more than one ellipsis in %q", s)
			}
			t.ellipsis = true
			t.labels = append(t.labels, ellipsisMark)
			i += 2
		default:
			l, ok := labelOf(c)
			if !ok {
				return t, fmt.Errorf("invalid subscript %q in %q: subscripts are letters a-z and A-Z", c, s)
			}
			t.labels = append(t.labels, l)
		}
	}
	return t, nil
}

// Parse checks equation against the operands' shapes and plans it.
func Parse(equation string, shapes [][]int) (*Plan, error) {
	fail := func(format string, args ...any) (*Plan, error) {
		return nil, &Error{Equation: equation, Shapes: shapes, Msg: fmt.Sprintf(format, args...)}
	}
	lhs, rhs, explicit := strings.Cut(equation, "->")
	if strings.Contains(rhs, "->") {
		return fail("more than one \"->\"")
	}
	if strings.ContainsAny(rhs, ",") {
		return fail("the output may not contain ','")
	}
	parts := strings.Split(lhs, ",")
	if len(parts) != len(shapes) {
		return fail("%d operand terms for %d operands", len(parts), len(shapes))
	}
	if len(shapes) == 0 {
		return fail("no operands")
	}
	terms := make([]term, len(parts))
	ellipsisRank := 0
	for i, p := range parts {
		t, err := parseTerm(p)
		if err != nil {
			return fail("operand %d: %v", i, err)
		}
		named := len(t.labels)
		if t.ellipsis {
			named--
			if len(shapes[i]) < named {
				return fail("operand %d has %d dims, fewer than its %d subscripts", i, len(shapes[i]), named)
			}
			ellipsisRank = max(ellipsisRank, len(shapes[i])-named)
		} else if len(shapes[i]) != named {
			return fail("operand %d has %d dims but %d subscripts", i, len(shapes[i]), named)
		}
		terms[i] = t
	}
	p := &Plan{Equation: equation, Sizes: map[int]int{}}
	count := map[int]int{}
	// Expand the ellipses: an operand with e broadcast dims takes the
	// rightmost e of the ellipsis labels.
	for i, t := range terms {
		var labels []int
		named := len(t.labels)
		if t.ellipsis {
			named--
		}
		e := len(shapes[i]) - named
		for _, l := range t.labels {
			if l != ellipsisMark {
				labels = append(labels, l)
				continue
			}
			for k := ellipsisRank - e; k < ellipsisRank; k++ {
				labels = append(labels, numLetters+k)
			}
		}
		seen := map[int]bool{}
		for a, l := range labels {
			n := shapes[i][a]
			count[l]++ // every occurrence: "ii" alone is a trace
			if seen[l] {
				// A repeated label is a diagonal: its dims must agree exactly.
				if first := shapes[i][slices.Index(labels, l)]; first != n {
					return fail("subscript %s is repeated in operand %d with sizes %d and %d", LabelName(l), i, first, n)
				}
				continue
			}
			seen[l] = true
			if old, ok := p.Sizes[l]; ok && old != n && old != 1 && n != 1 {
				return fail("subscript %s has size %d in operand %d but %d elsewhere, which do not broadcast", LabelName(l), n, i, old)
			}
			if old, ok := p.Sizes[l]; !ok || old == 1 {
				p.Sizes[l] = n
			}
		}
		p.Inputs = append(p.Inputs, labels)
	}
	if explicit {
		t, err := parseTerm(rhs)
		if err != nil {
			return fail("output: %v", err)
		}
		seen := map[int]bool{}
		for _, l := range t.labels {
			if l == ellipsisMark {
				for k := range ellipsisRank {
					p.Output = append(p.Output, numLetters+k)
				}
				continue
			}
			if seen[l] {
				return fail("subscript %s appears more than once in the output", LabelName(l))
			}
			seen[l] = true
			if count[l] == 0 {
				return fail("output subscript %s does not appear in any operand", LabelName(l))
			}
			p.Output = append(p.Output, l)
		}
	} else {
		for k := range ellipsisRank {
			p.Output = append(p.Output, numLetters+k)
		}
		for l := range numLetters {
			if count[l] == 1 {
				p.Output = append(p.Output, l)
			}
		}
	}
	p.Path = greedyPath(p)
	return p, nil
}

// effective returns the unique labels of an operand as the executor holds
// them after its diagonals (and, given the shape, its broadcast squeezes),
// in first-seen order.
func (p *Plan) effective(labels []int, shape []int) []int {
	var out []int
	for a, l := range labels {
		if slices.Contains(out, l) {
			continue
		}
		if shape != nil && shape[a] == 1 && p.Sizes[l] != 1 {
			continue
		}
		out = append(out, l)
	}
	return out
}

// pairResult returns the labels kept when contracting a and b (those the
// output or the other remaining operands still need), the result's
// elements and the contraction's multiply-adds.
func (p *Plan) pairResult(a, b []int, others [][]int) (labels []int, size, flops int) {
	needed := func(l int) bool {
		if slices.Contains(p.Output, l) {
			return true
		}
		for _, o := range others {
			if slices.Contains(o, l) {
				return true
			}
		}
		return false
	}
	flops = 1
	size = 1
	all := append(slices.Clone(a), b...)
	var seen []int
	for _, l := range all {
		if slices.Contains(seen, l) {
			continue
		}
		seen = append(seen, l)
		flops *= p.Sizes[l]
		if needed(l) {
			labels = append(labels, l)
			size *= p.Sizes[l]
		}
	}
	return labels, size, flops
}

func (p *Plan) sizeOf(labels []int) int {
	n := 1
	for _, l := range labels {
		n *= p.Sizes[l]
	}
	return n
}

// greedyPath chooses the contraction order (opt_einsum's greedy: the pair
// that removes the most elements, ties broken by fewer multiply-adds and
// then by position, so the order is deterministic).
func greedyPath(p *Plan) [][2]int {
	ops := make([][]int, len(p.Inputs))
	for i, in := range p.Inputs {
		ops[i] = p.effective(in, nil)
	}
	var path [][2]int
	for len(ops) > 1 {
		best, bestCost, bestFlops := [2]int{}, 0, 0
		found := false
		for i := range ops {
			for j := i + 1; j < len(ops); j++ {
				var others [][]int
				for k := range ops {
					if k != i && k != j {
						others = append(others, ops[k])
					}
				}
				_, size, flops := p.pairResult(ops[i], ops[j], others)
				cost := size - p.sizeOf(ops[i]) - p.sizeOf(ops[j])
				if !found || cost < bestCost || cost == bestCost && flops < bestFlops {
					best, bestCost, bestFlops, found = [2]int{i, j}, cost, flops, true
				}
			}
		}
		i, j := best[0], best[1]
		var others [][]int
		for k := range ops {
			if k != i && k != j {
				others = append(others, ops[k])
			}
		}
		labels, _, _ := p.pairResult(ops[i], ops[j], others)
		ops = append(others, labels)
		path = append(path, best)
	}
	return path
}
