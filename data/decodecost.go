package data

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
)

// BytesPerMaxPixel sets the decoded-bytes limit from the pixel limit: an
// image may decode to at most maxPixels × BytesPerMaxPixel bytes (an 8-bit
// RGBA image at the pixel limit, 200 MB at the 50 MP default). A 16-bit
// RGBA PNG decodes to 8 bytes a pixel and a progressive JPEG keeps 4 bytes
// of coefficients per sample besides its pixels, so the pixel count alone
// does not bound the memory of a decode.
const BytesPerMaxPixel = 4

// MaxDecodedBytes is the decoded-bytes limit that goes with maxPixels (0 =
// DefaultMaxPixels).
func MaxDecodedBytes(maxPixels int64) int64 {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	return maxPixels * BytesPerMaxPixel
}

// DecodedTooLargeError refuses an image whose header claims a decode of
// more bytes than the limit (MaxDecodedBytes of the pixel limit), before
// anything is decoded.
type DecodedTooLargeError struct {
	Path          string
	Format        string
	Width, Height int
	Bytes, Limit  int64
}

func (e *DecodedTooLargeError) Error() string {
	return fmt.Sprintf("image %s is a %dx%d %s that decodes to %d bytes, over the limit of %d bytes (%d × data.max_pixels; refused before decoding)",
		e.Path, e.Width, e.Height, e.Format, e.Bytes, e.Limit, BytesPerMaxPixel)
}

// ImplausibleSizeError refuses an image whose header claims more pixels
// than its file's bytes can hold compressed (a decompression bomb's header
// on little or no data): the decoder would allocate the image before
// finding the data missing.
type ImplausibleSizeError struct {
	Path          string
	Format        string
	Width, Height int
	FileBytes     int64 // the file's size
	MinBytes      int64 // the least a valid file of this size and colour model needs
}

func (e *ImplausibleSizeError) Error() string {
	return fmt.Sprintf("image %s: its %s header claims %dx%d pixels, which need at least %d bytes compressed, but the file has %d (corrupt or a decompression bomb; refused before decoding)",
		e.Path, e.Format, e.Width, e.Height, e.MinBytes, e.FileBytes)
}

// Header is what CheckEncoded read from an encoded image.
type Header struct {
	Config image.Config
	Format string // "png", "jpeg" or "gif"
	// Decoded is the memory the decoder allocates for the image (its pixels
	// and, for a progressive JPEG, its coefficients), in bytes.
	Decoded int64
	// Cost bounds what decoding it and converting it to CHW uint8 holds at
	// once: the file, Decoded, and three bytes a pixel. It is what a decode
	// takes from a Budget.
	Cost int64
}

// CheckEncoded reads the header of the encoded image b (PNG, JPEG or GIF)
// and refuses, before any pixel is decoded:
//   - more than maxPixels pixels (0 = DefaultMaxPixels): *ImageTooLargeError;
//   - a decode of more than MaxDecodedBytes(maxPixels) bytes, from the
//     colour model and bit depth: *DecodedTooLargeError;
//   - a size that len(b) bytes cannot encode (deflate expands at most
//     1032:1, a JPEG spends at least one bit per MCU, a GIF's LZW code of
//     at least 3 bits yields at most 4096 pixels of its first frame):
//     *ImplausibleSizeError.
//
// name is used in the errors.
func CheckEncoded(name string, b []byte, maxPixels int64) (Header, error) {
	return checkEncoded(name, b, int64(len(b)), maxPixels)
}

// checkEncoded is CheckEncoded on the first bytes (head) of a file of size
// bytes.
func checkEncoded(name string, b []byte, size, maxPixels int64) (Header, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return Header{}, fmt.Errorf("decode %s: %w", name, err)
	}
	if err := checkPixels(name, cfg, maxPixels); err != nil {
		return Header{}, err
	}
	w, h := int64(cfg.Width), int64(cfg.Height)
	decoded, minBytes := w*h*8, int64(0) // unknown formats: the widest model
	switch format {
	case "png":
		trns, interlaced := pngChunks(b)
		bpp, minBits := pngModel(cfg.ColorModel, trns)
		decoded = w * h * bpp
		if interlaced {
			decoded += decoded / 2 // Adam7: the image and its largest pass, half of it
		}
		// Filtered rows: one filter byte, then the pixels at their least
		// bit depth; deflate expands at most 1032:1 (plus one literal).
		raw := h * (1 + (w*minBits+7)/8)
		minBytes = (raw - 258 + 1031) / 1032
	case "jpeg":
		fr := jpegFrameOf(b)
		// The planes are padded to whole MCUs, at most one MCU more a row
		// and column: negligible where a limit bites, so left out.
		planes := int64(fr.comps) * w * h
		decoded = planes
		if fr.progressive {
			decoded += 4 * planes // one int32 coefficient a sample
		}
		if fr.comps == 4 {
			decoded += 4 * w * h // the CMYK image converted from the planes
		}
		mcus := ceilDiv(w, 8*int64(fr.hmax)) * ceilDiv(h, 8*int64(fr.vmax))
		minBytes = (mcus + 7) / 8
	case "gif":
		decoded = w * h // one paletted frame, within the logical screen
		if fw, fh, ok := gifFirstFrame(b); ok {
			decoded = fw * fh
			minBytes = ceilDiv(fw*fh*3, 8*4096)
		}
	}
	if limit := MaxDecodedBytes(maxPixels); decoded > limit {
		return Header{}, &DecodedTooLargeError{Path: name, Format: format, Width: cfg.Width, Height: cfg.Height, Bytes: decoded, Limit: limit}
	}
	if size < minBytes {
		return Header{}, &ImplausibleSizeError{Path: name, Format: format, Width: cfg.Width, Height: cfg.Height, FileBytes: size, MinBytes: minBytes}
	}
	return Header{Config: cfg, Format: format, Decoded: decoded, Cost: size + decoded + 3*w*h}, nil
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// pngModel returns the bytes a pixel of image/png's decoded image takes for
// a header's colour model (grey and truecolour with a tRNS chunk decode to
// NRGBA or NRGBA64), and the least bits a pixel of that model can be stored
// in (1-bit grey and palettes, 8-bit grey+alpha, …).
func pngModel(m color.Model, trns bool) (bytesPerPixel, minBits int64) {
	switch m {
	case color.GrayModel:
		if trns {
			return 4, 1
		}
		return 1, 1
	case color.Gray16Model:
		if trns {
			return 8, 16
		}
		return 2, 16
	case color.RGBAModel:
		return 4, 24
	case color.NRGBAModel:
		return 4, 16 // grey+alpha 8-bit
	case color.RGBA64Model:
		return 8, 48
	case color.NRGBA64Model:
		return 8, 32 // grey+alpha 16-bit
	}
	if _, ok := m.(color.Palette); ok {
		return 1, 1
	}
	return 8, 1
}

// pngChunks walks a PNG's chunks up to the first IDAT and reports whether a
// tRNS chunk precedes it and whether IHDR says interlaced; where the bytes
// end before IDAT it assumes both, which only makes the checks stricter.
func pngChunks(b []byte) (trns, interlaced bool) {
	const sig = 8
	if len(b) < sig+8+13 {
		return true, true
	}
	interlaced = b[sig+8+12] != 0
	for i := sig; i+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[i:]))
		switch string(b[i+4 : i+8]) {
		case "tRNS":
			return true, interlaced
		case "IDAT":
			return false, interlaced
		}
		if n < 0 || n > len(b) {
			break
		}
		i += 12 + n
	}
	return true, interlaced
}

// jpegFrame is what the start-of-frame segment says: component count,
// largest sampling factors, progressive or not.
type jpegFrame struct {
	comps, hmax, vmax int
	progressive       bool
}

// jpegFrameOf reads the SOF segment of a JPEG; for one it cannot find it
// assumes the costliest frame image/jpeg would decode (4 components,
// sampling 4×4, progressive), which only makes the checks stricter.
func jpegFrameOf(b []byte) jpegFrame {
	worst := jpegFrame{comps: 4, hmax: 4, vmax: 4, progressive: true}
	i := 2 // after SOI
	for i+4 <= len(b) {
		if b[i] != 0xff {
			return worst
		}
		m := b[i+1]
		if m == 0xff { // fill byte
			i++
			continue
		}
		if m == 0x01 || (m >= 0xd0 && m <= 0xd8) { // TEM, RSTn, SOI: no length
			i += 2
			continue
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		isSOF := m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc
		if isSOF {
			seg := b[i+4 : min(len(b), i+2+n)]
			if len(seg) < 6 {
				return worst
			}
			f := jpegFrame{comps: int(seg[5]), hmax: 1, vmax: 1, progressive: m == 0xc2 || m == 0xc6 || m == 0xca || m == 0xce}
			if f.comps < 1 || len(seg) < 6+3*f.comps {
				return worst
			}
			for c := 0; c < f.comps; c++ {
				hv := seg[6+3*c+1]
				f.hmax = max(f.hmax, int(hv>>4))
				f.vmax = max(f.vmax, int(hv&15))
			}
			f.hmax, f.vmax = min(f.hmax, 4), min(f.vmax, 4)
			return f
		}
		if m == 0xda || n < 2 { // SOS before SOF, or a broken length
			return worst
		}
		i += 2 + n
	}
	return worst
}

// gifFirstFrame returns the size of a GIF's first frame (the one
// image/gif decodes) from its image descriptor; ok is false when b ends
// before it (the decoder then allocates nothing) or is malformed.
func gifFirstFrame(b []byte) (w, h int64, ok bool) {
	const screen = 13 // header and logical screen descriptor
	if len(b) < screen {
		return 0, 0, false
	}
	i := screen
	if flags := b[10]; flags&0x80 != 0 {
		i += 3 << (flags&7 + 1) // global colour table
	}
	for i < len(b) {
		switch b[i] {
		case 0x2c: // image descriptor: left, top, width, height (little-endian)
			if i+9 > len(b) {
				return 0, 0, false
			}
			w = int64(binary.LittleEndian.Uint16(b[i+5:]))
			h = int64(binary.LittleEndian.Uint16(b[i+7:]))
			return w, h, true
		case 0x21: // extension: label, then data sub-blocks up to a zero length
			i += 2
			for i < len(b) && b[i] != 0 {
				i += 1 + int(b[i])
			}
			i++
		default:
			return 0, 0, false
		}
	}
	return 0, 0, false
}
