package investigator

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/schema"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
)

// ImageStore downloads a post's images into the blob store and reads them
// back (images.Downloader through an adapter).
type ImageStore interface {
	// Download fetches, checks and stores images (at most the configured
	// number), in input order; Placeholder and TextOffset are left to the
	// caller.
	Download(ctx context.Context, urls []string) ([]events.SnapshotImageV1, []events.SkippedImageV1)
	// Load reads a stored image, checking its hash.
	Load(ctx context.Context, im events.SnapshotImageV1) ([]byte, error)
}

// URLFetcher is the fetch_url tool, executed by the worker through the
// SSRF-safe client.
type URLFetcher interface {
	Tool() llm.Tool
	// Output fetches url and returns what the model receives (never an
	// error: failures are described in the output).
	Output(ctx context.Context, url string) string
}

// Toolbox holds the tools the worker executes itself.
type Toolbox struct {
	// Fetcher is fetch_url (nil: not offered).
	Fetcher URLFetcher
	// Search backs the web_search function tool offered to providers
	// without native web search (Chat Completions); nil: none.
	Search websearch.Searcher
	// Authors backs the author_context tool, offered only when a run's
	// configuration turns it on; nil: a run that needs it fails.
	Authors AuthorContextReader
}

// WebSearchToolName is the web search function tool of Chat Completions mode.
const WebSearchToolName = "web_search"

func webSearchTool() llm.Tool {
	return llm.Tool{
		Name: WebSearchToolName,
		Description: "Search the web. Returns up to ten results with title, address and a short snippet; " +
			"read a promising result with fetch_url before relying on it.",
		Parameters: schema.Obj("A web search.",
			schema.Prop("query", schema.Str("What to search for, as you would type it into a search engine."))),
	}
}

// runSearch executes a web_search call.
func (t *Toolbox) runSearch(ctx context.Context, args json.RawMessage) string {
	var in struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return `{"error":"the query is missing"}`
	}
	results, err := t.Search.Search(ctx, in.Query, 10)
	if err != nil {
		out, _ := json.Marshal(map[string]string{"error": "search failed: " + err.Error()})
		return string(out)
	}
	out, _ := json.Marshal(map[string]any{"results": results})
	return string(out)
}

func toolDefinitions(ts []llm.Tool) []events.ToolDefinitionV1 {
	out := make([]events.ToolDefinitionV1, 0, len(ts))
	for _, t := range ts {
		params, _ := json.Marshal(t.Parameters)
		out = append(out, events.ToolDefinitionV1{Name: t.Name, Description: t.Description, Parameters: params})
	}
	return out
}
