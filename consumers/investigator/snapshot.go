package investigator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"

	"github.com/errata-dev/errata/consumers/investigator/textdiff"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/projections/serving"
)

// input returns the run's input snapshot, building and appending it first
// when the investigation has none. Every later attempt reads the recorded
// one, whatever the renderer or the read model say by then.
func (w *Worker) input(ctx context.Context, run runstate.Run) (events.InvestigationInputSnapshottedV1, string, error) {
	if run.InputEventID != "" {
		return w.Store.Input(ctx, run.InvestigationID)
	}
	src, err := w.Sources.Source(ctx, run.PostVersionID)
	if errors.Is(err, serving.ErrNotFound) {
		return events.InvestigationInputSnapshottedV1{}, "", attemptError{class: events.FailureTransient, kind: "version_unknown",
			msg: "the post version is not in the serving projection yet"}
	}
	if err != nil {
		return events.InvestigationInputSnapshottedV1{}, "", err
	}
	in, err := w.buildInput(ctx, run, src)
	if err != nil {
		return in, "", err
	}
	evs, err := w.Appender.AppendEvents(ctx, run.InvestigationID, &in)
	if err != nil {
		return in, "", err
	}
	return in, evs[0].ID, nil
}

// buildInput renders the version for the model: Markdown of its HTML (the
// server's fetch first), or its normalized text when it has no HTML; its
// images, downloaded and stored; and, when a prior complete SERVER_VERIFIED
// investigation of the post exists, the update basis.
func (w *Worker) buildInput(ctx context.Context, run runstate.Run, src serving.Source) (events.InvestigationInputSnapshottedV1, error) {
	in := events.InvestigationInputSnapshottedV1{
		InvestigationID: run.InvestigationID, PostID: run.PostID, PostVersionID: run.PostVersionID,
		Platform: src.Platform, URL: src.URL, Provenance: src.Provenance(),
		Text: src.Text, TextSHA256: sha256Hex(src.Text), WordCount: src.WordCount,
		Images: []events.SnapshotImageV1{}, SkippedImages: []events.SkippedImageV1{},
		ConfigurationID: run.ConfigurationID,
	}
	var md content.Markdown
	var err error
	for _, h := range []struct{ html, source string }{
		{src.ServerHTML, events.MarkdownSourceServerHTML}, {src.ClientHTML, events.MarkdownSourceClientHTML},
	} {
		if h.html == "" {
			continue
		}
		md, err = renderMarkdown(src.Platform, h.html)
		if err != nil || md.Text == "" {
			continue
		}
		in.Format, in.MarkdownSource, in.RendererVersion, in.Content = events.InputFormatMarkdown, h.source, md.RendererVersion, md.Text
		break
	}
	if in.Content == "" {
		in.Format, in.MarkdownSource, in.Content = events.InputFormatText, events.MarkdownSourceNone, src.Text
	}
	in.ContentSHA256 = sha256Hex(in.Content)

	if w.Images != nil {
		in.Images, in.SkippedImages = w.snapshotImages(ctx, src, in, md)
	} else {
		for _, u := range src.ImageURLs {
			in.SkippedImages = append(in.SkippedImages, events.SkippedImageV1{URL: u, Reason: "images are not enabled on this worker"})
		}
	}

	if src.Prior != nil {
		prior := make([]events.ClaimV1, 0, len(src.Prior.Claims))
		for _, c := range src.Prior.Claims {
			prior = append(prior, events.ClaimV1{ID: c.ID, Text: c.Text, Context: c.Context, Summary: c.Summary,
				Reasoning: c.Reasoning, Sources: c.Sources})
		}
		priorConfig, err := priorConfiguration(src)
		if err != nil {
			return in, err
		}
		diff := textdiff.Diff(src.PriorText, src.Text, textdiff.Options{})
		in.Update = &events.UpdateBasisV1{PriorInvestigationID: src.Prior.InvestigationID,
			PriorPostVersionID: src.PriorPostVersionID, PriorConfigurationID: priorConfig, PriorClaims: prior, Diff: diff.Format()}
	}
	return in, in.Validate()
}

func renderMarkdown(platform, html string) (content.Markdown, error) {
	switch platform {
	case events.PlatformLessWrong:
		return content.LessWrongHTMLToMarkdown(html)
	case events.PlatformSubstack:
		return content.SubstackHTMLToMarkdown(html)
	case events.PlatformWikipedia:
		return content.WikipediaHTMLToMarkdown(html)
	}
	return content.Markdown{}, fmt.Errorf("no Markdown renderer for %s", platform)
}

// snapshotImages downloads the version's images and ties each to its
// position: its [IMAGE:N] token in Markdown (by source URL), its offset in
// the normalized text.
func (w *Worker) snapshotImages(ctx context.Context, src serving.Source, in events.InvestigationInputSnapshottedV1, md content.Markdown) ([]events.SnapshotImageV1, []events.SkippedImageV1) {
	resolve := func(raw string) string {
		base, err := url.Parse(src.URL)
		if err != nil {
			return raw
		}
		u, err := base.Parse(raw)
		if err != nil {
			return raw
		}
		return u.String()
	}
	var urls []string
	seen := map[string]bool{}
	add := func(u string) {
		if u != "" && !seen[u] {
			seen[u] = true
			urls = append(urls, u)
		}
	}
	for _, o := range src.Occurrences {
		add(resolve(o.SourceURL))
	}
	for _, u := range src.ImageURLs {
		add(resolve(u))
	}
	for _, p := range md.ImagePlaceholders {
		add(resolve(p.SourceURL))
	}
	got, skipped := w.Images.Download(ctx, urls)
	if skipped == nil {
		skipped = []events.SkippedImageV1{}
	}
	out := make([]events.SnapshotImageV1, 0, len(got))
	for _, im := range got {
		im.Placeholder, im.TextOffset = -1, -1
		if in.Format == events.InputFormatMarkdown {
			for _, p := range md.ImagePlaceholders {
				if resolve(p.SourceURL) == im.SourceURL {
					im.Placeholder = p.Index
					break
				}
			}
		} else {
			for _, o := range src.Occurrences {
				if resolve(o.SourceURL) == im.SourceURL {
					im.TextOffset = o.NormalizedTextOffset
					break
				}
			}
		}
		out = append(out, im)
	}
	return out, skipped
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// priorConfiguration is the configuration of the prior investigation an
// update builds on, as the serving projection reports it, checked against
// the prior's id (which derives from its version and configuration).
func priorConfiguration(src serving.Source) (string, error) {
	id := src.Prior.ConfigurationID
	if events.InvestigationIDFor(src.PriorPostVersionID, id) != src.Prior.InvestigationID {
		return "", fmt.Errorf("prior investigation %s does not derive from version %s and configuration %q",
			src.Prior.InvestigationID, src.PriorPostVersionID, id)
	}
	return id, nil
}
