// Package graphql is the public GraphQL API (gqlgen): the schema in
// schema.graphqls, its resolvers over the serving projection, the search
// corpus and the analysts' metrics, the limits every query is held to, and
// the self-hosted explorer. README.md lists what it adds to the OpenErrata
// schema.
package graphql

//go:generate go run github.com/99designs/gqlgen@v0.17.95 generate --config gqlgen.yml
