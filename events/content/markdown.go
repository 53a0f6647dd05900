package content

import (
	"fmt"
)

// MarkdownRendererVersion identifies the rules that produced stored Markdown.
// It is recorded with every investigation input, so it must change whenever
// the output of the functions below could change.
const MarkdownRendererVersion = "1.2.0"

// MatchBySourceURL is the only placeholder matching mode this renderer emits:
// an [IMAGE:N] placeholder is matched to a downloaded image by its source URL,
// never by position.
const MatchBySourceURL = "SOURCE_URL"

// ImagePlaceholder describes the image behind an [IMAGE:N] token in rendered
// Markdown. SourceURL is the <img src> attribute exactly as written (it may be
// relative or protocol-relative, or empty).
type ImagePlaceholder struct {
	Index     int    `json:"index"`
	MatchBy   string `json:"matchBy"`
	SourceURL string `json:"sourceUrl"`
}

// Markdown is the rendered form of a version's HTML that investigators read:
// headings, lists, links and block quotes survive, while bold, italic,
// strike-through and inline code are flattened to their text so that quotes
// copied from it still match the page. Each <img> becomes " [IMAGE:N] ".
type Markdown struct {
	Text              string
	ImagePlaceholders []ImagePlaceholder
	RendererVersion   string
}

// renderMarkdown converts HTML to Markdown with image placeholders.
func renderMarkdown(src string) (Markdown, error) {
	md := Markdown{ImagePlaceholders: []ImagePlaceholder{}, RendererVersion: MarkdownRendererVersion}
	if src == "" {
		return md, nil
	}
	root, err := turndownRoot(src)
	if err != nil {
		return Markdown{}, fmt.Errorf("parse HTML document: %w", err)
	}
	if root == nil {
		return md, nil
	}
	c := newConverter()
	md.Text = c.convert(root)
	if c.placeholders != nil {
		md.ImagePlaceholders = c.placeholders
	}
	return md, nil
}

// LessWrongHTMLToMarkdown renders a LessWrong post body.
func LessWrongHTMLToMarkdown(src string) (Markdown, error) {
	md, err := renderMarkdown(src)
	if err != nil {
		return Markdown{}, fmt.Errorf("lesswrong markdown: %w", err)
	}
	return md, nil
}

// SubstackHTMLToMarkdown renders a Substack post body (same rules as
// LessWrong).
func SubstackHTMLToMarkdown(src string) (Markdown, error) {
	md, err := renderMarkdown(src)
	if err != nil {
		return Markdown{}, fmt.Errorf("substack markdown: %w", err)
	}
	return md, nil
}

// WikipediaHTMLToMarkdown renders Parse API HTML after pruning exactly what
// WikipediaHTMLToText prunes (appendix sections, citation markers, navboxes,
// edit links), so the Markdown and the canonical text describe the same
// article body.
func WikipediaHTMLToMarkdown(src string) (Markdown, error) {
	filtered, err := prefilterWikipediaHTML(src)
	if err != nil {
		return Markdown{}, fmt.Errorf("wikipedia markdown: %w", err)
	}
	md, err := renderMarkdown(filtered)
	if err != nil {
		return Markdown{}, fmt.Errorf("wikipedia markdown: %w", err)
	}
	return md, nil
}
