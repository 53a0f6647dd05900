// Package images downloads the images of a post for an investigation and
// keeps them in the blob store, so the model can be shown the exact bytes
// that were investigated, again and again, from the recorded snapshot.
//
// Downloads go through the SSRF-safe client (image URLs come from the post,
// that is from untrusted input). The media type is taken from the bytes,
// never from the server's Content-Type: only JPEG, PNG, GIF and WebP are
// kept. Images are stored content-addressed under images/<sha256>.<ext>,
// so the same image found in several posts is stored once.
package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/errata-dev/errata/internal/blobstore"
	"github.com/errata-dev/errata/internal/httpsafe"
)

// Defaults of a Downloader.
const (
	DefaultMaxImages   = 10
	DefaultMaxBytes    = 20 << 20
	DefaultTimeout     = 30 * time.Second
	DefaultConcurrency = 4
)

// Options limit a Downloader; zero values take the defaults.
type Options struct {
	// MaxImages is the most distinct images Fetch keeps.
	MaxImages int
	// MaxBytes is the largest image accepted, in bytes.
	MaxBytes int64
	// Timeout bounds each download. The client's own total timeout applies
	// as well, so build it with at least this much.
	Timeout time.Duration
	// Concurrency is how many downloads run at once.
	Concurrency int
}

// Image is one stored image, as recorded in an investigation snapshot.
type Image struct {
	// SourceURL is the URL the image was downloaded from (the post's URL,
	// before redirects).
	SourceURL string `json:"source_url"`
	// SHA256 is the lower-case hex digest of the bytes.
	SHA256 string `json:"sha256"`
	// MediaType is sniffed from the bytes: image/jpeg, image/png,
	// image/gif or image/webp.
	MediaType string `json:"media_type"`
	Bytes     int64  `json:"bytes"`
	// BlobKey is where the bytes are stored: images/<sha256>.<ext>.
	BlobKey string `json:"blob_key"`
}

// Skipped is a URL that yielded no image, with the reason in plain words.
type Skipped struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
}

// ErrCorrupt means the stored bytes do not match the recorded digest or size.
var ErrCorrupt = errors.New("images: stored image does not match its digest")

// Downloader fetches images and stores them. It is safe for concurrent use.
type Downloader struct {
	client *httpsafe.Client
	store  blobstore.Store
	opts   Options
}

// NewDownloader returns a downloader that fetches with client and stores
// into store.
func NewDownloader(client *httpsafe.Client, store blobstore.Store, opts Options) *Downloader {
	if opts.MaxImages <= 0 {
		opts.MaxImages = DefaultMaxImages
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	return &Downloader{client: client, store: store, opts: opts}
}

// BlobKey is the store key of an image with the given digest and media
// type; it panics on a media type outside the four supported ones.
func BlobKey(sha256Hex, mediaType string) string {
	ext, ok := extensions[mediaType]
	if !ok {
		panic("images: no extension for media type " + mediaType)
	}
	return "images/" + sha256Hex + "." + ext
}

// download is the outcome of fetching one URL.
type download struct {
	data      []byte
	sum       string
	mediaType string
	err       string // why the URL yields no image
}

// Fetch downloads the images at urls, in order, and stores them. It keeps
// at most MaxImages distinct images: a URL seen before, or bytes identical
// to an earlier image, is skipped as a duplicate, and once the limit is
// reached the remaining URLs are skipped (downloads already started ahead
// are abandoned, no new ones begin). Every
// URL appears exactly once, in images or in skipped, and both lists follow
// the input order; the outcome does not depend on download timing.
//
// Failures are reasons in skipped, never errors. When ctx ends, the URLs
// not yet processed are skipped as canceled; check ctx.Err().
func (d *Downloader) Fetch(ctx context.Context, urls []string) (images []Image, skipped []Skipped) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Downloads start in input order, at most Concurrency ahead of the URL
	// being decided, and each reports on its own channel so results are
	// consumed in input order whatever order they finish in.
	results := make([]chan download, len(urls))
	seenURL := map[string]bool{}
	duplicateURL := make([]bool, len(urls))
	next := 0 // next index to start
	inFlight := 0
	start := func() {
		for next < len(urls) && inFlight < d.opts.Concurrency {
			i := next
			next++
			if seenURL[urls[i]] {
				duplicateURL[i] = true
				continue
			}
			seenURL[urls[i]] = true
			results[i] = make(chan download, 1)
			inFlight++
			go func() { results[i] <- d.download(ctx, urls[i]) }()
		}
	}

	firstURL := map[string]string{} // sha256 -> first URL with those bytes
	for i, u := range urls {
		if len(images) >= d.opts.MaxImages {
			skipped = append(skipped, Skipped{URL: u, Reason: fmt.Sprintf("limit of %d images reached", d.opts.MaxImages)})
			continue
		}
		start()
		if duplicateURL[i] {
			skipped = append(skipped, Skipped{URL: u, Reason: "duplicate URL"})
			continue
		}
		// start has launched i: every earlier download has been consumed,
		// so a slot was free.
		res := <-results[i]
		inFlight--
		switch {
		case ctx.Err() != nil:
			skipped = append(skipped, Skipped{URL: u, Reason: "canceled"})
		case res.err != "":
			skipped = append(skipped, Skipped{URL: u, Reason: res.err})
		case firstURL[res.sum] != "":
			skipped = append(skipped, Skipped{URL: u, Reason: "same image as " + firstURL[res.sum]})
		default:
			img := Image{
				SourceURL: u,
				SHA256:    res.sum,
				MediaType: res.mediaType,
				Bytes:     int64(len(res.data)),
				BlobKey:   BlobKey(res.sum, res.mediaType),
			}
			if err := d.save(ctx, img, res.data); err != nil {
				skipped = append(skipped, Skipped{URL: u, Reason: "could not store the image: " + err.Error()})
				continue
			}
			firstURL[res.sum] = u
			images = append(images, img)
		}
	}
	return images, skipped
}

// save stores the image unless an object with its key (its digest) is
// already there.
func (d *Downloader) save(ctx context.Context, img Image, data []byte) error {
	ok, err := d.store.Exists(ctx, img.BlobKey)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	return d.store.Put(ctx, img.BlobKey, data, img.MediaType)
}

// download fetches and checks one URL.
func (d *Downloader) download(ctx context.Context, rawURL string) download {
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	resp, err := d.client.Do(ctx, httpsafe.Request{
		URL:      rawURL,
		Header:   http.Header{"Accept": {"image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.1"}},
		MaxBytes: d.opts.MaxBytes,
	})
	switch {
	case errors.Is(err, httpsafe.ErrTooLarge):
		return download{err: fmt.Sprintf("larger than %d bytes", d.opts.MaxBytes)}
	case errors.Is(err, httpsafe.ErrTimeout):
		return download{err: "download timed out"}
	case err != nil:
		return download{err: "download failed: " + err.Error()}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return download{err: fmt.Sprintf("HTTP status %d", resp.StatusCode)}
	case len(resp.Body) == 0:
		return download{err: "empty response"}
	}
	mediaType := Sniff(resp.Body)
	if mediaType == "" {
		return download{err: "not a JPEG, PNG, GIF or WebP image"}
	}
	sum := sha256.Sum256(resp.Body)
	return download{data: resp.Body, sum: hex.EncodeToString(sum[:]), mediaType: mediaType}
}

// Load reads a recorded image back from the store and checks that the
// bytes are the ones recorded (digest and size).
func (d *Downloader) Load(ctx context.Context, img Image) ([]byte, error) {
	data, _, err := d.store.Get(ctx, img.BlobKey)
	if err != nil {
		return nil, fmt.Errorf("images: load %s: %w", img.BlobKey, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != img.SHA256 || int64(len(data)) != img.Bytes {
		return nil, fmt.Errorf("%w: %s holds %d bytes with sha256 %s, recorded %d bytes with sha256 %s",
			ErrCorrupt, img.BlobKey, len(data), got, img.Bytes, img.SHA256)
	}
	return data, nil
}
