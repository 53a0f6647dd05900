package main

import (
	"context"
	"fmt"

	"github.com/elastic/go-elasticsearch/v8"

	"github.com/errata-dev/errata/projections/search"
)

// migrateSearch prepares the search projection's first generation: the
// fold's schema, the indices and their aliases.
func migrateSearch(ctx context.Context, e *env) error {
	store, err := e.searchStore()
	if err != nil {
		return err
	}
	return store.Prepare(ctx, 1, true)
}

// elasticsearch returns a client for ERRATA_ELASTICSEARCH_URL.
func (e *env) elasticsearch() (*elasticsearch.Client, error) {
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{e.cfg.ElasticsearchURL}})
	if err != nil {
		return nil, fmt.Errorf("elasticsearch client: %w", err)
	}
	return es, nil
}

// searcher is the corpus search for the public GraphQL API: it reads
// through the alias, so it follows `errata replay` switches by itself.
func (e *env) searcher(context.Context) (*search.Searcher, error) {
	es, err := e.elasticsearch()
	if err != nil {
		return nil, err
	}
	return search.NewSearcher(es, search.AliasName(e.cfg.SearchIndexPrefix)), nil
}

// analysisSearcher is the search of COMPLETE verdict analyses (public
// GraphQL searchAnalyses), through its alias.
func (e *env) analysisSearcher(context.Context) (*search.AnalysisSearcher, error) {
	es, err := e.elasticsearch()
	if err != nil {
		return nil, err
	}
	return search.NewAnalysisSearcher(es, search.AnalysisAliasName(e.cfg.SearchIndexPrefix)), nil
}
