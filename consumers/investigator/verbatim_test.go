package investigator

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/events"
)

func TestVerbatimClaim(t *testing.T) {
	text := "In 1969 the crew of Apollo 11 landed on the Moon. Some say the landing took place in 1970, which is wrong. " +
		"The Great Wall is visible from space with the naked eye, according to a popular myth repeated in many schoolbooks."
	cases := []struct {
		name, claim, context string
		ok                   bool
		wantClaim            string
		wantContext          string
	}{
		{name: "exact", claim: "the landing took place in 1970", context: "Some say the landing took place in 1970, which is wrong.",
			ok: true, wantClaim: "the landing took place in 1970", wantContext: "Some say the landing took place in 1970, which is wrong."},
		{name: "markdown emphasis copied from the input", claim: "the landing took place in **1970**", context: "",
			ok: true, wantClaim: "the landing took place in 1970"},
		{name: "link markup", claim: "[The Great Wall](https://en.wikipedia.org/wiki/Great_Wall) is visible from space",
			ok: true, wantClaim: "The Great Wall is visible from space"},
		{name: "spacing normalizes", claim: "the  landing took place in 1970", ok: true, wantClaim: "the landing took place in 1970"},
		{name: "paraphrase", claim: "the landing happened in 1970", ok: false},
		{name: "ellipsis", claim: "the landing ... 1970", ok: false},
		{name: "too short", claim: "In", ok: false},
		{name: "empty", claim: "", ok: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			claim, ctx, ok := verbatimClaim(text, c.claim, c.context)
			require.Equal(t, c.ok, ok)
			if !ok {
				return
			}
			require.Equal(t, c.wantClaim, claim)
			require.Contains(t, ctx, claim)
			require.Contains(t, text, ctx, "the context is post text too")
			if c.wantContext != "" {
				require.Equal(t, c.wantContext, ctx)
			}
		})
	}
}

func TestSurroundingTakesAboutTenWordsEachSide(t *testing.T) {
	text := "one two three four five six seven eight nine ten eleven twelve CLAIM HERE thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone twentytwo twentythree"
	i := len("one two three four five six seven eight nine ten eleven twelve ")
	got := surrounding(text, i, i+len("CLAIM HERE"), 10)
	require.Equal(t, "three four five six seven eight nine ten eleven twelve CLAIM HERE thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone twentytwo", got)
}

func TestPostPartsPlacesImages(t *testing.T) {
	png := loadedImage{SnapshotImageV1: events.SnapshotImageV1{MediaType: "image/png", BlobKey: "images/a.png", Placeholder: 1, TextOffset: -1}, data: []byte("png")}
	md := events.InvestigationInputSnapshottedV1{Format: events.InputFormatMarkdown, Content: "Before [IMAGE:0] middle [IMAGE:1] after"}
	parts := postParts(md, []loadedImage{png})
	require.Len(t, parts, 3)
	require.Equal(t, "Before [IMAGE:0] middle ", parts[0].Text, "a token without a downloaded image stays text")
	require.NotNil(t, parts[1].Image)
	require.Equal(t, " after", parts[2].Text)

	// Text input: offsets count UTF-16 code units ("é" is one, "😀" two).
	jpg := loadedImage{SnapshotImageV1: events.SnapshotImageV1{MediaType: "image/jpeg", Placeholder: -1, TextOffset: 4}, data: []byte("jpg")}
	txt := events.InvestigationInputSnapshottedV1{Format: events.InputFormatText, Content: "é😀 xyz"}
	parts = postParts(txt, []loadedImage{jpg})
	require.Equal(t, []llm.Part{llm.TextPart("é😀 "), llm.ImageDataPart("image/jpeg", []byte("jpg")), llm.TextPart("xyz")}, parts)
}

func TestRedactImagesKeepsTheRequestJSON(t *testing.T) {
	im := loadedImage{SnapshotImageV1: events.SnapshotImageV1{MediaType: "image/png", BlobKey: "images/x.png", SHA256: "ab"}, data: []byte{1, 2, 3}}
	raw := []byte(`{"image_url":"data:image/png;base64,AQID"}`)
	require.JSONEq(t, `{"image_url":"errata-blob:images/x.png#sha256=ab"}`, string(redactImages(raw, []loadedImage{im})))
}

func TestBackoff(t *testing.T) {
	for n, want := range map[int]string{0: "10s", 1: "10s", 2: "20s", 3: "40s", 4: "1m20s", 9: "42m40s", 10: "1h0m0s", 64: "1h0m0s"} {
		require.Equal(t, want, backoff(10e9, n).String(), n)
	}
}
