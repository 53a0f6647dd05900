package ingest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/producers/ingest"
)

// distinct returns n different 4-byte characters (U+10000 upwards, never
// repeated, so nothing compresses them): the widest string of n characters.
func distinct(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteRune(rune(0x10000 + i))
	}
	return b.String()
}

// storedField is one string of the registration input that ends up stored,
// with a way to set it in a valid body.
type storedField struct {
	field string // the field path the error must name
	set   func(v string) obj
	// max is the field's length limit in characters; 0 for content text,
	// whose limits are in bytes and UTF-16 units.
	max int
}

func occurrenceWith(key, v string) obj {
	o := obj{"originalIndex": 0, "normalizedTextOffset": 0, "sourceUrl": "https://img.example/a.png"}
	o[key] = v
	return with(validX(), "observedImageOccurrences", []any{o})
}

// storedFields lists every stored string of every platform.
func storedFields() []storedField {
	at := func(base func() obj, path string) func(string) obj {
		return func(v string) obj { return with(base(), path, v) }
	}
	return []storedField{
		{"externalId", at(validX, "externalId"), ingest.MaxExternalIDChars},
		{"externalId", at(validLessWrong, "externalId"), ingest.MaxExternalIDChars},
		{"externalId", at(validSubstack, "externalId"), ingest.MaxExternalIDChars},
		{"observedContentText", at(validX, "observedContentText"), 0},
		{"observedImageOccurrences[0].captionText", func(v string) obj { return occurrenceWith("captionText", v) }, ingest.MaxCaptionChars},
		// X
		{"metadata.authorHandle", at(validX, "metadata.authorHandle"), ingest.MaxHandleChars},
		{"metadata.authorDisplayName", at(validX, "metadata.authorDisplayName"), ingest.MaxDisplayNameChars},
		{"metadata.text", at(validX, "metadata.text"), 0},
		// LessWrong
		{"metadata.slug", at(validLessWrong, "metadata.slug"), ingest.MaxSlugChars},
		{"metadata.title", at(validLessWrong, "metadata.title"), ingest.MaxTitleChars},
		{"metadata.authorName", at(validLessWrong, "metadata.authorName"), ingest.MaxDisplayNameChars},
		{"metadata.authorSlug", at(validLessWrong, "metadata.authorSlug"), ingest.MaxSlugChars},
		{"metadata.tags[1]", func(v string) obj { return with(validLessWrong(), "metadata.tags", []any{"AI", v}) }, ingest.MaxTagChars},
		{"metadata.htmlContent", func(v string) obj { return with(validLessWrong(), "metadata.htmlContent", "<p>"+v+"</p>") }, 0},
		// Substack
		{"metadata.substackPostId", at(validSubstack, "metadata.substackPostId"), ingest.MaxPlatformIDChars},
		{"metadata.publicationSubdomain", at(validSubstack, "metadata.publicationSubdomain"), ingest.MaxSubdomainChars},
		{"metadata.slug", at(validSubstack, "metadata.slug"), ingest.MaxSlugChars},
		{"metadata.title", at(validSubstack, "metadata.title"), ingest.MaxTitleChars},
		{"metadata.subtitle", at(validSubstack, "metadata.subtitle"), ingest.MaxSubtitleChars},
		{"metadata.authorName", at(validSubstack, "metadata.authorName"), ingest.MaxDisplayNameChars},
		{"metadata.authorSubstackHandle", at(validSubstack, "metadata.authorSubstackHandle"), ingest.MaxHandleChars},
		{"metadata.htmlContent", at(validSubstack, "metadata.htmlContent"), 0},
		// Wikipedia
		{"metadata.title", at(validWikipedia, "metadata.title"), ingest.MaxTitleChars},
		{"metadata.displayTitle", at(validWikipedia, "metadata.displayTitle"), ingest.MaxTitleChars},
		{"metadata.htmlContent", at(validWikipedia, "metadata.htmlContent"), 0},
		// Bluesky and Threads (their handle, username and external id have
		// a syntax: TestParseRegisterInputSocialIdentity)
		{"observedContentText", at(validBluesky, "observedContentText"), 0},
		{"metadata.displayName", at(validBluesky, "metadata.displayName"), ingest.MaxDisplayNameChars},
		{"observedContentText", at(validThreads, "observedContentText"), 0},
		{"metadata.displayName", at(validThreads, "metadata.displayName"), ingest.MaxDisplayNameChars},
	}
}

func platformOf(o obj) string { return o["platform"].(string) }

func requireInputError(t *testing.T, body []byte, field, msg string) {
	t.Helper()
	in, err := ingest.ParseRegisterInput(body)
	require.Nil(t, in)
	var ie *ingest.InputError
	require.ErrorAs(t, err, &ie, "got %T: %v", err, err)
	require.Equal(t, field, ie.Field, "message: %s", ie.Message)
	require.Contains(t, ie.Message, msg)
}

// TestParseRegisterInputRejectsHostileStrings: each stored string refuses
// NUL and a value one character over its limit, naming the field; each
// accepts the widest value at its limit (4-byte characters) and a lone
// surrogate, which JSON decoding turns into U+FFFD, as the reference
// server's UTF-8 encoding does: the same version hash either way.
func TestParseRegisterInputRejectsHostileStrings(t *testing.T) {
	for _, f := range storedFields() {
		name := platformOf(f.set("x")) + " " + f.field
		t.Run(name+" NUL", func(t *testing.T) {
			requireInputError(t, marshal(t, f.set("ab\x00cd")), f.field, "must not contain NUL (U+0000)")
		})
		t.Run(name+" escaped NUL", func(t *testing.T) {
			body := bytes.Replace(marshal(t, f.set("NUL_HERE")), []byte("NUL_HERE"), []byte(`a\u0000b`), 1)
			requireInputError(t, body, f.field, "must not contain NUL (U+0000)")
		})
		t.Run(name+" lone surrogate", func(t *testing.T) {
			body := bytes.Replace(marshal(t, f.set("LONE_HERE")), []byte("LONE_HERE"), []byte(`Lone\ud800surrogate`), 1)
			in, err := ingest.ParseRegisterInput(body)
			require.NoError(t, err)
			p, err := ingest.BuildRegistration(in)
			require.NoError(t, err)
			stored, err := json.Marshal(p)
			require.NoError(t, err)
			require.NotContains(t, string(stored), `\ud800`)
			require.Contains(t, string(stored), "Lone\uFFFDsurrogate")
		})
		if f.max == 0 {
			continue
		}
		t.Run(name+" at the limit", func(t *testing.T) {
			in, err := ingest.ParseRegisterInput(marshal(t, f.set(distinct(f.max))))
			require.NoError(t, err)
			_, err = ingest.BuildRegistration(in)
			require.NoError(t, err)
		})
		t.Run(name+" over the limit", func(t *testing.T) {
			requireInputError(t, marshal(t, f.set(distinct(f.max+1))), f.field,
				fmt.Sprintf("longer than %d characters (got %d)", f.max, f.max+1))
		})
	}
}

func TestParseRegisterInputRejectsEmptyIdentity(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		in          obj
		msg         string
	}{
		// Today each "@" variant got past validation and failed to build
		// the author (an internal error).
		{"X handle @", "metadata.authorHandle", with(validX(), "metadata.authorHandle", "@"), `must name the author (got only "@")`},
		{"X handle spaced @", "metadata.authorHandle", with(validX(), "metadata.authorHandle", " @ "), `must name the author (got only "@")`},
		{"X handle @ and tab", "metadata.authorHandle", with(validX(), "metadata.authorHandle", "@\t "), `must name the author`},
		{"X handle blank", "metadata.authorHandle", with(validX(), "metadata.authorHandle", " \t"), "is required"},
		{"X handle 65 characters after @", "metadata.authorHandle", with(validX(), "metadata.authorHandle", "@"+strings.Repeat("h", 65)), "longer than 64 characters"},
		{"blank externalId", "externalId", with(validX(), "externalId", "  "), "is required for X"},
		{"SUBSTACK blank publicationSubdomain", "metadata.publicationSubdomain", with(validSubstack(), "metadata.publicationSubdomain", " "), "is required"},
		{"SUBSTACK blank slug", "metadata.slug", with(validSubstack(), "metadata.slug", ""), "is required"},
		{"LESSWRONG blank slug", "metadata.slug", with(validLessWrong(), "metadata.slug", " "), "is required"},
		{"WIKIPEDIA blank title", "metadata.title", with(validWikipedia(), "metadata.title", " "), "is required"},
		{"101 tags", "metadata.tags", with(validLessWrong(), "metadata.tags", repeatStrings(101, func(i int) any { return strconv.Itoa(i) })), "at most 100 tags"},
		{"likeCount over 32 bits", "metadata.likeCount", with(validX(), "metadata.likeCount", 1<<31), "must be at most 2147483647"},
		{"SUBSTACK commentCount over 32 bits", "metadata.commentCount", with(validSubstack(), "metadata.commentCount", 1<<40), "must be at most 2147483647"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireInputError(t, marshal(t, tc.in), tc.field, tc.msg)
		})
	}
	// A handle with one "@" and spaces is the handle; 64 characters fit.
	for _, h := range []string{" @SomeUser ", "@" + strings.Repeat("h", 64)} {
		in, err := ingest.ParseRegisterInput(marshal(t, with(validX(), "metadata.authorHandle", h)))
		require.NoError(t, err)
		p, err := ingest.BuildRegistration(in)
		require.NoError(t, err)
		want := strings.TrimPrefix(strings.TrimSpace(h), "@")
		require.Equal(t, want, p.X.AuthorHandle)
		require.Equal(t, strings.ToLower(want), p.Author.PlatformUserID)
	}
	// The largest counts that fit.
	in, err := ingest.ParseRegisterInput(marshal(t, with(validX(), "metadata.likeCount", 1<<31-1)))
	require.NoError(t, err)
	require.NotNil(t, in)
}

func TestParseRegisterInputChecksEveryURL(t *testing.T) {
	urlFields := []struct {
		field string
		set   func(v string) obj
	}{
		{"url", func(v string) obj { return with(validX(), "url", v) }},
		{"observedImageUrls[1]", func(v string) obj {
			return with(validX(), "observedImageUrls", []any{"https://pbs.twimg.com/media/a.jpg", v})
		}},
		{"metadata.mediaUrls[1]", func(v string) obj {
			return with(validX(), "metadata.mediaUrls", []any{"https://pbs.twimg.com/media/a.jpg", v})
		}},
		{"observedImageOccurrences[0].sourceUrl", func(v string) obj { return occurrenceWith("sourceUrl", v) }},
	}
	hostile := []struct{ name, url, msg string }{
		{"javascript", "javascript:alert(1)", "absolute http(s) URL"},
		{"data", "data:image/png;base64,iVBORw0KGgo=", "absolute http(s) URL"},
		{"relative", "/media/a.jpg", "absolute http(s) URL"},
		{"scheme-relative", "//pbs.twimg.com/media/a.jpg", "absolute http(s) URL"},
		{"no host", "https:///media/a.jpg", "absolute http(s) URL"},
		{"opaque", "https:pbs.twimg.com/a.jpg", "absolute http(s) URL"},
		{"ftp", "ftp://pbs.twimg.com/a.jpg", "absolute http(s) URL"},
		{"blob", "blob:https://x.com/0b0e6c1e-1111-4222-8333-444455556666", "absolute http(s) URL"},
		{"NUL", "https://pbs.twimg.com/a\x00.jpg", "must not contain NUL"},
		{"control character", "https://pbs.twimg.com/a\n.jpg", "absolute http(s) URL"},
		{"empty", "", "absolute http(s) URL"},
		{"over 4096 bytes", "https://pbs.twimg.com/" + strings.Repeat("a", 4096-len("https://pbs.twimg.com/")+1), "longer than 4096 bytes"},
	}
	for _, f := range urlFields {
		for _, h := range hostile {
			t.Run(f.field+" "+h.name, func(t *testing.T) {
				requireInputError(t, marshal(t, f.set(h.url)), f.field, h.msg)
			})
		}
		for _, ok := range []string{
			"https://pbs.twimg.com/media/GabcXYZ?format=jpg&name=small",
			"HTTPS://PBS.TWIMG.COM/media/a.jpg",
			"http://127.0.0.1:8080/a.png",
			"https://pbs.twimg.com/" + strings.Repeat("a", 4096-len("https://pbs.twimg.com/")),
		} {
			_, err := ingest.ParseRegisterInput(marshal(t, f.set(ok)))
			require.NoError(t, err, "%s = %q", f.field, ok)
		}
	}
	urls := repeatStrings(257, func(i int) any { return fmt.Sprintf("https://pbs.twimg.com/media/%d.jpg", i) })
	requireInputError(t, marshal(t, with(validX(), "metadata.mediaUrls", urls)), "metadata.mediaUrls", "at most 256 URLs")
	_, err := ingest.ParseRegisterInput(marshal(t, with(validX(), "metadata.mediaUrls", urls[:256])))
	require.NoError(t, err)
}

// TestCheckString covers what JSON decoding never produces but a caller
// building input otherwise could: invalid UTF-8, among it a surrogate
// encoded as UTF-8 (CESU-8 / WTF-8), which Postgres refuses.
func TestCheckString(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		max     int
		msg     string // empty: accepted
	}{
		{"plain", "Some User", 256, ""},
		{"empty", "", 10, ""},
		{"replacement character", "a\uFFFDb", 10, ""},
		{"4-byte characters at the limit", distinct(3), 3, ""},
		{"encoded lone surrogate", "a\xed\xa0\x80b", 10, "is not valid UTF-8"},
		{"invalid byte", "a\xffb", 10, "is not valid UTF-8"},
		{"NUL", "a\x00b", 10, "must not contain NUL (U+0000)"},
		{"NUL only", "\x00", 10, "must not contain NUL (U+0000)"},
		{"over the limit", distinct(4), 3, "longer than 3 characters (got 4)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ingest.CheckString("metadata.field", tc.s, tc.max)
			if tc.msg == "" {
				require.NoError(t, err)
				return
			}
			var ie *ingest.InputError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, "metadata.field", ie.Field)
			require.Contains(t, ie.Message, tc.msg)
		})
	}
	for _, tc := range []struct{ s, msg string }{
		{"", "must not be empty"}, {" ", "must not be empty"}, {"a\x00b", "must not contain NUL"}, {strings.Repeat("1", 257), "longer than 256"},
	} {
		err := ingest.CheckExternalID("posts[0].externalId", tc.s)
		require.ErrorContains(t, err, "posts[0].externalId: "+tc.msg)
	}
	require.NoError(t, ingest.CheckExternalID("externalId", strings.Repeat("1", 256)))
}

// TestLimitsAreDocumented keeps README.md's table of input limits in step
// with the constants.
func TestLimitsAreDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	section := string(readme)
	start := strings.Index(section, "### Input limits")
	require.GreaterOrEqual(t, start, 0, "README.md has an \"Input limits\" section")
	section = section[start:]
	if end := strings.Index(section[4:], "\n#"); end >= 0 {
		section = section[:end+4]
	}
	for _, tc := range []struct {
		what  string
		limit int
	}{
		{"`externalId`", ingest.MaxExternalIDChars},
		{"X `authorHandle`", ingest.MaxHandleChars},
		{"Bluesky `handle`", ingest.MaxBlueskyHandleChars},
		{"slugs", ingest.MaxSlugChars},
		{"display names", ingest.MaxDisplayNameChars},
		{"titles", ingest.MaxTitleChars},
		{"Substack `subtitle`", ingest.MaxSubtitleChars},
		{"tags", ingest.MaxTags},
		{"each tag", ingest.MaxTagChars},
		{"image `captionText`", ingest.MaxCaptionChars},
		{"`publicationSubdomain`", ingest.MaxSubdomainChars},
		{"`substackPostId`", ingest.MaxPlatformIDChars},
		{"URLs", ingest.MaxURLLength},
		{"image URLs", ingest.MaxImageURLs},
	} {
		row := regexp.MustCompile(`(?m)^\|[^|\n]*` + regexp.QuoteMeta(tc.what) + `[^|\n]*\|\s*([0-9,]+)\b`)
		m := row.FindStringSubmatch(section)
		require.NotNil(t, m, "README.md's input limits name %s", tc.what)
		got, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		require.NoError(t, err)
		require.Equal(t, tc.limit, got, "README.md's limit of %s", tc.what)
	}
}
