package search

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"
)

// Stored is one document as Elasticsearch holds it.
type Stored struct {
	ID      string
	Version int64
	Source  json.RawMessage
}

// ReadAll returns every document of index in investigation id order, after
// a refresh (so everything indexed before the call is included). It pages
// with search_after, so it is not bound by max_result_window.
func ReadAll(ctx context.Context, es *elasticsearch.Client, index string) ([]Stored, error) {
	return readAll(ctx, es, index, "investigation_id")
}

// ReadAllAnalyses is ReadAll for an analyses index, in analysis id order.
func ReadAllAnalyses(ctx context.Context, es *elasticsearch.Client, index string) ([]Stored, error) {
	return readAll(ctx, es, index, "analysis_id")
}

func readAll(ctx context.Context, es *elasticsearch.Client, index, idField string) ([]Stored, error) {
	if err := Refresh(ctx, es, index); err != nil {
		return nil, err
	}
	var out []Stored
	var after []any
	for {
		req := map[string]any{
			"size":             1000,
			"version":          true,
			"track_total_hits": false,
			"query":            map[string]any{"match_all": map[string]any{}},
			"sort":             []any{map[string]any{idField: "asc"}},
		}
		if after != nil {
			req["search_after"] = after
		}
		body, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		var ans struct {
			Hits struct {
				Hits []struct {
					ID      string          `json:"_id"`
					Version int64           `json:"_version"`
					Source  json.RawMessage `json:"_source"`
					Sort    []any           `json:"sort"`
				} `json:"hits"`
			} `json:"hits"`
		}
		if err := do(ctx, es, esapi.SearchRequest{Index: []string{index}, Body: bytes.NewReader(body)}, "read "+index, &ans); err != nil {
			return nil, err
		}
		for _, h := range ans.Hits.Hits {
			out = append(out, Stored{ID: h.ID, Version: h.Version, Source: h.Source})
		}
		if len(ans.Hits.Hits) < 1000 {
			return out, nil
		}
		after = ans.Hits.Hits[len(ans.Hits.Hits)-1].Sort
	}
}

// Dump is the canonical form of an index's content: one line per document,
// in id order, "<id> <_source as canonical JSON>" (object keys sorted,
// numbers as written, no HTML escaping). Two indices hold the same
// documents exactly when their dumps are equal; versions are left out, as
// a rebuild may number revisions differently.
func Dump(ctx context.Context, es *elasticsearch.Client, index string) ([]byte, error) {
	docs, err := ReadAll(ctx, es, index)
	if err != nil {
		return nil, err
	}
	return dumpOf(index, docs)
}

// DumpAnalyses is Dump of an analyses index.
func DumpAnalyses(ctx context.Context, es *elasticsearch.Client, index string) ([]byte, error) {
	docs, err := ReadAllAnalyses(ctx, es, index)
	if err != nil {
		return nil, err
	}
	return dumpOf(index, docs)
}

func dumpOf(index string, docs []Stored) ([]byte, error) {
	var out bytes.Buffer
	for _, d := range docs {
		canon, err := CanonicalJSON(d.Source)
		if err != nil {
			return nil, fmt.Errorf("dump %s: document %s: %w", index, d.ID, err)
		}
		out.WriteString(d.ID)
		out.WriteByte(' ')
		out.Write(canon)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// Checksum is the sha256 (hex) of Dump and the number of documents.
func Checksum(ctx context.Context, es *elasticsearch.Client, index string) (sum string, docs int64, err error) {
	dump, err := Dump(ctx, es, index)
	if err != nil {
		return "", 0, err
	}
	h := sha256.Sum256(dump)
	return hex.EncodeToString(h[:]), int64(bytes.Count(dump, []byte{'\n'})), nil
}

// CanonicalJSON re-encodes a JSON value with sorted object keys, numbers
// kept as written, and no HTML escaping.
func CanonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte{'\n'}), nil
}
