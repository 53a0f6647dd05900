package images

import "bytes"

// Media types of the supported formats.
const (
	JPEG = "image/jpeg"
	PNG  = "image/png"
	GIF  = "image/gif"
	WebP = "image/webp"
)

// extensions are the file extensions of blob keys.
var extensions = map[string]string{JPEG: "jpg", PNG: "png", GIF: "gif", WebP: "webp"}

// Sniff returns the media type the leading bytes of data announce, or ""
// when data is none of JPEG, PNG, GIF or WebP. It looks at signatures
// only; it does not decode the image.
func Sniff(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return JPEG
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return GIF
	// RIFF, a 4-byte little-endian size, WEBP, then the first chunk's
	// fourcc (VP8, VP8L or VP8X).
	case len(data) >= 16 && bytes.HasPrefix(data, []byte("RIFF")) && string(data[8:15]) == "WEBPVP8":
		return WebP
	}
	return ""
}
