package investigator

import (
	"context"

	"github.com/errata-dev/errata/consumers/investigator/fetchurl"
	"github.com/errata-dev/errata/consumers/investigator/images"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/events"
)

// Images adapts an images.Downloader to the worker's ImageStore.
type Images struct{ D *images.Downloader }

// Download implements ImageStore.
func (a Images) Download(ctx context.Context, urls []string) ([]events.SnapshotImageV1, []events.SkippedImageV1) {
	got, skipped := a.D.Fetch(ctx, urls)
	out := make([]events.SnapshotImageV1, 0, len(got))
	for _, im := range got {
		out = append(out, events.SnapshotImageV1{SourceURL: im.SourceURL, SHA256: im.SHA256, MediaType: im.MediaType,
			Bytes: im.Bytes, BlobKey: im.BlobKey, Placeholder: -1, TextOffset: -1})
	}
	sk := make([]events.SkippedImageV1, 0, len(skipped))
	for _, s := range skipped {
		sk = append(sk, events.SkippedImageV1{URL: s.URL, Reason: s.Reason})
	}
	return out, sk
}

// Load implements ImageStore.
func (a Images) Load(ctx context.Context, im events.SnapshotImageV1) ([]byte, error) {
	return a.D.Load(ctx, images.Image{SourceURL: im.SourceURL, SHA256: im.SHA256, MediaType: im.MediaType,
		Bytes: im.Bytes, BlobKey: im.BlobKey})
}

// FetchURL adapts a fetchurl.Fetcher to the worker's URLFetcher.
type FetchURL struct{ F *fetchurl.Fetcher }

// Tool implements URLFetcher.
func (a FetchURL) Tool() llm.Tool { return a.F.Tool() }

// Output implements URLFetcher.
func (a FetchURL) Output(ctx context.Context, url string) string {
	return a.F.Fetch(ctx, url).ToolOutput()
}
