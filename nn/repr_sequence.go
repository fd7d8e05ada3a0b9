package nn

import (
	"fmt"
	"strconv"
	"strings"
)

// ExtraRepr is "in, out, kernel_size=(k,), stride=(s,)" and the options
// that differ from PyTorch's defaults, as torch's Conv1d.
func (c *Conv1d) ExtraRepr() string {
	s := c.Weight.Shape()
	groups := max(c.Options.Groups, 1)
	out := fmt.Sprintf("%d, %d, kernel_size=(%d,), stride=(%d,)", s[1]*groups, s[0], s[2], max(c.Options.Stride, 1))
	if c.Options.Padding != 0 {
		out += fmt.Sprintf(", padding=(%d,)", c.Options.Padding)
	}
	if d := max(c.Options.Dilation, 1); d != 1 {
		out += fmt.Sprintf(", dilation=(%d,)", d)
	}
	if groups != 1 {
		out += ", groups=" + strconv.Itoa(groups)
	}
	if c.Bias == nil {
		out += ", bias=False"
	}
	return out
}

func (c *Conv1d) String() string { return Format(c) }

// ExtraRepr is "num_groups, num_channels, eps=…, affine=…".
func (g *GroupNorm) ExtraRepr() string {
	return fmt.Sprintf("%d, %d, eps=%s, affine=%s", g.NumGroups, g.NumChannels, pyFloat(g.Eps), pyBool(g.Weight != nil))
}

func (g *GroupNorm) String() string { return Format(g) }

// ExtraRepr is "(normalized_shape,), eps=…, elementwise_affine=…", as
// later PyTorch's RMSNorm (eps=None for the dtype's epsilon).
func (r *RMSNorm) ExtraRepr() string {
	dims := make([]string, len(r.Shape))
	for i, d := range r.Shape {
		dims[i] = strconv.Itoa(d)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(dims) == 1 {
		tuple += ","
	}
	eps := "None"
	if r.Eps != 0 {
		eps = pyFloat(r.Eps)
	}
	return fmt.Sprintf("%s), eps=%s, elementwise_affine=%s", tuple, eps, pyBool(r.Weight != nil))
}

func (r *RMSNorm) String() string { return Format(r) }

// rnnRepr is torch's RNNBase.extra_repr: the sizes, then each option
// that is not its default.
func rnnRepr(input, hidden int, o RNNOptions) string {
	s := fmt.Sprintf("%d, %d", input, hidden)
	if n := max(o.NumLayers, 1); n != 1 {
		s += ", num_layers=" + strconv.Itoa(n)
	}
	if o.NoBias {
		s += ", bias=False"
	}
	if o.BatchFirst {
		s += ", batch_first=True"
	}
	if o.Dropout != 0 {
		s += ", dropout=" + pyFloat(o.Dropout)
	}
	if o.Bidirectional {
		s += ", bidirectional=True"
	}
	return s
}

// ExtraRepr is "input_size, hidden_size" and the options that differ
// from PyTorch's defaults.
func (l *LSTM) ExtraRepr() string { return rnnRepr(l.InputSize, l.HiddenSize, l.Options) }

// Children is none: an LSTM prints as one line, as PyTorch's.
func (l *LSTM) Children() []Child { return nil }

func (l *LSTM) String() string { return Format(l) }

// ExtraRepr is LSTM's.
func (g *GRU) ExtraRepr() string { return rnnRepr(g.InputSize, g.HiddenSize, g.Options) }

// Children is none, as LSTM's.
func (g *GRU) Children() []Child { return nil }

func (g *GRU) String() string { return Format(g) }

// Children are Base's without the activation when it is ReLU{} or GELU{}:
// PyTorch takes those as activation="relu"/"gelu" and keeps a function,
// not a child module, so its printed form does not list them.
func (l *TransformerEncoderLayer) Children() []Child {
	return withoutFunctionalActivation(l.Base.Children(), l.Activation)
}

// Children are as TransformerEncoderLayer's.
func (l *TransformerDecoderLayer) Children() []Child {
	return withoutFunctionalActivation(l.Base.Children(), l.Activation)
}

func withoutFunctionalActivation(children []Child, activation Module) []Child {
	switch activation {
	case ReLU{}, GELU{}:
	default:
		return children
	}
	out := children[:0:0]
	for _, c := range children {
		if c.Name != "activation" {
			out = append(out, c)
		}
	}
	return out
}
