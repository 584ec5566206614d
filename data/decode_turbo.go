//go:build jpegturbo && cgo

package data

/*
#cgo pkg-config: libturbojpeg
#include <stdio.h>
#include <stdlib.h>
#include <turbojpeg.h>

// vit_decode_rgb decodes a JPEG into an interleaved RGB buffer of w*h*3
// bytes. It returns 0 on success, else -1 with the library's message
// copied into msg.
static int vit_decode_rgb(const unsigned char *buf, unsigned long size, unsigned char *dst, int w, int h, char *msg, int msglen) {
	tjhandle t = tjInitDecompress();
	if (t == NULL) {
		snprintf(msg, msglen, "%s", tjGetErrorStr2(NULL));
		return -1;
	}
	// A warning (a truncated or damaged scan) is an error, as in image/jpeg
	// and PIL without LOAD_TRUNCATED_IMAGES.
	int rc = tjDecompress2(t, buf, size, dst, w, 0, h, TJPF_RGB, TJFLAG_STOPONWARNING);
	if (rc != 0) {
		snprintf(msg, msglen, "%s", tjGetErrorStr2(t));
	}
	tjDestroy(t);
	return rc;
}

// vit_header reads a JPEG's size and colour space.
static int vit_header(const unsigned char *buf, unsigned long size, int *w, int *h, int *cs) {
	tjhandle t = tjInitDecompress();
	if (t == NULL) {
		return -1;
	}
	int subsamp;
	int rc = tjDecompressHeader3(t, buf, size, w, h, &subsamp, cs);
	tjDestroy(t);
	return rc;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

func init() { decodeJPEG = decodeJPEGTurbo }

// jpegDecoderName names the JPEG decoder this binary was built with.
const jpegDecoderName = "libjpeg-turbo"

// decodeJPEGTurbo decodes a JPEG with libjpeg-turbo (the library PIL and
// torchvision use: accurate integer IDCT, smooth chroma upsampling) into CHW
// uint8 with c channels. ok is false, with no error, for the colour spaces
// it leaves to the standard library (CMYK, YCCK) and for a header that does
// not give the size width×height that image.DecodeConfig read (and the
// pixel limit checked).
func decodeJPEGTurbo(b []byte, c, width, height int) (img Image, ok bool, err error) {
	if len(b) == 0 {
		return Image{}, false, nil
	}
	src := (*C.uchar)(unsafe.Pointer(&b[0]))
	var w, h, cs C.int
	if C.vit_header(src, C.ulong(len(b)), &w, &h, &cs) != 0 {
		return Image{}, false, nil // the standard library reports the error
	}
	if cs == C.TJCS_CMYK || cs == C.TJCS_YCCK || int(w) != width || int(h) != height {
		return Image{}, false, nil
	}
	W, H := int(w), int(h)
	rgb := getPix(W * H * 3)
	defer putPix(rgb)
	var msg [200]C.char
	if C.vit_decode_rgb(src, C.ulong(len(b)), (*C.uchar)(unsafe.Pointer(&rgb[0])), w, h, &msg[0], C.int(len(msg))) != 0 {
		return Image{}, false, fmt.Errorf("libjpeg-turbo: %s", C.GoString(&msg[0]))
	}
	hw := W * H
	img = Image{C: c, H: H, W: W, Pix: getPix(c * hw)}
	if c == 3 {
		R, G, B := img.Pix[:hw], img.Pix[hw:2*hw], img.Pix[2*hw:3*hw]
		for i := range R {
			R[i], G[i], B[i] = rgb[3*i], rgb[3*i+1], rgb[3*i+2]
		}
	} else {
		for i := range img.Pix {
			img.Pix[i] = lumaU8(rgb[3*i], rgb[3*i+1], rgb[3*i+2])
		}
	}
	return img, true, nil
}
