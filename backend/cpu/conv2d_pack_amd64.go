package cpu

import "unsafe"

// convPackRowsAVX2 is convPackRows in assembly (conv2d_pack_amd64.s): each
// segment of each row is one masked load and one store per 32 bytes.
//
//go:noescape
func convPackRowsAVX2(panel, src unsafe.Pointer, rows *convRow, nrows int, segs *convSeg, nsegs, h, wd, shift, rowBytes int)

// convPackRows2AVX2 is convPackRowsAVX2 for a stride of 2 along the rows.
//
//go:noescape
func convPackRows2AVX2(panel, src unsafe.Pointer, rows *convRow, nrows int, segs *convSeg, nsegs, h, wd, shift, rowBytes int)

// convPackPlainAVX2 is both for a panel whose segments are all plain
// and inside the input.
//
//go:noescape
func convPackPlainAVX2(panel, src unsafe.Pointer, rows *convRow, nrows int, segs *convSeg, nsegs, shift, stride, rowBytes int)

func init() {
	if hasSIMD {
		convPackRowsAsm = func(panel, src unsafe.Pointer, rows []convRow, segs []convSeg, h, wd, shift, rowBytes, stride int, plain bool) bool {
			switch {
			case plain && (stride == 1 || stride == 2 && rowBytes <= 64) && rowBytes%32 == 0 && rowBytes <= 128:
				convPackPlainAVX2(panel, src, &rows[0], len(rows), &segs[0], len(segs), shift, stride, rowBytes)
			case stride == 1 && rowBytes%32 == 0 && rowBytes <= 128:
				convPackRowsAVX2(panel, src, &rows[0], len(rows), &segs[0], len(segs), h, wd, shift, rowBytes)
			case stride == 2 && rowBytes%32 == 0 && rowBytes <= 64:
				convPackRows2AVX2(panel, src, &rows[0], len(rows), &segs[0], len(segs), h, wd, shift, rowBytes)
			default:
				return false
			}
			return true
		}
	}
}
