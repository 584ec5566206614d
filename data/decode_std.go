//go:build !(jpegturbo && cgo)

package data

// jpegDecoderName names the JPEG decoder this binary was built with.
const jpegDecoderName = "image/jpeg"
