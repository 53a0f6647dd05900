package graphql

//go:generate go run github.com/99designs/gqlgen@v0.17.95 generate --config gqlgen.yml
