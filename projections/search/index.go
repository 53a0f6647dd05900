package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"
)

// Index names. A projection generation N lives in the versioned index
// "<prefix>investigations-vN"; readers use the alias
// "<prefix>investigations", which a rebuild moves atomically.

// AliasName is the alias readers search through.
func AliasName(prefix string) string { return prefix + "investigations" }

// IndexName is the versioned index of generation gen (>= 1).
func IndexName(prefix string, gen int64) string {
	return prefix + "investigations-v" + strconv.FormatInt(gen, 10)
}

// GenerationOfIndex parses an IndexName back into its generation.
func GenerationOfIndex(prefix, name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, prefix+"investigations-v")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != rest {
		return 0, false
	}
	return n, true
}

// indexBody is the settings and mapping of a versioned index. Text fields
// use the english analyzer (stemming, stop words); filters are keywords;
// unknown fields are refused (dynamic: strict) so a document that drifts
// from the mapping fails loudly instead of growing the mapping.
const indexBody = `{
  "settings": {
    "number_of_shards": 1,
    "auto_expand_replicas": "0-1",
    "max_result_window": 10000
  },
  "mappings": {
    "dynamic": "strict",
    "properties": {
      "investigation_id":    {"type": "keyword"},
      "configuration_id":    {"type": "keyword"},
      "post_id":             {"type": "keyword"},
      "post_version_id":     {"type": "keyword"},
      "content_hash":        {"type": "keyword"},
      "status":              {"type": "keyword"},
      "checked_at":          {"type": "date_nanos"},
      "platform":            {"type": "keyword"},
      "external_id":         {"type": "keyword"},
      "url":                 {"type": "keyword", "index": false},
      "author_id":           {"type": "keyword"},
      "author_display_name": {"type": "text", "analyzer": "english"},
      "post_excerpt":        {"type": "text", "analyzer": "english"},
      "provenance":          {"type": "keyword"},
      "server_verified_at":  {"type": "date_nanos"},
      "corroboration_count": {"type": "integer"},
      "claim_count":         {"type": "integer"},
      "prompt_version":      {"type": "keyword"},
      "provider":            {"type": "keyword"},
      "model":               {"type": "keyword"},
      "claims": {
        "properties": {
          "id":        {"type": "keyword"},
          "text":      {"type": "text", "analyzer": "english"},
          "context":   {"type": "text", "analyzer": "english"},
          "summary":   {"type": "text", "analyzer": "english"},
          "reasoning": {"type": "text", "analyzer": "english"},
          "sources": {
            "properties": {
              "url":     {"type": "keyword", "index": false},
              "title":   {"type": "text", "analyzer": "english"},
              "snippet": {"type": "text", "analyzer": "english"}
            }
          }
        }
      }
    }
  }
}`

// esError is an Elasticsearch error answer.
type esError struct {
	Status int
	Type   string
	Reason string
}

func (e *esError) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("elasticsearch: HTTP %d", e.Status)
	}
	return fmt.Sprintf("elasticsearch: HTTP %d %s: %s", e.Status, e.Type, e.Reason)
}

// readError turns an error response into an *esError (the body is consumed).
func readError(res *esapi.Response) error {
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var parsed struct {
		Error struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
			Root   []struct {
				Type   string `json:"type"`
				Reason string `json:"reason"`
			} `json:"root_cause"`
		} `json:"error"`
	}
	e := &esError{Status: res.StatusCode}
	if json.Unmarshal(body, &parsed) == nil {
		e.Type, e.Reason = parsed.Error.Type, parsed.Error.Reason
		if e.Type == "search_phase_execution_exception" && len(parsed.Error.Root) > 0 {
			e.Type, e.Reason = parsed.Error.Root[0].Type, parsed.Error.Root[0].Reason
		}
	} else {
		e.Reason = strings.TrimSpace(string(body))
	}
	return e
}

// do runs req and decodes a 2xx JSON answer into out (nil: discard).
func do(ctx context.Context, es *elasticsearch.Client, req esapi.Request, what string, out any) error {
	res, err := req.Do(ctx, es)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer res.Body.Close()
	if res.IsError() {
		return fmt.Errorf("%s: %w", what, readError(res))
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		return nil
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("%s: decode answer: %w", what, err)
	}
	return nil
}

// CreateIndex creates the versioned index name with the search mapping. An
// index that already exists keeps its documents and gets the fields the
// mapping gained since it was created (additive; idempotent).
func CreateIndex(ctx context.Context, es *elasticsearch.Client, name string) error {
	if err := createIndex(ctx, es, name, indexBody); err != nil {
		return err
	}
	return putMapping(ctx, es, name, indexBody)
}

// putMapping sends the mapping of body to an existing index. Elasticsearch
// adds new fields and refuses a change to an existing one.
func putMapping(ctx context.Context, es *elasticsearch.Client, name, body string) error {
	var parsed struct {
		Mappings json.RawMessage `json:"mappings"`
	}
	if err := json.Unmarshal([]byte(body), &parsed); err != nil {
		return fmt.Errorf("mapping of %s: %w", name, err)
	}
	return do(ctx, es, esapi.IndicesPutMappingRequest{Index: []string{name}, Body: bytes.NewReader(parsed.Mappings)},
		"put mapping "+name, nil)
}

// CreateAnalysisIndex creates the versioned analyses index name
// (idempotent).
func CreateAnalysisIndex(ctx context.Context, es *elasticsearch.Client, name string) error {
	return createIndex(ctx, es, name, analysisIndexBody)
}

func createIndex(ctx context.Context, es *elasticsearch.Client, name, body string) error {
	res, err := esapi.IndicesCreateRequest{Index: name, Body: strings.NewReader(body)}.Do(ctx, es)
	if err != nil {
		return fmt.Errorf("create index %s: %w", name, err)
	}
	defer res.Body.Close()
	if !res.IsError() {
		_, _ = io.Copy(io.Discard, res.Body)
		return nil
	}
	err = readError(res)
	var ee *esError
	if errors.As(err, &ee) && ee.Type == "resource_already_exists_exception" {
		return nil
	}
	return fmt.Errorf("create index %s: %w", name, err)
}

// AliasTargets returns the indices alias points at (none if it does not exist).
func AliasTargets(ctx context.Context, es *elasticsearch.Client, alias string) ([]string, error) {
	res, err := esapi.IndicesGetAliasRequest{Name: []string{alias}}.Do(ctx, es)
	if err != nil {
		return nil, fmt.Errorf("get alias %s: %w", alias, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		_, _ = io.Copy(io.Discard, res.Body)
		return nil, nil
	}
	if res.IsError() {
		return nil, fmt.Errorf("get alias %s: %w", alias, readError(res))
	}
	var byIndex map[string]json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&byIndex); err != nil {
		return nil, fmt.Errorf("get alias %s: %w", alias, err)
	}
	out := make([]string, 0, len(byIndex))
	for name := range byIndex {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// PointAlias makes alias point at index and nothing else, in one atomic
// _aliases call: readers see either the old index or the new one.
func PointAlias(ctx context.Context, es *elasticsearch.Client, alias, index string) error {
	return pointAliases(ctx, es, [2]string{alias, index})
}

// PointGeneration points both aliases of prefix (investigations and
// analyses) at generation gen's indices, in one atomic _aliases call.
func PointGeneration(ctx context.Context, es *elasticsearch.Client, prefix string, gen int64) error {
	return pointAliases(ctx, es, [2]string{AliasName(prefix), IndexName(prefix, gen)},
		[2]string{AnalysisAliasName(prefix), AnalysisIndexName(prefix, gen)})
}

// pointAliases makes each alias (pair[0]) point at its index (pair[1])
// and nothing else, in one atomic _aliases call.
func pointAliases(ctx context.Context, es *elasticsearch.Client, pairs ...[2]string) error {
	type target struct {
		Index string `json:"index"`
		Alias string `json:"alias"`
	}
	var actions []map[string]target
	var what []string
	for _, pr := range pairs {
		alias, index := pr[0], pr[1]
		current, err := AliasTargets(ctx, es, alias)
		if err != nil {
			return err
		}
		for _, old := range current {
			if old != index {
				actions = append(actions, map[string]target{"remove": {Index: old, Alias: alias}})
			}
		}
		actions = append(actions, map[string]target{"add": {Index: index, Alias: alias}})
		what = append(what, fmt.Sprintf("%s at %s", alias, index))
	}
	body, err := json.Marshal(map[string]any{"actions": actions})
	if err != nil {
		return err
	}
	return do(ctx, es, esapi.IndicesUpdateAliasesRequest{Body: bytes.NewReader(body)},
		"point alias "+strings.Join(what, " and "), nil)
}

// Ensure creates the indices of generation gen (investigations and
// analyses) and, for each alias that does not exist yet, points it there.
// An alias that already points somewhere (a later generation after a
// rebuild) is left alone. Idempotent.
func Ensure(ctx context.Context, es *elasticsearch.Client, prefix string, gen int64) error {
	if err := CreateGeneration(ctx, es, prefix, gen); err != nil {
		return err
	}
	for _, pr := range [][2]string{{AliasName(prefix), IndexName(prefix, gen)}, {AnalysisAliasName(prefix), AnalysisIndexName(prefix, gen)}} {
		current, err := AliasTargets(ctx, es, pr[0])
		if err != nil {
			return err
		}
		if len(current) > 0 {
			continue
		}
		if err := PointAlias(ctx, es, pr[0], pr[1]); err != nil {
			return err
		}
	}
	return nil
}

// CreateGeneration creates the indices of generation gen, without
// aliases (idempotent).
func CreateGeneration(ctx context.Context, es *elasticsearch.Client, prefix string, gen int64) error {
	if err := CreateIndex(ctx, es, IndexName(prefix, gen)); err != nil {
		return err
	}
	return CreateAnalysisIndex(ctx, es, AnalysisIndexName(prefix, gen))
}

// IndexInfo is one versioned index of the search projection.
type IndexInfo struct {
	Name       string
	Generation int64
	// Analyses: an analyses index, else an investigations one.
	Analyses bool
	// Aliased says readers use it (its family's alias points here).
	Aliased bool
}

// GenerationOfAnalysisIndex parses an AnalysisIndexName back into its
// generation.
func GenerationOfAnalysisIndex(prefix, name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, prefix+"analyses-v")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != rest {
		return 0, false
	}
	return n, true
}

// Indices lists the versioned indices under prefix (both families), by
// generation, investigations first.
func Indices(ctx context.Context, es *elasticsearch.Client, prefix string) ([]IndexInfo, error) {
	var out []IndexInfo
	for _, fam := range []struct {
		pattern, alias string
		analyses       bool
		gen            func(prefix, name string) (int64, bool)
	}{
		{prefix + "investigations-v*", AliasName(prefix), false, GenerationOfIndex},
		{prefix + "analyses-v*", AnalysisAliasName(prefix), true, GenerationOfAnalysisIndex},
	} {
		var byIndex map[string]struct {
			Aliases map[string]json.RawMessage `json:"aliases"`
		}
		err := do(ctx, es, esapi.IndicesGetAliasRequest{Index: []string{fam.pattern}}, "list indices "+fam.pattern, &byIndex)
		var ee *esError
		if errors.As(err, &ee) && ee.Status == http.StatusNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		for name, info := range byIndex {
			gen, ok := fam.gen(prefix, name)
			if !ok {
				continue
			}
			_, aliased := info.Aliases[fam.alias]
			out = append(out, IndexInfo{Name: name, Generation: gen, Analyses: fam.analyses, Aliased: aliased})
		}
	}
	slices.SortFunc(out, func(a, b IndexInfo) int {
		if a.Generation != b.Generation {
			return int(a.Generation - b.Generation)
		}
		if a.Analyses != b.Analyses {
			if a.Analyses {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// DropIndex deletes a versioned index (of either family) that its alias
// does not point at.
func DropIndex(ctx context.Context, es *elasticsearch.Client, prefix, name string) error {
	alias := AliasName(prefix)
	if _, ok := GenerationOfIndex(prefix, name); !ok {
		if _, ok := GenerationOfAnalysisIndex(prefix, name); !ok {
			return fmt.Errorf("drop index %s: not a search index under prefix %q", name, prefix)
		}
		alias = AnalysisAliasName(prefix)
	}
	current, err := AliasTargets(ctx, es, alias)
	if err != nil {
		return err
	}
	if slices.Contains(current, name) {
		return fmt.Errorf("drop index %s: the alias %s points at it; point it elsewhere first", name, alias)
	}
	res, err := esapi.IndicesDeleteRequest{Index: []string{name}}.Do(ctx, es)
	if err != nil {
		return fmt.Errorf("drop index %s: %w", name, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return nil
	}
	if res.IsError() {
		return fmt.Errorf("drop index %s: %w", name, readError(res))
	}
	return nil
}

// Refresh makes everything indexed so far searchable (tests, dumps).
func Refresh(ctx context.Context, es *elasticsearch.Client, index string) error {
	return do(ctx, es, esapi.IndicesRefreshRequest{Index: []string{index}}, "refresh "+index, nil)
}
