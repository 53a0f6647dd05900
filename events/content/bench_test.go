package content

import "testing"

func BenchmarkWikipediaHTMLToText(b *testing.B) {
	src := loadPage(b, "wikipedia-albert-einstein-page-html-1.json").ParseAPIHTML
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WikipediaHTMLToText(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWikipediaHTMLToMarkdown(b *testing.B) {
	src := loadPage(b, "wikipedia-albert-einstein-page-html-1.json").ParseAPIHTML
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WikipediaHTMLToMarkdown(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	src := loadPage(b, "view-post-lesswrong-observed-html-1.json").HTML
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		Normalize(src)
	}
}
