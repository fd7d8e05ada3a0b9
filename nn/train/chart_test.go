package train

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// svgSummary parses an SVG document with encoding/xml and returns the
// root element's name, its text nodes and the "d" of its paths.
func svgSummary(t *testing.T, doc []byte) (root string, texts, paths []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	inText := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the chart is well-formed XML")
		switch el := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local
			}
			inText = el.Name.Local == "text"
			if el.Name.Local == "path" {
				for _, a := range el.Attr {
					if a.Name.Local == "d" {
						paths = append(paths, a.Value)
					}
				}
			}
		case xml.CharData:
			if inText {
				texts = append(texts, strings.TrimSpace(string(el)))
			}
		case xml.EndElement:
			inText = false
		}
	}
	return root, texts, paths
}

func TestWriteSVG(t *testing.T) {
	h := &History{}
	for e := 1; e <= 5; e++ {
		m := map[string]float64{"loss": 1 / float64(e), "val_loss": 1.2 / float64(e), "val_accuracy": 0.5 + 0.08*float64(e)}
		if e == 3 {
			m["val_accuracy"] = math.NaN() // a gap, not a broken chart
		}
		h.Epochs = append(h.Epochs, Epoch{Epoch: e, Metrics: m})
	}
	var buf bytes.Buffer
	require.NoError(t, h.WriteSVG(&buf, 400, 300))
	if path := os.Getenv("WEBTENSOR_CHART_OUT"); path != "" {
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	root, texts, paths := svgSummary(t, buf.Bytes())
	require.Equal(t, "svg", root)
	require.Contains(t, texts, "loss")
	require.Contains(t, texts, "val_loss")
	require.Contains(t, texts, "epoch")
	require.NotContains(t, texts, "val_accuracy", "only the default series")
	// Each series is a polyline through its five epochs: a path of one
	// move and four line segments.
	lines := 0
	for _, d := range paths {
		if strings.Count(d, "M") == 1 && strings.Count(d, "L") == 4 {
			lines++
		}
	}
	require.GreaterOrEqual(t, lines, 2, "a line per series: %q", paths)

	buf.Reset()
	require.NoError(t, h.WriteSVG(&buf, 400, 300, "val_accuracy"))
	_, texts, _ = svgSummary(t, buf.Bytes())
	require.Contains(t, texts, "val_accuracy")

	require.ErrorContains(t, h.WriteSVG(io.Discard, 400, 300, "nope"), `"nope"`)
	require.ErrorContains(t, (&History{}).WriteSVG(io.Discard, 400, 300), "no epochs")
}
