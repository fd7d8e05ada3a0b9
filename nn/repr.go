package nn

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/graph"
)

// The printed forms of this package's layers: each ExtraRepr is
// PyTorch's extra_repr for the same layer, and each String is Format.

// ExtraRepr is "in_features=…, out_features=…, bias=…".
func (l *Linear) ExtraRepr() string {
	s := l.Weight.Shape()
	return fmt.Sprintf("in_features=%d, out_features=%d, bias=%s", s[1], s[0], pyBool(l.Bias != nil))
}

func (l *Linear) String() string { return Format(l) }

// ExtraRepr is "in, out, kernel_size=…, stride=…" and the options that
// differ from PyTorch's defaults.
func (c *Conv2d) ExtraRepr() string {
	o := c.Options.Resolved()
	s := c.Weight.Shape()
	return convRepr(s[1]*o.Groups, s[0], [2]int{s[2], s[3]}, o.Stride, o.Padding, o.Dilation, [2]int{}, o.Groups, c.Bias != nil)
}

func (c *Conv2d) String() string { return Format(c) }

// ExtraRepr is Conv2d's, with output_padding when it is not 0.
func (c *ConvTranspose2d) ExtraRepr() string {
	o := c.Options.Resolved()
	s := c.Weight.Shape()
	return convRepr(s[0], s[1]*o.Groups, [2]int{s[2], s[3]}, o.Stride, o.Padding, o.Dilation, o.OutputPadding, o.Groups, c.Bias != nil)
}

func (c *ConvTranspose2d) String() string { return Format(c) }

// convRepr is torch's _ConvNd.extra_repr.
func convRepr(in, out int, kernel, stride, padding, dilation, outputPadding [2]int, groups int, bias bool) string {
	s := fmt.Sprintf("%d, %d, kernel_size=%s, stride=%s", in, out, pyPair(kernel), pyPair(stride))
	if padding != [2]int{} {
		s += ", padding=" + pyPair(padding)
	}
	if dilation != [2]int{1, 1} {
		s += ", dilation=" + pyPair(dilation)
	}
	if outputPadding != [2]int{} {
		s += ", output_padding=" + pyPair(outputPadding)
	}
	if groups != 1 {
		s += ", groups=" + strconv.Itoa(groups)
	}
	if !bias {
		s += ", bias=False"
	}
	return s
}

// ExtraRepr is "kernel_size=…, stride=…, padding=…, dilation=…,
// ceil_mode=…".
func (p *MaxPool2d) ExtraRepr() string {
	o := p.Options.Resolved()
	return fmt.Sprintf("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s",
		pyIntOrPair(o.Kernel), pyIntOrPair(o.Stride), pyIntOrPair(o.Padding), pyIntOrPair(o.Dilation), pyBool(o.CeilMode))
}

func (p *MaxPool2d) String() string { return Format(p) }

// ExtraRepr is "kernel_size=…, stride=…, padding=…".
func (p *AvgPool2d) ExtraRepr() string {
	o := p.Options.Resolved()
	return fmt.Sprintf("kernel_size=%s, stride=%s, padding=%s", pyIntOrPair(o.Kernel), pyIntOrPair(o.Stride), pyIntOrPair(o.Padding))
}

func (p *AvgPool2d) String() string { return Format(p) }

// ExtraRepr is "output_size=…".
func (p *AdaptiveAvgPool2d) ExtraRepr() string {
	return "output_size=" + pyIntOrPair([2]int{p.H, p.W})
}

func (p *AdaptiveAvgPool2d) String() string { return Format(p) }

// ExtraRepr is "num_embeddings, embedding_dim".
func (e *Embedding) ExtraRepr() string {
	s := e.Weight.Shape()
	return fmt.Sprintf("%d, %d", s[0], s[1])
}

func (e *Embedding) String() string { return Format(e) }

// ExtraRepr is "start_dim=…, end_dim=…".
func (f *Flatten) ExtraRepr() string { return fmt.Sprintf("start_dim=%d, end_dim=%d", f.Start, f.End) }

func (f *Flatten) String() string { return Format(f) }

// ExtraRepr is "p=…, inplace=False".
func (d *Dropout) ExtraRepr() string { return "p=" + pyFloat(d.P) + ", inplace=False" }

func (d *Dropout) String() string { return Format(d) }

// TypeName is BatchNorm1d or BatchNorm2d, as constructed.
func (b *BatchNorm) TypeName() string {
	if b.op == "" {
		return "BatchNorm"
	}
	return b.op
}

// ExtraRepr is "num_features, eps=…, momentum=…, affine=…,
// track_running_stats=…".
func (b *BatchNorm) ExtraRepr() string {
	c := 0
	for _, v := range []*graph.Value{b.Weight, b.RunningMean} {
		if v != nil {
			c = v.Shape()[0]
			break
		}
	}
	return fmt.Sprintf("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s",
		c, pyFloat(b.Eps), pyOptionalFloat(b.Momentum), pyBool(b.Weight != nil), pyBool(b.RunningMean != nil))
}

func (b *BatchNorm) String() string { return Format(b) }

// ExtraRepr is "(normalized_shape,), eps=…, elementwise_affine=…".
func (l *LayerNorm) ExtraRepr() string {
	dims := make([]string, len(l.Shape))
	for i, d := range l.Shape {
		dims[i] = strconv.Itoa(d)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(dims) == 1 {
		tuple += ","
	}
	return fmt.Sprintf("%s), eps=%s, elementwise_affine=%s", tuple, pyFloat(l.Eps), pyBool(l.Weight != nil))
}

func (l *LayerNorm) String() string { return Format(l) }

// Children names the modules by position: "0", "1", ….
func (s *Sequential) Children() []Child {
	out := make([]Child, len(s.Modules))
	for i, m := range s.Modules {
		out[i] = Child{Name: strconv.Itoa(i), Module: m}
	}
	return out
}

func (s *Sequential) String() string { return Format(s) }

// Children is the output projection, "out_proj", as PyTorch's.
func (m *MultiHeadAttention) Children() []Child {
	return []Child{{Name: "out_proj", Module: m.OutProj}}
}

func (m *MultiHeadAttention) String() string { return Format(m) }

func (r ReLU) String() string    { return Format(r) }
func (r Tanh) String() string    { return Format(r) }
func (r Sigmoid) String() string { return Format(r) }
func (r SiLU) String() string    { return Format(r) }

// ExtraRepr is "approximate='none'" or "approximate='tanh'".
func (g GELU) ExtraRepr() string {
	if g.Approximate {
		return "approximate='tanh'"
	}
	return "approximate='none'"
}

func (g GELU) String() string { return Format(g) }

// ExtraRepr is "negative_slope=…".
func (l LeakyReLU) ExtraRepr() string { return "negative_slope=" + pyFloat(l.Alpha) }

func (l LeakyReLU) String() string { return Format(l) }
