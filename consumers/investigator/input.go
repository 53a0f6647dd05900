package investigator

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"unicode/utf16"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/events"
)

// ImageLoader reads the bytes of a snapshot image back from the blob store.
type ImageLoader interface {
	Load(ctx context.Context, im events.SnapshotImageV1) ([]byte, error)
}

// loadedImage is a snapshot image with its bytes.
type loadedImage struct {
	events.SnapshotImageV1
	data []byte
}

func loadImages(ctx context.Context, loader ImageLoader, in events.InvestigationInputSnapshottedV1) ([]loadedImage, error) {
	out := make([]loadedImage, 0, len(in.Images))
	for _, im := range in.Images {
		if loader == nil {
			return nil, fmt.Errorf("image %s: no image store configured", im.BlobKey)
		}
		data, err := loader.Load(ctx, im)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", im.BlobKey, err)
		}
		out = append(out, loadedImage{SnapshotImageV1: im, data: data})
	}
	return out, nil
}

var placeholder = regexp.MustCompile(`\[IMAGE:(\d+)\]`)

// postParts renders the post body as text and image parts, each image at
// its position: at its [IMAGE:N] token in Markdown input, at its offset in
// the normalized text in text input. Tokens without a downloaded image stay
// as text; images without a position follow the text.
func postParts(in events.InvestigationInputSnapshottedV1, images []loadedImage) []llm.Part {
	var parts []llm.Part
	text := func(s string) {
		if s == "" {
			return
		}
		if n := len(parts); n > 0 && parts[n-1].Image == nil {
			parts[n-1].Text += s
			return
		}
		parts = append(parts, llm.TextPart(s))
	}
	image := func(im loadedImage) { parts = append(parts, llm.ImageDataPart(im.MediaType, im.data)) }

	placed := map[int]bool{}
	if in.Format == events.InputFormatMarkdown {
		byToken := map[int]int{}
		for i, im := range images {
			if im.Placeholder >= 0 {
				byToken[im.Placeholder] = i
			}
		}
		rest := in.Content
		for {
			loc := placeholder.FindStringSubmatchIndex(rest)
			if loc == nil {
				text(rest)
				break
			}
			n, _ := strconv.Atoi(rest[loc[2]:loc[3]])
			i, ok := byToken[n]
			if !ok || placed[i] {
				text(rest[:loc[1]])
				rest = rest[loc[1]:]
				continue
			}
			text(rest[:loc[0]])
			image(images[i])
			placed[i] = true
			rest = rest[loc[1]:]
		}
	} else {
		type at struct{ byteOff, idx int }
		var positions []at
		for i, im := range images {
			if im.TextOffset >= 0 {
				positions = append(positions, at{utf16ToByteOffset(in.Content, im.TextOffset), i})
			}
		}
		sort.SliceStable(positions, func(a, b int) bool { return positions[a].byteOff < positions[b].byteOff })
		prev := 0
		for _, p := range positions {
			text(in.Content[prev:p.byteOff])
			image(images[p.idx])
			placed[p.idx] = true
			prev = p.byteOff
		}
		text(in.Content[prev:])
	}
	for i, im := range images {
		if !placed[i] {
			image(im)
		}
	}
	return parts
}

// utf16ToByteOffset maps an offset in UTF-16 code units to a byte offset
// in s (clamped to len(s)).
func utf16ToByteOffset(s string, units int) int {
	n := 0
	for i, r := range s {
		if n >= units {
			return i
		}
		n += len(utf16.Encode([]rune{r}))
	}
	return len(s)
}

// priorClaim is a prior claim as the update prompt describes it.
type priorClaim struct {
	ID         string `json:"id"`
	Quote      string `json:"quote"`
	Correction string `json:"correction"`
}

// fencedMessage builds one user message of sections: the post (with its
// images) first, then text sections, all inside one fence pair chosen to
// collide with none of the content.
func fencedMessage(in events.InvestigationInputSnapshottedV1, images []loadedImage, sections [][2]string) (llm.Message, string, string) {
	contents := []string{in.Content}
	for _, s := range sections {
		contents = append(contents, s[1])
	}
	open, closeLine := prompts.Fence(contents...)
	parts := []llm.Part{llm.TextPart(prompts.HeadingPost + "\n" + open + "\n")}
	body := postParts(in, images)
	if len(body) > 0 && body[0].Image == nil {
		parts[0].Text += body[0].Text
		body = body[1:]
	}
	parts = append(parts, body...)
	tail := "\n" + closeLine + "\n"
	for _, s := range sections {
		tail += "\n" + prompts.Section(s[0], open, closeLine, s[1])
	}
	if n := len(parts); parts[n-1].Image == nil {
		parts[n-1].Text += tail
	} else {
		parts = append(parts, llm.TextPart(tail))
	}
	return llm.Message{Role: llm.RoleUser, Parts: parts}, open, closeLine
}

// investigatorMessage is the stage-1 input: the post, and for an update
// the changes and the prior claims.
func investigatorMessage(in events.InvestigationInputSnapshottedV1, images []loadedImage) (llm.Message, string, string, error) {
	if in.Update == nil {
		m, o, c := fencedMessage(in, images, nil)
		return m, o, c, nil
	}
	prior := make([]priorClaim, 0, len(in.Update.PriorClaims))
	for _, c := range in.Update.PriorClaims {
		prior = append(prior, priorClaim{ID: c.ID, Quote: c.Text, Correction: c.Summary})
	}
	js, err := json.MarshalIndent(prior, "", "  ")
	if err != nil {
		return llm.Message{}, "", "", err
	}
	m, o, c := fencedMessage(in, images, [][2]string{
		{prompts.HeadingChanges, in.Update.Diff},
		{prompts.HeadingPriorClaims, string(js)},
	})
	return m, o, c, nil
}

// validatorMessage is the stage-2 input: the post and the candidate claim.
func validatorMessage(in events.InvestigationInputSnapshottedV1, images []loadedImage, c events.CorrectionV1) (llm.Message, string, string, error) {
	js, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return llm.Message{}, "", "", err
	}
	m, o, cl := fencedMessage(in, images, [][2]string{{prompts.HeadingCandidate, string(js)}})
	return m, o, cl, nil
}

// redactImages replaces the base64 image data in a raw request with a
// reference to the blob that holds it, so the audit record stays small and
// still names the exact bytes sent.
func redactImages(raw []byte, images []loadedImage) []byte {
	for _, im := range images {
		b64 := base64.StdEncoding.EncodeToString(im.data)
		raw = bytes.ReplaceAll(raw, []byte("data:"+im.MediaType+";base64,"+b64),
			[]byte("errata-blob:"+im.BlobKey+"#sha256="+im.SHA256))
	}
	return raw
}
