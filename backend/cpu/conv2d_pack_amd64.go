package cpu

import "unsafe"

// convPackRowsAVX2 is convPackRowsAsm in assembly (conv2d_pack_amd64.s):
// each segment of each row is a plain or masked load and a store per 32
// bytes of the panel.
//
//go:noescape
func convPackRowsAVX2(panel, src unsafe.Pointer, rows *convRow, nrows int, segs *convSeg, nsegs, h, wd, shift, rowBytes, stride int, inside bool)

func init() {
	if hasSIMD {
		convPackRowsAsm = func(panel, src unsafe.Pointer, rows []convRow, segs []convSeg, h, wd, shift, rowBytes, stride int, inside bool) bool {
			if rowBytes%32 != 0 || rowBytes > 128/stride || stride > 2 {
				return false
			}
			convPackRowsAVX2(panel, src, &rows[0], len(rows), &segs[0], len(segs), h, wd, shift, rowBytes, stride, inside)
			return true
		}
	}
}
