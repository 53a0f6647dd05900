package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// SearchIndexPrefix returns a unique ERRATA_SEARCH_INDEX_PREFIX for a test
// that runs the search projector (in-process or as an errata process).
// Every index named with the prefix is deleted when the test ends.
func SearchIndexPrefix(t testing.TB) string {
	t.Helper()
	cfg := Config(t)
	prefix := "errata-test-" + Suffix() + "-"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := deleteIndices(ctx, cfg.ElasticsearchURL, prefix); err != nil {
			t.Logf("delete test indices %s*: %v", prefix, err)
		}
	})
	return prefix
}

// deleteIndices deletes the indices whose names start with prefix, one by
// name (Elasticsearch refuses wildcard deletes by default).
func deleteIndices(ctx context.Context, base, prefix string) error {
	base = strings.TrimRight(base, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		base+"/_cat/indices/"+url.PathEscape(prefix)+"*?format=json&h=index&expand_wildcards=all", nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("list indices: HTTP %d", res.StatusCode)
	}
	var rows []struct {
		Index string `json:"index"`
	}
	if err := json.NewDecoder(res.Body).Decode(&rows); err != nil {
		return fmt.Errorf("list indices: %w", err)
	}
	for _, r := range rows {
		if !strings.HasPrefix(r.Index, prefix) {
			continue
		}
		del, err := http.NewRequestWithContext(ctx, http.MethodDelete, base+"/"+url.PathEscape(r.Index), nil)
		if err != nil {
			return err
		}
		dres, err := http.DefaultClient.Do(del)
		if err != nil {
			return err
		}
		dres.Body.Close()
		if dres.StatusCode != http.StatusOK && dres.StatusCode != http.StatusNotFound {
			return fmt.Errorf("delete index %s: HTTP %d", r.Index, dres.StatusCode)
		}
	}
	return nil
}

// ClickHouseDatabaseName returns a unique ERRATA_CLICKHOUSE_DATABASE for a
// test that runs the metrics projector; the projector creates the database
// (and its generations, <name>_gN) and they are all dropped when the test
// ends.
func ClickHouseDatabaseName(t testing.TB) string {
	t.Helper()
	cfg := Config(t)
	name := "errata_test_" + Suffix()
	t.Cleanup(func() { dropClickHouseDatabases(t, cfg.ClickHouseURL, name) })
	return name
}

// dropClickHouseDatabases drops name and every database whose name starts
// with it (its rebuilt generations); failures are logged, not fatal.
func dropClickHouseDatabases(t testing.TB, rawURL, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, err := ClickHouseOptions(rawURL)
	if err != nil {
		return
	}
	admin, err := clickhouse.Open(opts)
	if err != nil {
		return
	}
	defer admin.Close()
	rows, err := admin.Query(ctx, "SELECT name FROM system.databases WHERE startsWith(name, ?)", name)
	if err != nil {
		t.Logf("list test databases: %v", err)
		return
	}
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			names = append(names, n)
		}
	}
	// Close drains the result: an error ClickHouse sent after the last
	// row surfaces only there, and the list may be short.
	if err := rows.Close(); err != nil {
		t.Logf("list test databases: %v", err)
	}
	for _, n := range names {
		if err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+n+" SYNC"); err != nil {
			t.Logf("drop %s: %v", n, err)
		}
	}
}
