// Package workbench is the submission workbench's page, served by `errata
// serve` at /app: static HTML, CSS and JavaScript embedded in the binary
// (no outside CDN, nothing inline, so the page runs under a strict content
// security policy), and the HTML report of an analysis, a self-contained
// document rendered on the server with html/template, so every string of
// the job is escaped.
package workbench

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed assets
var assets embed.FS

// Assets are the page's files: index.html, app.css, app.js.
func Assets() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic("workbench: embedded assets: " + err.Error()) // the directory is embedded above
	}
	return sub
}

// Index is the page's HTML, the same for every /app path (the script
// reads the path: /app submits, /app/analyses/{id} shows a job).
func Index() []byte {
	b, err := fs.ReadFile(Assets(), "index.html")
	if err != nil {
		panic("workbench: embedded index.html: " + err.Error())
	}
	return b
}

// ContentSecurityPolicy is the page's policy: its own scripts, styles,
// images and API only, never framed, no plugins, forms to itself.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ReportContentSecurityPolicy is the report's: no script, no outside
// resource; its styles are in the document.
const ReportContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; " +
	"form-action 'none'; frame-ancestors 'none'"

// ContentType is the media type of an asset by its name.
func ContentType(name string) string {
	switch {
	case strings.HasSuffix(name, ".html"):
		return "text/html; charset=utf-8"
	case strings.HasSuffix(name, ".css"):
		return "text/css; charset=utf-8"
	case strings.HasSuffix(name, ".js"):
		return "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".svg"):
		return "image/svg+xml"
	}
	return "application/octet-stream"
}
